#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/distributed_values.hpp>

namespace troupe {

/// What a multi-step loop (TPUExtended::experimental_run_steps_on_iterator,
/// TensorFlow 1's MultiStepContext) hands back: the outputs the step function
/// marked on the last step it ran, and how many steps ran.
///
/// The step function calls set_last_step_output on each replica; every step
/// overwrites the previous one's value. With a reduce op the replicas' values
/// are reduced across replicas when the loop returns (last_step_output);
/// without, each replica's value is kept (last_step_per_replica_output).
class MultiStepContext {
public:
  /// A loop over `replicas` local replicas whose ids start at `first_replica`.
  MultiStepContext(int replicas, int first_replica) : replicas_(replicas), first_replica_(first_replica) {}
  MultiStepContext(const MultiStepContext&) = delete;
  MultiStepContext& operator=(const MultiStepContext&) = delete;
  MultiStepContext(MultiStepContext&& other) noexcept;
  MultiStepContext& operator=(MultiStepContext&&) = delete;

  /// Replica context only (inside the step function): records this
  /// replica's `output` under `name`. Every replica must use the same
  /// `reduce_op` for a name (Error(invalid_argument) naming it otherwise).
  void set_last_step_output(const std::string& name, const Tensor& output,
                            std::optional<ReduceOp> reduce_op = std::nullopt);

  /// The reduced value of `name` (set with a reduce op), after the loop.
  /// Error(not_found) naming the outputs that exist when there is none.
  [[nodiscard]] const Tensor& last_step_output(const std::string& name) const;
  /// Each replica's value of `name` (set without a reduce op), after the loop.
  [[nodiscard]] const PerReplica<Tensor>& last_step_per_replica_output(const std::string& name) const;
  /// The names of the outputs set, sorted.
  [[nodiscard]] std::vector<std::string> output_names() const;

  /// Steps the loop ran: `iterations`, or fewer when the input ran out.
  [[nodiscard]] int steps_run() const noexcept { return steps_run_; }

private:
  friend class TPUExtended;
  struct Pending {
    std::optional<ReduceOp> reduce_op;
    std::vector<std::optional<Tensor>> values; // by local replica
  };

  /// On replica `replica` (local index) after its last step: all-reduces its
  /// outputs that have a reduce op, in name order (every replica sets the
  /// same names); replica 0 keeps the results.
  void reduce_on_replica(int replica);
  /// After the loop: keeps the per-replica values of the outputs without a reduce op.
  void finish();
  [[nodiscard]] std::string names_text() const;

  int replicas_;
  int first_replica_;
  int steps_run_ = 0;
  std::mutex mutex_; // replicas set outputs from their own threads
  std::map<std::string, Pending> pending_;
  std::map<std::string, Tensor> reduced_;
  std::map<std::string, PerReplica<Tensor>> per_replica_;
};

} // namespace troupe

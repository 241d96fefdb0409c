#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/strategies/device_assignment.hpp>
#include <troupe/strategies/distributed_dataset.hpp>
#include <troupe/strategies/multi_step_context.hpp>
#include <troupe/strategies/strategy_extended.hpp>

namespace troupe {

namespace internal {
class LocalReplicasExtended;
} // namespace internal

/// TPUStrategy's StrategyExtended (tf.distribute's TPUExtended): the replicas
/// of a device assignment on the emulated TPU cores of this host, and the
/// multi-step loop that runs `steps_per_run` steps per host round trip.
///
/// Each replica is an actor on its first logical core (a replica of several
/// cores keeps the others for experimental_split_to_logical_devices and the
/// like); collectives between replicas are those of MirroredStrategy, with
/// TPU rules: all_gather and gather need identical shapes on every replica.
class TPUExtended final : public StrategyExtended {
public:
  /// `assignment` nullopt: one replica per core of the slice, in task then
  /// ordinal order (TensorFlow's default).
  TPUExtended(Runtime& runtime, Topology topology, std::optional<DeviceAssignment> assignment, int steps_per_run);
  ~TPUExtended() override;

  /// Spawns the replicas; called once the owning Strategy exists.
  void start();

  [[nodiscard]] int num_replicas_in_sync() const override { return num_replicas_; }
  [[nodiscard]] const std::vector<DeviceSpec>& worker_devices() const override { return devices_; }
  std::vector<std::exception_ptr> call_for_each_replica(const std::function<void(int)>& body) override;
  [[nodiscard]] std::string strategy_name() const override { return "TPUStrategy"; }
  [[nodiscard]] Runtime* runtime() const override { return &runtime_; }
  [[nodiscard]] bool requires_identical_shapes() const override { return true; }
  /// The slice's hosts (the TF_CONFIG cluster's worker tasks) and this one's index.
  [[nodiscard]] int num_workers() const override;
  [[nodiscard]] int worker_index() const override;

  /// Steps the host hands the cores per round trip (the v1 constructor's
  /// steps_per_run; 1 for the v2 form).
  [[nodiscard]] int steps_per_run() const noexcept { return steps_per_run_; }
  /// The assignment the strategy was made with; nullopt for the default one.
  [[nodiscard]] const std::optional<DeviceAssignment>& experimental_device_assignment() const noexcept {
    return assignment_;
  }
  /// The slice's topology (initialize_tpu_system's).
  [[nodiscard]] const Topology& topology() const noexcept { return topology_; }
  /// Logical cores per replica (1 without model parallelism).
  [[nodiscard]] int num_cores_per_replica() const noexcept { return cores_per_replica_; }
  /// Local replica `replica`'s logical cores: its devices on this host, in logical-core order.
  [[nodiscard]] const std::vector<DeviceSpec>& logical_devices(int replica) const;

  /// Runs `fn(MultiStepContext&, inputs)` on every replica for `iterations`
  /// steps of `iterator` (default steps_per_run()) with one host round trip:
  /// the host takes the steps' inputs from the iterator, hands all of them
  /// to the replicas at once and gets control back after the last
  /// (TensorFlow 1's experimental_run_steps_on_iterator). Stops early, with
  /// fewer steps, when the iterator runs out; MultiStepContext::steps_run()
  /// says how many ran (0: the iterator was already at its end). Cross-replica context only.
  template <class Fn>
  MultiStepContext experimental_run_steps_on_iterator(Fn&& fn, DistributedIterator& iterator,
                                                      std::optional<int> iterations = std::nullopt);

  /// Host round trips made so far (one per strategy.run, one per
  /// experimental_run_steps_on_iterator), and the steps they ran.
  [[nodiscard]] uint64_t host_round_trips() const noexcept { return round_trips_.load(); }
  [[nodiscard]] uint64_t steps_run() const noexcept { return steps_.load(); }

private:
  /// The per-replica inputs of up to `iterations` steps, taken on the host.
  [[nodiscard]] std::vector<PerReplica<Element>> take_steps(DistributedIterator& iterator, int iterations,
                                                            const char* method) const;
  /// Runs `body(replica, step)` for every step on every replica in one round trip.
  void run_steps(int steps, const std::function<void(int, int)>& body);

  Runtime& runtime_;
  Topology topology_;
  std::optional<DeviceAssignment> assignment_;
  int steps_per_run_;
  int num_replicas_ = 0;
  int cores_per_replica_ = 1;
  std::vector<DeviceSpec> devices_;
  std::vector<std::vector<DeviceSpec>> logical_devices_;
  std::unique_ptr<internal::LocalReplicasExtended> replicas_;
  std::atomic<uint64_t> round_trips_{0};
  std::atomic<uint64_t> steps_{0};
  int steps_in_round_trip_ = 1;
};

template <class Fn>
MultiStepContext TPUExtended::experimental_run_steps_on_iterator(Fn&& fn, DistributedIterator& iterator,
                                                                  std::optional<int> iterations) {
  const auto steps = take_steps(iterator, iterations.value_or(steps_per_run_), "experimental_run_steps_on_iterator");
  MultiStepContext context(static_cast<int>(devices_.size()), worker_index() * static_cast<int>(devices_.size()));
  context.steps_run_ = static_cast<int>(steps.size());
  const int n = static_cast<int>(steps.size());
  if (n > 0)
    run_steps(n, [&](int replica, int step) {
      std::invoke(fn, context, detail::unwrap(steps[static_cast<size_t>(step)], replica));
      // The outputs to reduce are reduced on the cores, in the same round trip.
      if (step == n - 1)
        context.reduce_on_replica(replica);
    });
  context.finish();
  return context;
}

} // namespace troupe

#pragma once

#include <concepts>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/device_spec.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/datasets/tensor_spec.hpp>
#include <troupe/strategies/distributed_values.hpp>
#include <troupe/strategies/fwd.hpp>
#include <troupe/strategies/reduce_destination.hpp>
#include <troupe/strategies/run_support.hpp>
#include <troupe/strategies/variable.hpp>
#include <troupe/strategies/variable_colocation.hpp>

namespace troupe {

namespace internal {
class CrossDeviceOps;
} // namespace internal

/// Strategy-specific operations and facts (tf.distribute.StrategyExtended).
/// Each concrete strategy has its own; reach it through strategy.extended().
class StrategyExtended {
public:
  virtual ~StrategyExtended();

  /// Replicas across all workers whose values are aggregated.
  [[nodiscard]] virtual int num_replicas_in_sync() const = 0;
  /// The devices this worker's replicas run on, in replica order.
  [[nodiscard]] virtual const std::vector<DeviceSpec>& worker_devices() const = 0;
  /// The devices variables are placed on (the worker devices for mirrored strategies).
  [[nodiscard]] virtual const std::vector<DeviceSpec>& parameter_devices() const { return worker_devices(); }

  /// Runs `body(i)` for each local replica i in replica context and waits for
  /// all; returns each replica's exception (null on success).
  virtual std::vector<std::exception_ptr> call_for_each_replica(const std::function<void(int)>& body) = 0;

  /// Workers (processes) taking part, and this one's index among them.
  [[nodiscard]] virtual int num_workers() const { return 1; }
  [[nodiscard]] virtual int worker_index() const { return 0; }

  /// The runtime the replicas run on (nullptr for the default strategy, which
  /// runs everything on the calling thread).
  [[nodiscard]] virtual Runtime* runtime() const { return nullptr; }

  /// The strategy's name for messages: "MirroredStrategy".
  [[nodiscard]] virtual std::string strategy_name() const = 0;

  /// The strategy that owns this object.
  [[nodiscard]] Strategy& container_strategy() const noexcept { return *container_; }
  /// Refuses Strategy::create_variable where this strategy makes its
  /// variables another way (ParameterServerStrategy: on the servers).
  virtual void check_variable_creation() const {}
  /// TPUStrategy's rule: all_gather and gather need the same shape on every
  /// replica, and distributed datasets give static batches.
  [[nodiscard]] virtual bool requires_identical_shapes() const { return false; }

  // -- agreement across workers -----------------------------------------------------

  /// Checks that every worker passes the same `value` for the setting `name`
  /// (a job flag such as "--batch", a model or optimizer name, a dataset's
  /// element spec), so that workers started with different settings fail
  /// together instead of training apart or waiting for each other.
  ///
  /// Cross-replica context only; one collective across workers, so every
  /// worker must call it at the same point, as with strategy.run. When some
  /// worker's value differs from the chief's (worker 0's), every worker
  /// throws Error(failed_precondition) naming the setting, the chief's value
  /// and each differing worker ("worker:1") with its value. On a
  /// single-worker strategy it compares nothing. Under ParameterServerStrategy
  /// across processes every task calls it (the chief, the workers and the
  /// parameter servers, before Runtime::serve()) and all are compared with the
  /// chief ("the tasks differ: ... on ps:0"); a worker that rejoins later is
  /// compared when it calls it, and refused alone if it differs. Values are
  /// compared as text: integers in decimal, floating-point values as the
  /// shortest text that reads back bitwise ("0.003"), specs as
  /// TensorSpec::to_string / ElementSpec::to_string.
  void check_same_across_workers(const std::string& name, const std::string& value);
  void check_same_across_workers(const std::string& name, const char* value) {
    check_same_across_workers(name, std::string(value));
  }
  void check_same_across_workers(const std::string& name, bool value) {
    check_same_across_workers(name, std::string(value ? "true" : "false"));
  }
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  void check_same_across_workers(const std::string& name, T value) {
    check_same_across_workers(name, std::to_string(value));
  }
  void check_same_across_workers(const std::string& name, double value);
  void check_same_across_workers(const std::string& name, const TensorSpec& spec);
  void check_same_across_workers(const std::string& name, const ElementSpec& spec);
  /// Several settings in one collective; the error names every one that differs.
  void check_same_across_workers(const std::vector<std::pair<std::string, std::string>>& settings);

  // -- variables ------------------------------------------------------------------

  /// Updates `variable`'s copies with `fn(const Tensor& copy, args...) -> Tensor`
  /// (tf.distribute.StrategyExtended.update). In cross-replica context (the
  /// strategy's scope, merge_call's function) fn runs once per local copy, in
  /// replica order, and DistributedValues arguments are unwrapped to that
  /// copy's replica component, other arguments passed as they are; this is
  /// how a merge_call function updates a variable with aggregated values. In
  /// replica context fn updates only the calling replica's copy (TensorFlow's
  /// ReplicaContext._update): no aggregation, so an ON_WRITE variable stays in
  /// sync only if every replica computes the same update. fn's result must
  /// have the variable's dtype and shape (errors name the variable). All
  /// results are computed before any copy changes, so a throwing fn changes nothing.
  template <class Fn, class... Args>
  void update(Variable& variable, Fn&& fn, const Args&... args);

  /// Reduces `value` (one component per local replica) and places the result
  /// on `destinations` (tf.distribute.StrategyExtended.reduce_to): one
  /// component per destination device, sharing one buffer. Cross-replica
  /// context only; the components are this process's, so they are reduced
  /// directly, as Strategy::reduce does (wide accumulation for small dtypes).
  [[nodiscard]] Mirrored<Tensor> reduce_to(ReduceOp op, const DistributedValues<Tensor>& value,
                                           const ReduceDestination& destinations);
  /// A value that is the same on every replica: MEAN returns it, SUM over
  /// more than one replica is Error(invalid_argument), as in TensorFlow.
  [[nodiscard]] Mirrored<Tensor> reduce_to(ReduceOp op, const Tensor& value,
                                           const ReduceDestination& destinations);

  /// reduce_to for several values at once (tf.distribute.StrategyExtended.batch_reduce_to).
  /// Every value and destination is checked and every result computed before
  /// any is returned, so it either reduces all or throws. In cross-replica
  /// context the values are local tensors and reduced directly: packing them
  /// into one buffer would only copy them once more (no wire to cross yet).
  [[nodiscard]] std::vector<Mirrored<Tensor>>
  batch_reduce_to(ReduceOp op,
                  const std::vector<std::pair<PerReplica<Tensor>, ReduceDestination>>& value_destination_pairs);

  /// While the returned object lives, variables created by this strategy are
  /// placed with `variable` (tf.distribute.StrategyExtended.colocate_vars_with).
  /// Call inside the strategy's scope; `variable` must be this strategy's.
  [[nodiscard]] VariableColocation colocate_vars_with(const Variable& variable);

protected:
  StrategyExtended();

  friend class Strategy;
  // Names its ShardedVariables as Strategy::create_variable names variables.
  friend class ParameterServerStrategy;
  /// Makes `owner` the container strategy of `inner`, a StrategyExtended that
  /// serves part of this one's replicas (ParameterServerStrategy's per-worker groups).
  static void share_container(StrategyExtended& inner, Strategy& owner) noexcept { inner.container_ = &owner; }
  Strategy* container_ = nullptr;
  /// How values are combined across replicas and workers; each subclass's
  /// constructor sets it (TensorFlow's CrossDeviceOps of the strategy).
  std::unique_ptr<internal::CrossDeviceOps> cross_device_ops_;
  /// check_same_across_workers after its context check: throws the agreed
  /// Error when some worker's settings differ. By default one collective
  /// across the workers (nothing with one worker); ParameterServerStrategy
  /// asks its chief, which hears every worker and parameter server.
  virtual void agree_on_settings(const std::vector<std::pair<std::string, std::string>>& settings);

private:
  friend class VariableColocation;
  // Checkpoint::restore broadcasts the chief's values across workers.
  friend class Checkpoint;
  struct VariableBook;

  [[nodiscard]] internal::CrossDeviceOps& cross_device_ops() const noexcept {
    return *cross_device_ops_;
  }

  /// TensorFlow's unique_name: "w", "w_1", "w_2", ... (names compare case-insensitively).
  [[nodiscard]] std::string unique_variable_name(const std::string& base);
  /// Where a new variable's copies go: the innermost colocation target's
  /// devices, else parameter_devices().
  [[nodiscard]] std::vector<DeviceSpec> variable_devices() const;
  void end_colocation() noexcept;
  /// Runs `fn(local_replica, copy)` for the copies update() concerns and stores the results.
  void update_copies(Variable& variable, const std::function<Tensor(int, const Tensor&)>& fn);
  [[nodiscard]] std::vector<DeviceSpec> destination_devices(const ReduceDestination& destination,
                                                            const char* method) const;
  void check_components(const DistributedValues<Tensor>& value, const char* method) const;

  std::unique_ptr<VariableBook> book_;
};

template <class Fn, class... Args>
void StrategyExtended::update(Variable& variable, Fn&& fn, const Args&... args) {
  update_copies(variable, [&]([[maybe_unused]] int replica, const Tensor& copy) -> Tensor {
    using Result = std::invoke_result_t<Fn&, const Tensor&, detail::unwrapped_t<Args>...>;
    static_assert(std::is_convertible_v<Result, Tensor>, "update: fn must return the new Tensor value");
    return std::invoke(fn, copy, detail::unwrap(args, replica)...);
  });
}

} // namespace troupe

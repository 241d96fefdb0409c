#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/datasets/fwd.hpp>
#include <troupe/datasets/input_context.hpp>
#include <troupe/net/fwd.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/distributed_values.hpp>
#include <troupe/strategies/fwd.hpp>
#include <troupe/strategies/run_support.hpp>
#include <troupe/strategies/value_context.hpp>
#include <troupe/strategies/variable.hpp>

namespace troupe {

/// A way to distribute computation across replicas (tf.distribute.Strategy).
///
/// Methods other than run's function body are called in cross-replica context
/// (from application code, or inside strategy.scope()); calling them from a
/// replica function is Error(failed_precondition) with TensorFlow's wording.
/// A Strategy is used from one application thread at a time.
class Strategy {
public:
  virtual ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  /// Calls `fn` once per replica, in replica context, and waits for all.
  /// DistributedValues arguments are unwrapped to each replica's component;
  /// other arguments are passed to every replica as they are. Returns the
  /// results with fn's structure and a PerReplica at each leaf (void for
  /// void). If a replica throws, run rethrows it (the first by replica id);
  /// failed collectives throw Error naming the replicas and what each sent.
  template <class Fn, class... Args>
  auto run(Fn&& fn, const Args&... args);

  /// Calls `fn(ValueContext)` for each replica (here, in the caller) and
  /// returns its results as distributed values.
  template <class Fn>
  auto experimental_distribute_values_from_function(Fn&& fn);

  /// Distributes a dataset batched by the global batch size
  /// (tf.distribute.Strategy.experimental_distribute_dataset): auto-shards it
  /// across workers per its AutoShardPolicy, splits each global batch over the
  /// replicas as TensorFlow does (trailing replicas may get empty batches) and
  /// prefetches. Elements without a batch dimension are Error(invalid_argument).
  [[nodiscard]] DistributedDataset experimental_distribute_dataset(const Dataset& dataset,
                                                                   const InputOptions& options = {});

  /// Calls `fn` once per input pipeline (one per worker) with its InputContext;
  /// the dataset it returns yields per-replica batches, given to this worker's
  /// replicas in turn (tf.distribute.Strategy.distribute_datasets_from_function).
  /// No auto-sharding: shard with the context's ids.
  [[nodiscard]] DistributedDataset
  distribute_datasets_from_function(const std::function<Dataset(const InputContext&)>& fn,
                                    const InputOptions& options = {});

  /// Reduces a distributed value across replicas. With an axis, each
  /// replica's value is first reduced along it, and MEAN divides by the total
  /// number of elements along that axis over all replicas (so uneven
  /// per-replica batches weigh right).
  [[nodiscard]] Tensor reduce(ReduceOp op, const DistributedValues<Tensor>& value,
                              std::optional<int> axis = std::nullopt);
  /// A non-distributed value is the same on every replica: MEAN returns it;
  /// SUM over more than one replica is Error(invalid_argument), as in TensorFlow.
  [[nodiscard]] Tensor reduce(ReduceOp op, const Tensor& value, std::optional<int> axis = std::nullopt);

  /// The components of `value` on this worker's replicas, in replica order.
  template <class T>
  [[nodiscard]] std::vector<T> experimental_local_results(const DistributedValues<T>& value) const {
    return value.values();
  }
  [[nodiscard]] std::vector<Tensor> experimental_local_results(const Tensor& value) const { return {value}; }
  /// A variable's copies on this worker's replicas, in replica order.
  [[nodiscard]] std::vector<Tensor> experimental_local_results(const Variable& variable) const;
  template <class T>
  [[nodiscard]] std::vector<std::vector<T>>
  experimental_local_results(const std::vector<PerReplica<T>>& values) const;

  /// Concatenates every replica's value along `axis` (tf.distribute.Strategy.gather).
  [[nodiscard]] Tensor gather(const DistributedValues<Tensor>& value, int axis);

  /// Number of replicas whose gradients are aggregated.
  [[nodiscard]] int num_replicas_in_sync() const;

  /// Enters this strategy's cross-replica context until the returned scope is destroyed.
  [[nodiscard]] StrategyScope scope();

  /// Creates a variable with one copy per local replica, each starting as
  /// `initial` (tf.Variable(initial, ...) inside strategy.scope()). Call it in
  /// this strategy's cross-replica context: inside scope() or merge_call's
  /// function (the default strategy needs no scope). Outside any scope, under
  /// another strategy's scope or in replica context it is
  /// Error(failed_precondition) with TensorFlow's text. AUTO synchronization
  /// becomes ON_WRITE; NONE is accepted only with one replica; an ON_READ
  /// variable cannot be trainable. Names are made unique per strategy
  /// ("Variable", "Variable_1", ...). See Variable for what reads and writes do.
  [[nodiscard]] Variable create_variable(const Tensor& initial, const VariableOptions& options = {});

  /// The cluster resolver of multi-worker strategies; nullptr for single-worker ones.
  [[nodiscard]] virtual const ClusterResolver* cluster_resolver() const noexcept { return nullptr; }

  /// Strategy-specific operations (tf.distribute.StrategyExtended).
  [[nodiscard]] StrategyExtended& extended() noexcept { return *extended_; }
  [[nodiscard]] const StrategyExtended& extended() const noexcept { return *extended_; }

  /// "MirroredStrategy(devices=[CPU:0, CPU:1])", used in error messages.
  [[nodiscard]] std::string describe() const;

protected:
  explicit Strategy(std::unique_ptr<StrategyExtended> extended);

private:
  template <class A>
  void check_distributed_argument(const A& arg, int replicas) const {
    if constexpr (detail::is_distributed<A>::value)
      if (static_cast<int>(arg.size()) != replicas)
        fail_argument_replicas(static_cast<int>(arg.size()));
  }
  [[noreturn]] void fail_argument_replicas(int size) const;

  /// This worker's replicas (all of them, except in multi-worker strategies).
  [[nodiscard]] int num_local_replicas() const;
  /// The global id of this worker's first replica (worker index x local replicas).
  [[nodiscard]] int first_local_replica_id() const;

  /// Runs `body(i)` for every replica i and turns failures into one exception.
  void run_each_replica(const std::function<void(int)>& body);

  std::unique_ptr<StrategyExtended> extended_;
};

template <class Fn, class... Args>
auto Strategy::run(Fn&& fn, const Args&... args) {
  using Result = std::invoke_result_t<Fn&, detail::unwrapped_t<Args>...>;
  const int n = num_local_replicas();
  (check_distributed_argument(args, n), ...);
  if constexpr (std::is_void_v<Result>) {
    run_each_replica([&]([[maybe_unused]] int replica) { std::invoke(fn, detail::unwrap(args, replica)...); });
  } else {
    using Normal = detail::normalized_t<Result>;
    std::vector<std::optional<Normal>> slots(static_cast<std::size_t>(n));
    run_each_replica([&]([[maybe_unused]] int replica) {
      slots[static_cast<std::size_t>(replica)].emplace(
        detail::normalize(std::invoke(fn, detail::unwrap(args, replica)...)));
    });
    std::vector<Normal> results;
    results.reserve(slots.size());
    for (auto& slot : slots)
      results.push_back(std::move(*slot));
    return detail::regroup(std::move(results));
  }
}

template <class Fn>
auto Strategy::experimental_distribute_values_from_function(Fn&& fn) {
  detail::require_cross_replica(*this, "experimental_distribute_values_from_function");
  const int n = num_replicas_in_sync();
  // This worker's replicas only, under their global ids.
  const int local = num_local_replicas();
  const int first = first_local_replica_id();
  using Normal = detail::normalized_t<std::invoke_result_t<Fn&, const ValueContext&>>;
  std::vector<Normal> values;
  values.reserve(static_cast<std::size_t>(local));
  for (int i = first; i < first + local; ++i)
    values.push_back(detail::normalize(std::invoke(fn, ValueContext{i, n})));
  return detail::regroup(std::move(values));
}

template <class T>
std::vector<std::vector<T>>
Strategy::experimental_local_results(const std::vector<PerReplica<T>>& values) const {
  // TensorFlow's shape: one list per replica, each holding that replica's components.
  std::vector<std::vector<T>> out;
  if (values.empty())
    return out;
  out.resize(values.front().size());
  for (std::size_t r = 0; r < out.size(); ++r)
    for (const auto& v : values)
      out[r].push_back(v.values().at(r));
  return out;
}

} // namespace troupe

#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <vector>

#include <troupe/datasets/dataset.hpp>
#include <troupe/datasets/input_context.hpp>
#include <troupe/strategies/closure_codec.hpp>
#include <troupe/strategies/distributed_dataset.hpp>
#include <troupe/strategies/parameter_server_strategy.hpp>
#include <troupe/strategies/per_worker.hpp>
#include <troupe/strategies/remote_function.hpp>
#include <troupe/strategies/remote_value.hpp>

namespace troupe {

namespace internal {
class CoordinatorHandle;
} // namespace internal

/// The datasets a ClusterCoordinator made for its workers, one per worker
/// (TF's PerWorkerDistributedDataset): each worker builds its own, the first
/// time a scheduled function needs it.
class PerWorkerDataset {
public:
  explicit PerWorkerDataset(uint64_t resource_id) noexcept : resource_id_(resource_id) {}

  /// A new iterator on every worker's dataset (TF's iter(per_worker_dataset)):
  /// pass it to schedule where the function takes a DistributedIterator&.
  [[nodiscard]] PerWorker<DistributedIterator> iterator() const;

  [[nodiscard]] uint64_t resource_id() const noexcept { return resource_id_; }

private:
  uint64_t resource_id_;
};

/// Schedules functions on the workers of a ParameterServerStrategy's cluster
/// (tf.distribute.experimental.coordinator.ClusterCoordinator).
///
/// schedule queues a function and returns at once with its RemoteValue; each
/// function runs on one worker, one at a time per worker; a worker that is
/// lost while running one has it run again on another, and its variable
/// updates take effect exactly once (docs/design.md, "Exactly-once updates").
/// The first error of a function is raised by the next join or done (or
/// schedule), once; functions not yet run are cancelled and their fetch
/// says so. A lost parameter server fails schedule, join and fetch with an
/// error naming it. Use from one application thread at a time.
class ClusterCoordinator {
public:
  /// One per strategy at a time (Error(failed_precondition) for a second).
  explicit ClusterCoordinator(ParameterServerStrategy& strategy);
  /// Cancels what has not run yet; functions running go on on their workers.
  ~ClusterCoordinator();
  ClusterCoordinator(const ClusterCoordinator&) = delete;
  ClusterCoordinator& operator=(const ClusterCoordinator&) = delete;

  [[nodiscard]] ParameterServerStrategy& strategy() const noexcept { return *strategy_; }

  /// Queues `fn(args...)` on whichever worker is free first; blocks only while
  /// the queue is full (TF's limit, 256Ki functions). A PerWorker<T> argument
  /// becomes the chosen worker's component; a RemoteValue argument is
  /// Error(invalid_argument) (fetch it first). Raises an earlier function's
  /// error as join does.
  template <class R, class... P, class... A>
  RemoteValue<std::decay_t<R>> schedule(const RemoteFunction<R(P...)>& fn, const A&... args);

  /// Blocks until every function scheduled so far has run; raises the first
  /// error of one of them (once), or Error(peer_lost) for a lost parameter server.
  void join();

  /// Whether every function scheduled so far has run; raises as join does.
  [[nodiscard]] bool done();

  /// Makes a dataset on every worker with `fn`, called there with an
  /// InputContext (num_input_pipelines = workers, input_pipeline_id = this
  /// worker's index, num_replicas_in_sync = its replicas) the first time a
  /// function needs it (TF's create_per_worker_dataset). `fn` returns a
  /// DistributedDataset (strategy.experimental_distribute_dataset or
  /// distribute_datasets_from_function: no sharding across workers, batches
  /// split over the worker's replicas) or a Dataset (each element given to
  /// the worker's replicas in turn). Across processes every process must
  /// make its per-worker datasets in the same order.
  template <class Fn>
  PerWorkerDataset create_per_worker_dataset(Fn fn);

private:
  struct Impl;

  [[nodiscard]] std::pair<uint64_t, std::shared_ptr<internal::ClosureOutcome>>
  schedule_bytes(const std::shared_ptr<const internal::RegisteredFunction>& registration, const std::string& name,
                 std::vector<uint8_t> args);
  [[nodiscard]] internal::Executor& executor() const noexcept;
  /// The parameter-server cluster this coordinator schedules on.
  [[nodiscard]] internal::PsCluster* ps_cluster() const noexcept;
  /// The coordinator actor's handle; Error(failed_precondition) off the chief.
  [[nodiscard]] internal::CoordinatorHandle& handle(const char* method) const;
  [[nodiscard]] PerWorkerDataset
  register_dataset(std::function<DistributedDataset(const InputContext&)> make);

  template <class P, class A>
  static void encode_argument(ClosureWriter& writer, const A& arg);

  ParameterServerStrategy* strategy_;
  std::unique_ptr<Impl> impl_;
};

namespace internal {
/// Error(invalid_argument): a RemoteValue given to schedule.
[[noreturn]] void fail_remote_value_argument(const std::string& function, std::size_t position);

template <class T>
struct is_remote_value : std::false_type {};
template <class T>
struct is_remote_value<RemoteValue<T>> : std::true_type {};
template <class T>
struct is_per_worker : std::false_type {};
template <class T>
struct is_per_worker<PerWorker<T>> : std::true_type {};
template <class T>
struct per_worker_value;
template <class T>
struct per_worker_value<PerWorker<T>> {
  using type = T;
};
} // namespace internal

template <class P, class A>
void ClusterCoordinator::encode_argument(ClosureWriter& writer, const A& arg) {
  using Param = std::decay_t<P>;
  if constexpr (internal::is_per_worker<A>::value) {
    static_assert(std::is_same_v<typename internal::per_worker_value<A>::type, Param>,
                  "ClusterCoordinator::schedule: a PerWorker<T> argument needs a parameter of type T& (or T)");
    ClosureCodec<uint8_t>::encode(writer, static_cast<uint8_t>(internal::ArgumentKind::per_worker));
    ClosureCodec<uint64_t>::encode(writer, arg.resource_id());
  } else {
    static_assert(closure_codable<Param>,
                  "ClusterCoordinator::schedule: this argument cannot travel to a worker; pass a Tensor, scalar, "
                  "std::string, std::vector, PerReplica or PerWorker, or specialize troupe::ClosureCodec for it");
    ClosureCodec<uint8_t>::encode(writer, static_cast<uint8_t>(internal::ArgumentKind::value));
    ClosureCodec<Param>::encode(writer, static_cast<const Param&>(Param(arg)));
  }
}

template <class R, class... P, class... A>
RemoteValue<std::decay_t<R>> ClusterCoordinator::schedule(const RemoteFunction<R(P...)>& fn, const A&... args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "ClusterCoordinator::schedule: pass exactly as many arguments as the function takes");
  using Result = std::decay_t<R>;
  [[maybe_unused]] std::size_t position = 0;
  (
    [&] {
      if constexpr (internal::is_remote_value<A>::value)
        internal::fail_remote_value_argument(fn.name(), position);
      ++position;
    }(),
    ...);
  ClosureWriter writer;
  if constexpr (!(internal::is_remote_value<A>::value || ...))
    (encode_argument<P>(writer, args), ...);
  auto [id, outcome] = schedule_bytes(fn.registration(), fn.name(), writer.take());
  auto decode = [name = fn.name()](const std::vector<uint8_t>& bytes) -> Result {
    ClosureReader reader(bytes, "the result of function '" + name + "'");
    if constexpr (std::is_void_v<Result>) {
      reader.expect_end();
    } else {
      Result value = ClosureCodec<Result>::decode(reader);
      reader.expect_end();
      return value;
    }
  };
  return RemoteValue<Result>(executor(), ps_cluster(), id, std::move(outcome), std::move(decode));
}

template <class Fn>
PerWorkerDataset ClusterCoordinator::create_per_worker_dataset(Fn fn) {
  auto* strategy = strategy_;
  return register_dataset([fn = std::move(fn), strategy](const InputContext& context) -> DistributedDataset {
    using Made = std::decay_t<std::invoke_result_t<Fn&, const InputContext&>>;
    if constexpr (std::is_same_v<Made, DistributedDataset>) {
      return fn(context);
    } else {
      static_assert(std::is_same_v<Made, Dataset>,
                    "create_per_worker_dataset: the function returns a DistributedDataset or a Dataset");
      Dataset dataset = fn(context);
      return strategy->distribute_datasets_from_function([dataset](const InputContext&) { return dataset; });
    }
  });
}

} // namespace troupe

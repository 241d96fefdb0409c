#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/device_spec.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/distributed_values.hpp>

namespace troupe {

namespace internal {
class CollectiveAllReduce;
class ReplicaHandle;
class VariableReplicaWrite;
} // namespace internal

/// The replica context (tf.distribute.ReplicaContext): what the function
/// passed to strategy.run sees of its replica and its peers.
///
/// Obtain it with get_replica_context() inside that function. Its collectives
/// suspend the replica's function (never a thread) until every replica has
/// contributed. Call them only from the replica's own function, not from
/// merge_call's function or another thread. A collective that cannot complete (mismatched shapes, dtypes
/// or operations, a replica that skips it or fails, the timeout) throws
/// Error on every replica, naming the replicas and what each sent.
class ReplicaContext {
public:
  /// For troupe's strategies: replica `replica` of `num_replicas` on `device`;
  /// `handle` is null for the default replica context (one replica, collectives are identities).
  ReplicaContext(Strategy& strategy, int replica, int num_replicas, DeviceSpec device,
                 internal::ReplicaHandle* handle);

  // -- properties -------------------------------------------------------------

  [[nodiscard]] int replica_id_in_sync_group() const noexcept { return replica_; }
  [[nodiscard]] int num_replicas_in_sync() const noexcept { return num_replicas_; }
  /// The devices this replica runs on, as strings ("/device:CPU:0" style is TF's; we give "CPU:0").
  [[nodiscard]] std::vector<std::string> devices() const;
  [[nodiscard]] Strategy& strategy() const noexcept { return *strategy_; }

  // -- collectives --------------------------------------------------------------

  /// Reduces `value` across replicas; every replica gets the result. As in
  /// TensorFlow, a MEAN of integers over several replicas is a true division
  /// of their sum, in float64 (int32, int64) or float32 (uint8): 1 and 2
  /// average to 1.5. The integers are cast to that dtype before the
  /// collective, so their sum does not wrap around (TensorFlow's does), and a
  /// mismatch error names that dtype. A SUM keeps the dtype and wraps.
  [[nodiscard]] Tensor all_reduce(ReduceOp op, const Tensor& value);
  /// Reduces a list of tensors in one collective (one message round per replica).
  [[nodiscard]] std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& values);
  /// TensorFlow's string spelling: all_reduce("sum", x).
  [[nodiscard]] Tensor all_reduce(std::string_view op, const Tensor& value);

  /// all_reduce whose result is written into the memory of `values`: when it
  /// returns, every replica's tensors hold the result at the addresses they
  /// had, e.g. a framework's own gradient tensors taken with
  /// Tensor::from_dlpack or Tensor::from_external. Returns handles of that
  /// memory (which a caller that keeps its framework's tensors may drop).
  ///
  /// Each tensor must be the only handle of its bytes: move it in (build the
  /// vector with push_back(std::move(t)); an initializer list copies). The
  /// result is reduced in the first replica's memory and copied into the
  /// others' (one process), and across workers a tensor alone in its pack
  /// (CommunicationOptions::bytes_per_pack) is reduced in its own memory;
  /// packs of several tensors go through one buffer and back (docs/api.md).
  /// Refused, leaving `values` as they were: Error(invalid_argument) for a
  /// shared handle and for a MEAN of integers over several replicas (its
  /// float result does not fit their memory), Error(not_supported) for GPU
  /// memory. It fails as a collective (`values` then empty, the memory an
  /// unspecified partial result) as all_reduce does, and with
  /// Error(key_mismatch) when another replica of this worker called
  /// all_reduce instead. On success it returns once no transport holds a
  /// frame sent out of this memory; docs/api.md says what a failure leaves.
  std::vector<Tensor> all_reduce_in_place(ReduceOp op, std::vector<Tensor>&& values);
  Tensor all_reduce_in_place(ReduceOp op, Tensor&& value);

  /// Concatenates every replica's `value` along `axis`, in replica order.
  /// Shapes may differ only along `axis`.
  [[nodiscard]] Tensor all_gather(const Tensor& value, int axis);
  [[nodiscard]] std::vector<Tensor> all_gather(const std::vector<Tensor>& values, int axis);

  /// Reduces `value` across replicas and gives each replica its block of the
  /// result: replica r gets block r of num_replicas_in_sync() equal blocks
  /// along `axis`, so all_gather(reduce_scatter(op, x, a), a) equals
  /// all_reduce(op, x). Every replica passes the same shape, whose size along
  /// `axis` is a multiple of the replica count. Not in TensorFlow's
  /// ReplicaContext (its collective ops have it): on GPUs with NCCL it is one
  /// ncclReduceScatter, half an all-reduce's traffic; elsewhere an all-reduce
  /// of which each replica keeps its block.
  [[nodiscard]] Tensor reduce_scatter(ReduceOp op, const Tensor& value, int axis = 0);
  [[nodiscard]] std::vector<Tensor> reduce_scatter(ReduceOp op, const std::vector<Tensor>& values, int axis = 0);

  /// Pauses every replica, calls `fn(strategy, PerReplica<Args>...)` once in
  /// cross-replica context with every replica's arguments, and returns its
  /// result to every replica, a PerReplica result unpacked to each replica's
  /// component (tf.distribute.ReplicaContext.merge_call). Every replica must
  /// pass the same argument types; strategy.run cannot be called inside `fn`.
  template <class Fn, class... Args>
  auto merge_call(Fn&& fn, const Args&... args);

private:
  using Erased = std::shared_ptr<const void>;
  using ErasedMerge = std::function<Erased(const std::vector<Erased>&)>;

  [[nodiscard]] std::vector<Tensor> collective(int kind, ReduceOp op, int axis,
                                              const std::vector<Tensor>& values, bool identical_shapes = false);
  /// collective() for the reducing kinds, with TensorFlow's MEAN of integers.
  [[nodiscard]] std::vector<Tensor> reduce_values(int kind, ReduceOp op, int axis, const std::vector<Tensor>& values);
  [[nodiscard]] Erased merge_call_erased(Erased args, ErasedMerge merge, const std::type_info& signature);
  /// Every replica gets replica 0's `values` (of the first worker across
  /// workers): how a multi-worker strategy gives every worker the chief's
  /// initial variable values, as TensorFlow does.
  [[nodiscard]] std::vector<Tensor> broadcast_from_first_replica(const std::vector<Tensor>& values);
  friend class internal::CollectiveAllReduce;
  friend class internal::VariableReplicaWrite; // ONLY_FIRST_REPLICA writes across workers
  /// Throws unless the caller is this replica's own function (collectives
  /// suspend that function; from anywhere else they cannot).
  void require_own_replica(const char* method) const;

  Strategy* strategy_;
  int replica_;
  int num_replicas_;
  DeviceSpec device_;
  internal::ReplicaHandle* handle_;
};

namespace detail {

/// Installs a cross-replica frame of `strategy` while merge_call's function runs.
class CrossReplicaGuard {
public:
  explicit CrossReplicaGuard(Strategy& strategy) noexcept
    : frame_{&strategy, nullptr, true}, installer_(&frame_) {}

private:
  ContextFrame frame_;
  FrameInstaller installer_;
};

} // namespace detail

template <class Fn, class... Args>
auto ReplicaContext::merge_call(Fn&& fn, const Args&... args) {
  using Result = std::invoke_result_t<Fn&, Strategy&, const PerReplica<Args>&...>;
  Strategy* strategy = strategy_;
  // Runs once, on whichever thread completes the merge, with every replica's arguments.
  ErasedMerge merge = [strategy, &fn](const std::vector<Erased>& all) -> Erased {
    detail::CrossReplicaGuard guard(*strategy);
    auto call = [&]<std::size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
      [[maybe_unused]] auto column = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        using A = std::tuple_element_t<K, std::tuple<Args...>>;
        std::vector<A> values;
        values.reserve(all.size());
        for (const auto& a : all)
          values.push_back(std::get<K>(*std::static_pointer_cast<const std::tuple<Args...>>(a)));
        return PerReplica<A>(std::move(values));
      };
      return std::invoke(fn, *strategy, column(std::integral_constant<std::size_t, I>{})...);
    };
    if constexpr (std::is_void_v<Result>) {
      call(std::index_sequence_for<Args...>{});
      return nullptr;
    } else {
      return std::make_shared<const Result>(call(std::index_sequence_for<Args...>{}));
    }
  };
  auto result = merge_call_erased(std::make_shared<const std::tuple<Args...>>(args...), std::move(merge),
                                  typeid(Result (*)(Args...)));
  if constexpr (detail::is_distributed<Result>::value) {
    // As in TensorFlow, a PerReplica result is unpacked: each replica gets its component.
    return std::static_pointer_cast<const Result>(result)->values().at(static_cast<std::size_t>(replica_));
  } else if constexpr (!std::is_void_v<Result>) {
    return Result(*std::static_pointer_cast<const Result>(result));
  }
}

} // namespace troupe

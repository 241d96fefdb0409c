#pragma once

#include <functional>
#include <memory>
#include <typeinfo>
#include <vector>

#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

class FiberCollective;

/// Type-erased merge_call arguments and result (owned by the strategy layer).
using MergeValue = std::shared_ptr<const void>;

/// Runs once, in cross-replica context, over every replica's merge arguments.
using MergeFunction = std::function<MergeValue(const std::vector<MergeValue>& per_replica_args)>;

/// What a replica's function asks of its group.
struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::all_reduce;
  ReduceOp op = ReduceOp::SUM;
  int axis = 0;
  std::vector<Tensor> tensors;
  /// all_gather only: every replica must send the same shapes (TPUStrategy),
  /// not just shapes that differ only along the axis.
  bool identical_shapes = false;
  /// all_reduce only: write the result into `tensors`' own memory
  /// (ReplicaContext::all_reduce_in_place); every replica must ask the same.
  bool in_place = false;
  MergeValue merge_args;   ///< merge_call only
  MergeFunction merge_fn;  ///< merge_call only
  /// merge_call only: the type of (arguments, result), which every replica must share.
  const std::type_info* merge_signature = nullptr;
};

/// What a completed collective hands back to one replica.
struct CollectiveResult {
  std::vector<Tensor> tensors;
  MergeValue merge_result;
  /// A collective of GPU tensors: the replica's fiber runs its share of
  /// this plan, whose outputs become `tensors`.
  std::shared_ptr<FiberCollective> on_fiber;
};

/// The running replica as its function sees it. Valid only on that replica's
/// fiber, while its function runs.
class ReplicaHandle {
public:
  virtual ~ReplicaHandle() = default;

  [[nodiscard]] virtual int replica_id() const noexcept = 0;

  /// Issues a collective and suspends the replica's function until it
  /// completes; throws Error (naming every replica and what each sent) when
  /// it fails. Must be called from the replica's own function.
  virtual CollectiveResult collective(CollectiveRequest request) = 0;
};

/// The strategy layer's context frame for the calling thread (opaque here).
/// A replica actor installs its replica's frame around every resume of the
/// replica's fiber, because fibers migrate between threads.
[[nodiscard]] void* current_frame() noexcept;
void set_current_frame(void* frame) noexcept;

} // namespace troupe::internal

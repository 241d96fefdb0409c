#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <troupe/actors/fibers/fiber_collective.hpp>
#include <troupe/actors/gpu/nccl_messages.hpp>
#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/collectives/reduce_op.hpp>
#include <troupe/core/device_spec.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

class GpuDeviceMemory;

/// A collective of GPU tensors run by NCCL: each local replica's device
/// actor issues its rank's calls, as one NCCL group, on its stream. The
/// collective group builds it once the participants agreed (fingerprints
/// checked: NCCL never sees mismatched calls) and hands it to each local
/// replica, whose fiber allocates its outputs and sends the group to its
/// device actor. Ranks are global replica ids: local replica i of a worker
/// with `first_rank` is rank first_rank + i.
///
/// - all_reduce: every tensor in one group (ncclAllReduce each; MEAN is
///   ncclAvg); with `bytes_per_pack`, small tensors are first copied into
///   packs on the stream, one ncclAllReduce per pack, and the outputs are
///   views of the packs (TensorFlow's packing of small tensors).
/// - all_gather: ncclAllGather when every rank sends the same shape; grouped
///   ncclBroadcasts from each rank into its place otherwise
///   (`gather_rows[r]`: rank r's size along the axis, per tensor), as
///   TensorFlow does. Along an inner axis the ranks' blocks land in a
///   staging buffer and a 2D copy per rank places them.
/// - broadcast: rank 0's tensors to every rank (ncclBroadcast).
class NcclCollective final : public FiberCollective {
public:
  struct Plan {
    CollectiveKind kind = CollectiveKind::all_reduce;
    ReduceOp op = ReduceOp::SUM;
    int axis = 0;  ///< all_gather
    NcclCommunicatorSpec communicator;  ///< rank: the first local replica's
    /// all_gather: per rank, per tensor, its size along the axis.
    std::vector<std::vector<int64_t>> gather_rows;
    std::chrono::nanoseconds timeout{0};
    /// all_reduce: consecutive tensors of one dtype are copied into packs of
    /// at most this many bytes, each reduced in place by one call (0: one
    /// call per tensor).
    int64_t bytes_per_pack = 0;
    std::string what;
    /// Told when this replica's group failed (the collective, communicator
    /// name, why), so that the other ranks' groups, here and on the other
    /// workers, are aborted rather than left waiting.
    std::function<void(const CollectiveKey&, const std::string&, const std::string&)> on_failure;
    CollectiveKey key;
  };

  /// Checks what NCCL cannot take (dtypes, axes) and throws
  /// Error(not_supported / invalid_argument) naming it and the fix.
  NcclCollective(Plan plan, std::vector<std::vector<Tensor>> inputs, std::vector<DeviceSpec> devices);

  [[nodiscard]] std::vector<Tensor> run(int replica, const std::function<void(const Completion&)>& await) override;

private:
  /// all_reduce with bytes_per_pack: the calls, the outputs (views of the
  /// packs), and the copies into the packs launched on `gpu`.
  void pack_all_reduce(GpuDeviceMemory& gpu, const DeviceSpec& device, const std::vector<Tensor>& inputs,
                       std::vector<Tensor>& outputs, std::vector<NcclCall>& calls) const;

  Plan plan_;
  std::vector<std::vector<Tensor>> inputs_;  // [local replica][tensor]
  std::vector<DeviceSpec> devices_;          // [local replica]
};

} // namespace troupe::internal

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace troupe::internal {

/// What a worker tells the others about a collective that NCCL runs across
/// workers, in its announce frame (AnnouncePayload::communicator):
/// rank 0 names the communicator (GpuCollectives::announce), every worker
/// says which communicator it gave up last, and gives its replicas' sizes
/// along an all_gather's axis, since every rank must know every other's block.
struct NcclAnnouncement {
  std::string communicator;                ///< rank 0's; empty from the others
  /// The communicator this worker last gave up ("" if none): if rank 0
  /// still names it, every worker fails the collective and drops it.
  std::string dropped;
  std::vector<std::vector<int64_t>> sizes; ///< all_gather: [local replica][tensor]; else empty

  /// [u32 n][communicator][u32 m][dropped][u32 replicas][u32 tensors][i64 sizes...]
  [[nodiscard]] std::string encode() const;
  /// Error(data_loss) naming `from` when the bytes do not read as one, or
  /// name other than `replicas` x `tensors` sizes (when there are sizes).
  [[nodiscard]] static NcclAnnouncement decode(const std::string& bytes, const std::string& from, std::size_t replicas,
                                               std::size_t tensors);
};

} // namespace troupe::internal

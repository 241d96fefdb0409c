#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace troupe::internal {

/// What a worker tells the others about a collective that NCCL runs across
/// workers, in its announce frame (AnnouncePayload::communicator):
/// rank 0 names the communicator (GpuCollectives::announce), and every
/// worker gives its replicas' sizes along an all_gather's axis, since every
/// rank must know every other rank's block.
struct NcclAnnouncement {
  std::string communicator;                ///< rank 0's; empty from the others
  std::vector<std::vector<int64_t>> sizes; ///< all_gather: [local replica][tensor]; else empty

  /// [u32 communicator bytes][communicator][u32 replicas][u32 tensors][i64 sizes...]
  [[nodiscard]] std::string encode() const;
  /// Error(data_loss) naming `from` when the bytes do not read as one, or
  /// name other than `replicas` x `tensors` sizes (when there are sizes).
  [[nodiscard]] static NcclAnnouncement decode(const std::string& bytes, const std::string& from, std::size_t replicas,
                                               std::size_t tensors);
};

} // namespace troupe::internal

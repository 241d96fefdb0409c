#pragma once

#include <cstdint>
#include <vector>

#include <troupe/collectives/block_pieces.hpp>
#include <troupe/collectives/peer_link.hpp>

namespace troupe::internal {

/// All-gather between n ranks whose blocks may differ in size (all_gather
/// along an axis where shapes differ): every rank sends its block straight to
/// every other rank and keeps the blocks it receives, indexed by rank. One
/// round, so the latency is one frame; each rank sends (n-1)·S, the same
/// bytes as a ring all-gather receives, which suits the small n of
/// multi-worker training. The caller knows every block's size from the
/// fingerprints the ranks exchanged first and passes it as `expected_bytes`.
/// A block larger than `max_frame_bytes` travels in pieces (BlockPieces).
class PeerAllGather final : public PeerCollective {
public:
  PeerAllGather(PeerLink& link, int rank, int size, FrameBytes mine, std::vector<std::size_t> expected_bytes,
                std::size_t max_frame_bytes = std::size_t{64} << 20);

  [[nodiscard]] const char* name() const noexcept override { return "all-gather"; }
  void start() override;
  void on_frame(int from, uint32_t tag, const FrameBytes& bytes) override;
  [[nodiscard]] bool waits_for(int rank) const override { return !have_[static_cast<size_t>(rank)]; }

  /// Block of every rank (valid once done()).
  [[nodiscard]] const std::vector<FrameBytes>& blocks() const noexcept { return blocks_; }

private:
  PeerLink& link_;
  int rank_;
  int size_;
  BlockPieces pieces_;
  std::vector<BlockPieces::Assembly> incoming_; ///< per rank
  std::vector<FrameBytes> blocks_;
  std::vector<bool> have_;
  int missing_ = 0;
};

} // namespace troupe::internal

#pragma once

#include <cstdint>

#include <troupe/collectives/block_pieces.hpp>
#include <troupe/collectives/peer_link.hpp>

namespace troupe::internal {

/// Broadcast from `root` to every other rank: the root sends its bytes to
/// each rank directly (one round; n is small in multi-worker training), in
/// pieces of at most `max_frame_bytes` (BlockPieces).
class PeerBroadcast final : public PeerCollective {
public:
  PeerBroadcast(PeerLink& link, int rank, int size, int root, FrameBytes bytes, std::size_t expected_bytes,
                std::size_t max_frame_bytes = std::size_t{64} << 20);

  [[nodiscard]] const char* name() const noexcept override { return "broadcast"; }
  void start() override;
  void on_frame(int from, uint32_t tag, const FrameBytes& bytes) override;
  [[nodiscard]] bool waits_for(int rank) const override { return !done_ && rank == root_; }

  /// The root's bytes (valid once done()).
  [[nodiscard]] const FrameBytes& bytes() const noexcept { return bytes_; }

private:
  PeerLink& link_;
  int rank_;
  int size_;
  int root_;
  FrameBytes bytes_;
  BlockPieces pieces_;
  BlockPieces::Assembly incoming_;
};

} // namespace troupe::internal

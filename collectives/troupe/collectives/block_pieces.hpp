#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <troupe/collectives/peer_link.hpp>

namespace troupe::internal {

/// A block of `bytes` sent as frames of at most `max_frame_bytes` each, tags
/// 0, 1, ... (at least one frame, an empty one for an empty block): how
/// all-gather and broadcast stay within the data plane's frame limit.
class BlockPieces {
public:
  explicit BlockPieces(std::size_t max_frame_bytes) noexcept : max_(max_frame_bytes) {}

  /// How many frames a block of `bytes` takes.
  [[nodiscard]] uint32_t count(std::size_t bytes) const noexcept {
    return bytes == 0 ? 1 : static_cast<uint32_t>((bytes + max_ - 1) / max_);
  }
  /// Sends `block` to `rank` in pieces.
  void send(PeerLink& link, int rank, const FrameBytes& block) const;

  /// Receives a block of `expected` bytes piece by piece (pieces arrive in
  /// order, as frames from one rank do): a block of one piece is kept as it
  /// came, a larger one is copied into a buffer of `expected` bytes.
  class Assembly {
  public:
    Assembly() = default;
    Assembly(const BlockPieces& pieces, std::size_t expected) : max_(pieces.max_), expected_(expected),
                                                                 total_(pieces.count(expected)) {}
    /// Takes piece `tag`: "" or why it does not fit (unexpected tag or size).
    [[nodiscard]] std::string add(uint32_t tag, const FrameBytes& bytes);
    [[nodiscard]] bool complete() const noexcept { return next_ == total_; }
    /// The block (valid once complete()).
    [[nodiscard]] const FrameBytes& block() const noexcept { return block_; }

  private:
    std::size_t max_ = 1;
    std::size_t expected_ = 0;
    uint32_t total_ = 0;
    uint32_t next_ = 0;
    FrameBytes block_;
    std::shared_ptr<std::vector<std::byte>> buffer_;
  };

private:
  std::size_t max_;
};

} // namespace troupe::internal

#include <troupe/collectives/block_pieces.hpp>

#include <algorithm>
#include <cstring>

namespace troupe::internal {

void BlockPieces::send(PeerLink& link, int rank, const FrameBytes& block) const {
  const uint32_t n = count(block.size);
  for (uint32_t i = 0; i < n; ++i) {
    const std::size_t offset = static_cast<std::size_t>(i) * max_;
    const std::size_t length = std::min(max_, block.size - std::min(block.size, offset));
    link.send(rank, i, FrameBytes{block.owner, block.data == nullptr ? nullptr : block.data + offset, length});
  }
}

std::string BlockPieces::Assembly::add(uint32_t tag, const FrameBytes& bytes) {
  if (next_ >= total_ || tag != next_)
    return next_ >= total_ ? "came after the whole block (" + std::to_string(total_) + " pieces)"
                           : "came where piece " + std::to_string(next_) + " was expected";
  const std::size_t offset = static_cast<std::size_t>(tag) * max_;
  const std::size_t length = std::min(max_, expected_ - std::min(expected_, offset));
  if (bytes.size != length)
    return "carries " + std::to_string(bytes.size) + " bytes where " + std::to_string(length) + " were expected ("
           + std::to_string(expected_) + " in " + std::to_string(total_) + " pieces)";
  ++next_;
  if (total_ == 1) { // the usual case: the frame is the block, without a copy
    block_ = bytes;
    return {};
  }
  if (!buffer_) {
    buffer_ = std::make_shared<std::vector<std::byte>>(expected_);
    block_ = FrameBytes{buffer_, buffer_->data(), buffer_->size()};
  }
  if (length > 0)
    std::memcpy(buffer_->data() + offset, bytes.data, length);
  return {};
}

} // namespace troupe::internal

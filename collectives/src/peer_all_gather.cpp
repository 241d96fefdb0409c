#include <troupe/collectives/peer_all_gather.hpp>

#include <string>


namespace troupe::internal {

PeerAllGather::PeerAllGather(PeerLink& link, int rank, int size, FrameBytes mine,
                             std::vector<std::size_t> expected_bytes)
  : link_(link), rank_(rank), size_(size), expected_(std::move(expected_bytes)),
    blocks_(static_cast<size_t>(size)), have_(static_cast<size_t>(size), false) {
  blocks_[static_cast<size_t>(rank_)] = std::move(mine);
  have_[static_cast<size_t>(rank_)] = true;
  missing_ = size_ - 1;
}

void PeerAllGather::start() {
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      link_.send(r, 0, blocks_[static_cast<size_t>(rank_)]);
  done_ = missing_ == 0;
}

void PeerAllGather::on_frame(int from, uint32_t tag, const FrameBytes& bytes) {
  if (from < 0 || from >= size_ || tag != 0 || have_[static_cast<size_t>(from)])
    protocol_error(rank_, from, tag, "is not part of this all-gather or came twice");
  if (bytes.size != expected_[static_cast<size_t>(from)])
    protocol_error(rank_, from, tag,
               "carries " + std::to_string(bytes.size) + " bytes where the fingerprint announced "
                 + std::to_string(expected_[static_cast<size_t>(from)]));
  blocks_[static_cast<size_t>(from)] = bytes;
  have_[static_cast<size_t>(from)] = true;
  done_ = --missing_ == 0;
}

} // namespace troupe::internal

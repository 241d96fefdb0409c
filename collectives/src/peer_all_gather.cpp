#include <troupe/collectives/peer_all_gather.hpp>

#include <string>


namespace troupe::internal {

PeerAllGather::PeerAllGather(PeerLink& link, int rank, int size, FrameBytes mine,
                             std::vector<std::size_t> expected_bytes, std::size_t max_frame_bytes)
  : link_(link), rank_(rank), size_(size), pieces_(max_frame_bytes), blocks_(static_cast<size_t>(size)),
    have_(static_cast<size_t>(size), false) {
  for (int r = 0; r < size_; ++r)
    incoming_.emplace_back(pieces_, expected_bytes[static_cast<size_t>(r)]);
  blocks_[static_cast<size_t>(rank_)] = std::move(mine);
  have_[static_cast<size_t>(rank_)] = true;
  missing_ = size_ - 1;
}

void PeerAllGather::start() {
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      pieces_.send(link_, r, blocks_[static_cast<size_t>(rank_)]);
  done_ = missing_ == 0;
}

void PeerAllGather::on_frame(int from, uint32_t tag, const FrameBytes& bytes) {
  if (from < 0 || from >= size_ || have_[static_cast<size_t>(from)])
    protocol_error(rank_, from, tag, "is not part of this all-gather or came twice");
  auto& incoming = incoming_[static_cast<size_t>(from)];
  if (auto why = incoming.add(tag, bytes); !why.empty())
    protocol_error(rank_, from, tag, why + " (the fingerprint announced the block's size)");
  if (!incoming.complete())
    return;
  blocks_[static_cast<size_t>(from)] = incoming.block();
  have_[static_cast<size_t>(from)] = true;
  done_ = --missing_ == 0;
}

} // namespace troupe::internal

#include <troupe/collectives/peer_broadcast.hpp>

#include <string>


namespace troupe::internal {

PeerBroadcast::PeerBroadcast(PeerLink& link, int rank, int size, int root, FrameBytes bytes,
                             std::size_t expected_bytes, std::size_t max_frame_bytes)
  : link_(link), rank_(rank), size_(size), root_(root), bytes_(std::move(bytes)), pieces_(max_frame_bytes),
    incoming_(pieces_, expected_bytes) {}

void PeerBroadcast::start() {
  if (rank_ != root_)
    return;
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      pieces_.send(link_, r, bytes_);
  done_ = true;
}

void PeerBroadcast::on_frame(int from, uint32_t tag, const FrameBytes& bytes) {
  if (from != root_ || done_)
    protocol_error(rank_, from, tag, "is not the root's (rank " + std::to_string(root_) + ")");
  if (auto why = incoming_.add(tag, bytes); !why.empty())
    protocol_error(rank_, from, tag, why);
  if (!incoming_.complete())
    return;
  bytes_ = incoming_.block();
  done_ = true;
}

} // namespace troupe::internal

#include <troupe/collectives/peer_broadcast.hpp>

#include <string>


namespace troupe::internal {

PeerBroadcast::PeerBroadcast(PeerLink& link, int rank, int size, int root, FrameBytes bytes,
                             std::size_t expected_bytes)
  : link_(link), rank_(rank), size_(size), root_(root), bytes_(std::move(bytes)), expected_(expected_bytes) {
}

void PeerBroadcast::start() {
  if (rank_ != root_)
    return;
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      link_.send(r, 0, bytes_);
  done_ = true;
}

void PeerBroadcast::on_frame(int from, uint32_t tag, const FrameBytes& bytes) {
  if (from != root_ || tag != 0 || done_)
    protocol_error(rank_, from, tag, "is not the root's (rank " + std::to_string(root_) + ") one frame");
  if (bytes.size != expected_)
    protocol_error(rank_, from, tag,
               "carries " + std::to_string(bytes.size) + " bytes where " + std::to_string(expected_)
                 + " were expected");
  bytes_ = bytes;
  done_ = true;
}

} // namespace troupe::internal

#include <troupe/net/link/link_dispatch.hpp>

#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

// Frames for groups this process has not created yet are kept up to this many
// per group; more means the workers created different strategies.
constexpr size_t max_early_frames = 1 << 16;

} // namespace

void LinkDispatch::on_register(const LinkRegisterMsg& msg) {
  if (!msg.actor) {
    groups_.erase(msg.group);
    early_.erase(msg.group);
    return;
  }
  groups_[msg.group] = msg.actor;
  // Frames first: a peer's frames arrived before it was lost, and a group
  // must see them in that order (a worker that aborted a collective and then
  // exited is reported by its abort, not by its exit).
  if (auto i = early_.find(msg.group); i != early_.end()) {
    for (auto& frame : i->second)
      frame_(msg.actor, std::move(frame));
    early_.erase(i);
  }
  for (const auto& [rank, loss] : lost_)
    loss_(msg.actor, loss);
}

void LinkDispatch::on_frame(LinkFrameMsg msg) {
  if (auto i = groups_.find(msg.header.group); i != groups_.end()) {
    frame_(i->second, std::move(msg));
    return;
  }
  auto& queue = early_[msg.header.group];
  if (queue.size() >= max_early_frames) {
    TROUPE_LOG(error, "net") << "dropping frames of strategy group " << msg.header.group
                             << " from rank " << msg.from
                             << ": this worker never created that strategy (every worker must create the same "
                                "strategies in the same order)";
    return;
  }
  queue.push_back(std::move(msg));
}

void LinkDispatch::on_peer_lost(int rank, const std::string& why, bool left) {
  const PeerLostMsg loss{rank, why, left};
  if (!lost_.emplace(rank, loss).second)
    return;
  for (const auto& [group, actor] : groups_)
    loss_(actor, loss);
}

} // namespace troupe::internal

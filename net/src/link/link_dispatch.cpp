#include <troupe/net/link/link_dispatch.hpp>

#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

// Also bounds frames without payload (announces are small, but not free).
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
    for (auto& frame : i->second.frames)
      frame_(msg.actor, std::move(frame));
    for (const auto& [rank, loss] : i->second.overflowed)
      loss_(msg.actor, loss);
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
  auto& early = early_[msg.header.group];
  if (early.overflowed.count(msg.from) != 0)
    return;
  if (early.frames.size() >= max_early_frames || early.bytes + msg.bytes.size > max_early_bytes_) {
    const auto bound = max_early_bytes_ >= (std::size_t{1} << 20) ? std::to_string(max_early_bytes_ >> 20) + " MiB"
                                                                  : std::to_string(max_early_bytes_) + " bytes";
    const auto why = "it sent more than " + bound + " or "
                     + std::to_string(max_early_frames) + " frames for strategy group " + std::to_string(msg.header.group)
                     + " before this worker created that strategy (every worker must create the same strategies in "
                       "the same order)";
    TROUPE_LOG(error, "net") << "dropping frames from rank " << msg.from << ": " << why;
    early.overflowed.emplace(msg.from, PeerLostMsg{msg.from, why, false});
    // Its frames so far are useless without the dropped ones.
    std::erase_if(early.frames, [&](const LinkFrameMsg& f) { return f.from == msg.from; });
    early.bytes = 0;
    for (const auto& f : early.frames)
      early.bytes += f.bytes.size;
    return;
  }
  early.bytes += msg.bytes.size;
  early.frames.push_back(std::move(msg));
}

void LinkDispatch::on_peer_lost(int rank, const std::string& why, bool left) {
  const PeerLostMsg loss{rank, why, left};
  if (!lost_.emplace(rank, loss).second)
    return;
  for (const auto& [group, actor] : groups_)
    loss_(actor, loss);
}

} // namespace troupe::internal

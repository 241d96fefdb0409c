#include <troupe/net/link/link_dispatch.hpp>

#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

// Also bounds frames without payload (announces are small, but not free),
// over every group together.
constexpr size_t max_early_frames = 1 << 16;

} // namespace

void LinkDispatch::on_register(const LinkRegisterMsg& msg) {
  if (!msg.actor) {
    groups_.erase(msg.group);
    drop_early(msg.group);
    // Its peers' late frames (a collective they still finish) must not
    // wait for a group that will never come back.
    retired_[msg.group] = msg.retired_abort;
    return;
  }
  retired_.erase(msg.group);
  groups_[msg.group] = msg.actor;
  // Frames first: a peer's frames arrived before it was lost, and a group
  // must see them in that order (a worker that aborted a collective and then
  // exited is reported by its abort, not by its exit).
  if (auto i = early_.find(msg.group); i != early_.end()) {
    for (auto& frame : i->second.frames)
      frame_(msg.actor, std::move(frame));
    for (const auto& [rank, loss] : i->second.overflowed)
      loss_(msg.actor, loss);
    early_bytes_ -= i->second.bytes;
    early_frames_ -= i->second.frames.size();
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
  if (auto retired = retired_.find(msg.header.group); retired != retired_.end()) {
    // This worker destroyed that strategy: nobody will read the frame. The
    // peer that announced a collective would wait for it until its timeout.
    if (msg.header.type == FrameType::announce && retired->second.size > 0 && reply_) {
      FrameHeader abort;
      abort.type = FrameType::abort;
      abort.group = msg.header.group;
      abort.run = msg.header.run;
      abort.seq = msg.header.seq;
      abort.size = static_cast<uint32_t>(retired->second.size);
      reply_(LinkSendMsg{msg.from, abort, retired->second});
    }
    return;
  }
  auto& early = early_[msg.header.group];
  if (early.overflowed.count(msg.from) != 0)
    return;
  // One bound over every group: a peer could otherwise fill it once per group id.
  if (early_frames_ >= max_early_frames || early_bytes_ + msg.bytes.size > max_early_bytes_) {
    const auto bound = max_early_bytes_ >= (std::size_t{1} << 20) ? std::to_string(max_early_bytes_ >> 20) + " MiB"
                                                                  : std::to_string(max_early_bytes_) + " bytes";
    const auto why = "it sent more than the " + bound + " or " + std::to_string(max_early_frames)
                     + " frames this worker holds for strategies it has not created yet, the last for strategy group "
                     + std::to_string(msg.header.group)
                     + " before this worker created that strategy (every worker must create the same strategies in "
                       "the same order)";
    TROUPE_LOG(error, "net") << "dropping frames from rank " << msg.from << ": " << why;
    early.overflowed.emplace(msg.from, PeerLostMsg{msg.from, why, false});
    // Its frames so far are useless without the dropped ones.
    std::erase_if(early.frames, [&](const LinkFrameMsg& f) { return f.from == msg.from; });
    early_bytes_ -= early.bytes;
    early_frames_ -= early.frames.size();
    early.bytes = 0;
    for (const auto& f : early.frames)
      early.bytes += f.bytes.size;
    early_bytes_ += early.bytes;
    early_frames_ += early.frames.size();
    return;
  }
  early.bytes += msg.bytes.size;
  early_bytes_ += msg.bytes.size;
  ++early_frames_;
  early.frames.push_back(std::move(msg));
}

void LinkDispatch::drop_early(uint64_t group) {
  if (auto i = early_.find(group); i != early_.end()) {
    early_bytes_ -= i->second.bytes;
    early_frames_ -= i->second.frames.size();
    early_.erase(i);
  }
}

void LinkDispatch::on_peer_lost(int rank, const std::string& why, bool left) {
  const PeerLostMsg loss{rank, why, left};
  if (!lost_.emplace(rank, loss).second)
    return;
  for (const auto& [group, actor] : groups_)
    loss_(actor, loss);
}

} // namespace troupe::internal

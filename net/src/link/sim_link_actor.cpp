#include <troupe/net/link/sim_link_actor.hpp>

#include <algorithm>
#include <utility>

#include <caf/all.hpp>

namespace troupe::internal {

SimLinkActor::SimLinkActor(caf::actor_config& cfg, int rank, std::shared_ptr<SimNetwork> network)
  : SimLinkActorHandle::base(cfg), rank_(rank), network_(std::move(network)),
    dispatch_([this](const LinkReceiverHandle& to, LinkFrameMsg msg) { send(to, std::move(msg)); },
              [this](const LinkReceiverHandle& to, PeerLostMsg msg) { send(to, std::move(msg)); },
              [this](LinkSendMsg msg) { send(this, std::move(msg)); }) {
}

void SimLinkActor::on_exit() {
  // The links hold each other (and groups): break the cycles, or none is ever freed.
  peers_.clear();
  dispatch_ = LinkDispatch({}, {});
  network_ = nullptr;
}

void SimLinkActor::send_frame(int to, SimWireMsg msg) {
  const auto& peer = peers_[static_cast<size_t>(to)];
  if (!network_) {
    send(peer, std::move(msg));
    return;
  }
  const auto now = clock().now();
  bool first = true;
  for (const auto delay : network_->deliveries(rank_, to, network_->since_start(now), msg.header.type)) {
    if (!std::exchange(first, false)) {
      // A duplicate gets bytes of its own: a receiver may reduce into a frame's bytes.
      auto copy = std::make_shared<std::vector<std::byte>>(msg.bytes.data, msg.bytes.data + msg.bytes.size);
      msg.bytes = FrameBytes{copy, copy->data(), copy->size()};
    }
    // Timers at one virtual time fire in the order they were set, and one
    // that is due has fired only once the clock passed it.
    auto pending = pending_until_.find(to);
    if (delay == caf::timespan{0} && (pending == pending_until_.end() || now > pending->second)) {
      send(peer, msg);
      continue;
    }
    auto& until = pending_until_[to];
    until = std::max(until, now + delay);
    delayed_send(peer, delay, msg);
  }
}

SimLinkActor::behavior_type SimLinkActor::make_behavior() {
  return {
    [this](SimPeersMsg& msg) {
      peers_ = std::move(msg.links);
      if (!network_)
        return;
      const auto since = network_->since_start(clock().now());
      for (auto& verdict : network_->verdicts_for(rank_))
        if (verdict.lost < static_cast<int>(peers_.size())) // a ps task has no link: no collective waits for it
          delayed_send(this, std::max(caf::timespan{0}, verdict.at - since), SimCutMsg{verdict.lost, verdict.why});
    },
    [this](const LinkRegisterMsg& msg) { dispatch_.on_register(msg); },
    [this](LinkSendMsg& msg) {
      if (dispatch_.lost(msg.to) || msg.to < 0 || static_cast<size_t>(msg.to) >= peers_.size())
        return;
      auto copy = std::make_shared<std::vector<std::byte>>(msg.bytes.data, msg.bytes.data + msg.bytes.size);
      FrameBytes bytes{copy, copy->data(), copy->size()};
      send_frame(msg.to, SimWireMsg{rank_, msg.header, std::move(bytes)});
    },
    [this](SimWireMsg& msg) {
      if (dispatch_.lost(msg.from))
        return;
      if (msg.header.type == FrameType::bye) // as the data plane's broker takes a bye
        dispatch_.on_peer_lost(msg.from, "it shut down (its program ended)", true);
      else
        dispatch_.on_frame(LinkFrameMsg{msg.from, msg.header, std::move(msg.bytes)});
    },
    [this](SimLeaveMsg) {
      FrameHeader bye;
      bye.type = FrameType::bye;
      for (int to = 0; to < static_cast<int>(peers_.size()); ++to)
        if (to != rank_ && !dispatch_.lost(to))
          send_frame(to, SimWireMsg{rank_, bye, FrameBytes{}});
    },
    [this](const SimCutMsg& msg) { dispatch_.on_peer_lost(msg.rank, msg.why, false); },
  };
}

} // namespace troupe::internal

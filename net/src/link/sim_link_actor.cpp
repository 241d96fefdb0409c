#include <troupe/net/link/sim_link_actor.hpp>

#include <caf/all.hpp>

namespace troupe::internal {

SimLinkActor::SimLinkActor(caf::actor_config& cfg, int rank)
  : SimLinkActorHandle::base(cfg), rank_(rank),
    dispatch_([this](const LinkReceiverHandle& to, LinkFrameMsg msg) { send(to, std::move(msg)); },
              [this](const LinkReceiverHandle& to, PeerLostMsg msg) { send(to, std::move(msg)); }) {
}

void SimLinkActor::on_exit() {
  // The links hold each other (and groups): break the cycles, or none is ever freed.
  peers_.clear();
  dispatch_ = LinkDispatch({}, {});
}

SimLinkActor::behavior_type SimLinkActor::make_behavior() {
  return {
    [this](SimPeersMsg& msg) { peers_ = std::move(msg.links); },
    [this](const LinkRegisterMsg& msg) { dispatch_.on_register(msg); },
    [this](LinkSendMsg& msg) {
      if (dispatch_.lost(msg.to) || msg.to < 0 || static_cast<size_t>(msg.to) >= peers_.size())
        return;
      auto copy = std::make_shared<std::vector<std::byte>>(msg.bytes.data, msg.bytes.data + msg.bytes.size);
      FrameBytes bytes{copy, copy->data(), copy->size()};
      send(peers_[static_cast<size_t>(msg.to)], SimWireMsg{rank_, msg.header, std::move(bytes)});
    },
    [this](SimWireMsg& msg) {
      if (!dispatch_.lost(msg.from))
        dispatch_.on_frame(LinkFrameMsg{msg.from, msg.header, std::move(msg.bytes)});
    },
    [this](const SimCutMsg& msg) { dispatch_.on_peer_lost(msg.rank, msg.why, false); },
  };
}

} // namespace troupe::internal

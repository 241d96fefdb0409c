#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>

#include <caf/actor.hpp>

#include <troupe/net/link/link_messages.hpp>

namespace troupe::internal {

/// The receiving side every data-plane link shares: which group actor gets
/// the frames of which group, frames that arrive before their group exists
/// (another worker created its strategy first), and which peers are lost.
class LinkDispatch {
public:
  /// `deliver(actor, msg)` sends a message from the link actor.
  using DeliverFrame = std::function<void(const caf::actor&, LinkFrameMsg)>;
  using DeliverLoss = std::function<void(const caf::actor&, PeerLostMsg)>;

  LinkDispatch(DeliverFrame frame, DeliverLoss loss) : frame_(std::move(frame)), loss_(std::move(loss)) {}

  /// Registers (or, with a null actor, unregisters) a group; hands it the
  /// frames and losses it missed.
  void on_register(const LinkRegisterMsg& msg);

  /// A frame for `msg.header.group` arrived.
  void on_frame(LinkFrameMsg msg);

  /// Peer `rank` is gone (`left`: after a bye): every group hears it once,
  /// groups registered later too.
  void on_peer_lost(int rank, const std::string& why, bool left = false);

  [[nodiscard]] bool lost(int rank) const { return lost_.count(rank) != 0; }

private:
  DeliverFrame frame_;
  DeliverLoss loss_;
  std::map<uint64_t, caf::actor> groups_;
  std::map<uint64_t, std::deque<LinkFrameMsg>> early_;
  std::map<int, PeerLostMsg> lost_;
};

} // namespace troupe::internal

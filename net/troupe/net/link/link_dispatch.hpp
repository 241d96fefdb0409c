#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

#include <troupe/net/link/link_messages.hpp>

namespace troupe::internal {

/// The receiving side every data-plane link shares: which group actor gets
/// the frames of which group, frames that arrive before their group exists
/// (another worker created its strategy first), and which peers are lost.
class LinkDispatch {
public:
  /// `deliver(actor, msg)` sends a message from the link actor.
  using DeliverFrame = std::function<void(const LinkReceiverHandle&, LinkFrameMsg)>;
  using DeliverLoss = std::function<void(const LinkReceiverHandle&, PeerLostMsg)>;
  /// Sends a frame back to a peer from the link (a retired group's abort).
  using Reply = std::function<void(LinkSendMsg)>;

  /// Frames of groups this process has not created yet are kept up to
  /// `max_early_bytes` of payload in all: one collective's first frames
  /// fit, since no peer gets further without this worker. Frames of a group
  /// this process unregistered (its strategy is gone) are dropped.
  static constexpr std::size_t default_max_early_bytes = std::size_t{1} << 30;

  LinkDispatch(DeliverFrame frame, DeliverLoss loss, Reply reply = {},
               std::size_t max_early_bytes = default_max_early_bytes)
    : frame_(std::move(frame)), loss_(std::move(loss)), reply_(std::move(reply)), max_early_bytes_(max_early_bytes) {}

  /// Registers (or, with a null actor, unregisters and retires) a group;
  /// hands it the frames and losses it missed.
  void on_register(const LinkRegisterMsg& msg);

  /// A frame for `msg.header.group` arrived. A peer's announce for a group
  /// this process retired with an abort payload is answered with that abort.
  /// Past the early-frame bound the
  /// sender's early frames for that group are dropped, and when it registers it learns the
  /// sender as lost to it (naming the overflow), so its collectives fail
  /// instead of waiting for frames that were dropped.
  void on_frame(LinkFrameMsg msg);

  /// Peer `rank` is gone (`left`: after a bye): every group hears it once,
  /// groups registered later too.
  void on_peer_lost(int rank, const std::string& why, bool left = false);

  [[nodiscard]] bool lost(int rank) const { return lost_.count(rank) != 0; }
  /// How peer `rank` was lost, or null while it is not.
  [[nodiscard]] const PeerLostMsg* loss_of(int rank) const {
    auto i = lost_.find(rank);
    return i == lost_.end() ? nullptr : &i->second;
  }

private:
  DeliverFrame frame_;
  DeliverLoss loss_;
  Reply reply_;
  std::map<uint64_t, LinkReceiverHandle> groups_;
  struct Early {
    std::deque<LinkFrameMsg> frames;
    std::size_t bytes = 0;
    std::map<int, PeerLostMsg> overflowed; ///< senders whose frames were dropped
  };
  void drop_early(uint64_t group);

  std::size_t max_early_bytes_;
  std::map<uint64_t, Early> early_;
  std::size_t early_bytes_ = 0;  ///< payload bytes over every group in early_
  std::size_t early_frames_ = 0; ///< frames over every group in early_
  /// Groups unregistered here: their frames are dropped, their announces
  /// answered with the abort payload each retired with (when it has one).
  std::map<uint64_t, FrameBytes> retired_;
  std::map<int, PeerLostMsg> lost_;
};

} // namespace troupe::internal

#pragma once

// Messages between a process's collective group actors and its data-plane
// link (the io broker of cluster mode, the simulated network of simulation
// mode). They carry shared buffers, so they never leave the process; what
// crosses processes is the frame they describe (net/link/frame_header.hpp).
// The typed interfaces of both sides end the file.

#include <string>

#include <caf/typed_actor.hpp>

#include <troupe/net/link/frame_bytes.hpp>
#include <troupe/net/link/frame_header.hpp>
#include <caf/meta/type_name.hpp>
#include <troupe/core/local_only.hpp>

namespace troupe::internal {

/// Group -> link: send this frame to rank `to`.
struct LinkSendMsg {
  int to = 0;
  FrameHeader header;
  FrameBytes bytes;
};

/// Link -> group: rank `from` sent this frame to the group `header.group`.
struct LinkFrameMsg {
  int from = 0;
  FrameHeader header;
  FrameBytes bytes;
};

/// Link -> groups: rank `rank` is gone (its process died, closed its sockets
/// or stopped answering); `why` says which. `left`: it said bye first, so
/// every frame it sent has arrived and only what still needs it fails.
struct PeerLostMsg {
  int rank = 0;
  std::string why;
  bool left = false;
};

/// What a link delivers to: a collective group (CollectiveGroupActorHandle),
/// or the node actor's loss watch (NodeActorHandle).
using LinkReceiverHandle = caf::typed_actor<caf::reacts_to<LinkFrameMsg>, caf::reacts_to<PeerLostMsg>>;

/// Group -> link: deliver frames of group `group` to `actor` (frames that
/// arrived before wait for this); a null actor unregisters it.
struct LinkRegisterMsg {
  uint64_t group = 0;
  LinkReceiverHandle actor;
  /// With a null actor: the payload of the abort frame the link answers a
  /// peer's announce for this retired group with, so that the peer fails
  /// that collective at once instead of at its timeout (empty: none).
  FrameBytes retired_abort{};
};

// Local-only: frames share their bytes with the sender.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, LinkSendMsg& x) {
  return inspect_local_only(f, "troupe::LinkSendMsg", x.to);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, LinkFrameMsg& x) {
  return inspect_local_only(f, "troupe::LinkFrameMsg", x.from);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, LinkRegisterMsg& x) {
  return f(caf::meta::type_name("troupe::LinkRegisterMsg"), x.group, x.actor);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PeerLostMsg& x) {
  return f(caf::meta::type_name("troupe::PeerLostMsg"), x.rank, x.why, x.left);
}

/// The data plane as the collective groups reach it: the DataPlaneBroker of
/// cluster mode (DataPlaneBrokerHandle) or the SimLinkActor of simulation
/// mode (SimLinkActorHandle), both of which extend it.
using DataPlaneHandle = caf::typed_actor<caf::reacts_to<LinkSendMsg>, caf::reacts_to<LinkRegisterMsg>>;

} // namespace troupe::internal

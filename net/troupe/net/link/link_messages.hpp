#pragma once

// Messages between a process's collective group actors and its data-plane
// link (the io broker of cluster mode, the simulated network of simulation
// mode). They carry shared buffers, so they never leave the process; what
// crosses processes is the frame they describe (net/link/frame_header.hpp).

#include <string>

#include <caf/actor.hpp>

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

/// Group -> link: deliver frames of group `group` to `actor` (frames that
/// arrived before wait for this); a null actor unregisters it.
struct LinkRegisterMsg {
  uint64_t group = 0;
  caf::actor actor;
};

/// Link -> groups: rank `rank` is gone (its process died, closed its sockets
/// or stopped answering); `why` says which. `left`: it said bye first, so
/// every frame it sent has arrived and only what still needs it fails.
struct PeerLostMsg {
  int rank = 0;
  std::string why;
  bool left = false;
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

} // namespace troupe::internal

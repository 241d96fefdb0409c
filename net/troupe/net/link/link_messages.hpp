#pragma once

// Messages between a process's collective group actors and its data-plane
// link (the io broker of cluster mode, the simulated network of simulation
// mode). They carry shared buffers, so they never leave the process; what
// crosses processes is the frame they describe (net/link/frame_header.hpp).

#include <string>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <troupe/net/link/frame_bytes.hpp>
#include <troupe/net/link/frame_header.hpp>

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

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::LinkSendMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::LinkFrameMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::LinkRegisterMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::PeerLostMsg)

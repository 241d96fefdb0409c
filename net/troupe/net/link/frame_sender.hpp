#pragma once

// A data-plane transport that a collective group may hand its frames to
// directly, from its own thread, instead of through the link actor: UCX's
// progress thread takes them from a queue (net/ucx), one thread hand-off
// less per frame. Internal: not installed.

#include <troupe/net/link/frame_bytes.hpp>
#include <troupe/net/link/frame_header.hpp>

namespace troupe::internal {

class FrameSender {
public:
  virtual ~FrameSender() = default;
  /// Sends one frame to rank `to` (thread-safe, in call order); `bytes` stays
  /// alive until it has left. A frame for a lost rank is dropped.
  virtual void send(int to, const FrameHeader& header, FrameBytes bytes) = 0;
};

} // namespace troupe::internal

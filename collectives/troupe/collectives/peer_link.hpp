#pragma once

#include <cstdint>
#include <string>

#include <troupe/net/link/frame_bytes.hpp>

namespace troupe::internal {

/// How a cross-process collective algorithm reaches the other ranks of its
/// group. Algorithms never see sockets, actors or serialisation (gloo's
/// transport::Pair): the actor that runs one passes it a link that carries its
/// frames, tagged with the collective's key, over the data plane (CAF io
/// brokers across processes, the simulated network in simulation mode).
///
/// Frames from one rank to another arrive in the order they were sent. A link
/// may read a frame's bytes after `send` returns; algorithms therefore never
/// write to bytes they sent until a frame that depends on those bytes has
/// arrived (the ring's invariant, see ring_all_reduce.hpp).
class PeerLink {
public:
  virtual ~PeerLink() = default;

  /// Sends frame `tag` to `rank` (not the caller's own rank).
  virtual void send(int rank, uint32_t tag, FrameBytes bytes) = 0;
};

/// One cross-process collective between the ranks of a group, as a state
/// machine: `start()` sends the first frames, `on_frame` consumes one frame
/// and sends what it unblocks, `done()` says when the result is complete.
/// Frames that do not fit the protocol (an unknown tag, a wrong size, a
/// duplicate) are Error(internal) naming both, never a silent wait.
class PeerCollective {
public:
  virtual ~PeerCollective() = default;

  /// The algorithm's name for logs ("ring", "halving-doubling", ...).
  [[nodiscard]] virtual const char* name() const noexcept = 0;

  virtual void start() = 0;
  virtual void on_frame(int from, uint32_t tag, const FrameBytes& bytes) = 0;

  [[nodiscard]] bool done() const noexcept { return done_; }

  /// Whether a frame from `rank` is still needed to finish (a peer that left
  /// after sending everything this rank needs does not stop it).
  [[nodiscard]] virtual bool waits_for(int rank) const = 0;

protected:
  /// Throws Error(internal): "<name> on rank r: frame <tag> from rank <from> <what>".
  [[noreturn]] void protocol_error(int rank, int from, uint32_t tag, const std::string& what) const;

  bool done_ = false;
};

} // namespace troupe::internal

#pragma once

// The payloads of the cross-worker protocol's control frames
// (net/link/frame_header.hpp names which frame carries which). Decoding
// checks sizes against the frame it reads and throws Error(data_loss) naming
// the frame, never reading past it.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/link/frame_bytes.hpp>

namespace troupe::internal {

/// Frame bytes that own `bytes`.
[[nodiscard]] FrameBytes frame_of(std::shared_ptr<std::vector<std::byte>> bytes);

/// announce: what the sender will contribute to the collective.
struct AnnouncePayload {
  /// Bounds the NCCL details read from the network.
  static constexpr std::size_t max_communicator_bytes = 16 << 20;

  CollectiveFingerprint fingerprint;
  int64_t local_replicas = 0; ///< the sender's replicas of this strategy
  /// Collectives through NCCL: the sender's details (opaque here: rank 0's
  /// names the communicator, each gives its replicas' sizes); empty otherwise.
  std::string communicator;

  [[nodiscard]] FrameBytes encode() const;
  [[nodiscard]] static AnnouncePayload decode(const FrameBytes& bytes);
};

/// abort: the sender failed the collective with `code` because of `reason`.
struct AbortPayload {
  Errc code = Errc::cancelled;
  std::string reason;

  [[nodiscard]] FrameBytes encode() const;
  /// An unknown code reads as Errc::cancelled (a newer peer's code).
  [[nodiscard]] static AbortPayload decode(const FrameBytes& bytes);
};

/// run_done: the sender's replicas returned from the frame's run after
/// issuing `issued` collectives; `failure` says why they stopped, if they failed.
struct RunDonePayload {
  uint32_t issued = 0;
  std::string failure;

  [[nodiscard]] FrameBytes encode() const;
  [[nodiscard]] static RunDonePayload decode(const FrameBytes& bytes);
};

} // namespace troupe::internal

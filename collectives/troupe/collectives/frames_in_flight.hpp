#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include <troupe/net/link/frame_bytes.hpp>

namespace troupe::internal {

/// The frames an in-place all-reduce sent out of its caller's memory that a
/// link may still read. Links read a frame's bytes after `send` returns (the
/// data plane's actor serialises it later; in one process the receiver reads
/// the sender's bytes), and an algorithm is done when it has received what it
/// needs, not when the others have read what it sent. Until every tracked
/// frame is dropped, the caller's framework must not get its memory back: it
/// would write into it (zero the gradients) while a peer still reads it.
///
/// Each tracked frame's owner counts it down when the link drops its last
/// copy, on whichever thread that is.
class FramesInFlight : public std::enable_shared_from_this<FramesInFlight> {
public:
  /// `released` runs, on the thread that dropped the last frame, once for
  /// each wait: after one or more settled() that returned false.
  explicit FramesInFlight(std::function<void()> released) : released_(std::move(released)) {}

  /// `bytes`, counted until every copy of the returned frame is dropped.
  [[nodiscard]] FrameBytes track(FrameBytes bytes);

  /// Whether every tracked frame was dropped. If not, `released` runs when
  /// the last one is.
  [[nodiscard]] bool settled();

private:
  struct Tracked;
  void dropped();

  std::atomic<long> frames_{0};
  std::atomic<bool> waiting_{false};
  std::function<void()> released_;
};

} // namespace troupe::internal

#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include <troupe/actors/gpu/nccl_backend.hpp>

namespace troupe::internal {

/// One thread that watches the NCCL communicators whose groups are not on
/// their streams yet (NcclBackend::state in progress), for every device
/// actor of a Runtime, and tells each actor when its communicator moved on.
///
/// Why a thread: every group on a nonblocking communicator is in progress at
/// first (NCCL 2.28 launches it on a thread of its own), for some tens of
/// microseconds. An actor that polled through its own mailbox would keep its
/// scheduler thread meanwhile (CAF runs an actor until its mailbox is
/// empty), starving the actors the peers' groups wait for; one that polled
/// by timer would add the clock thread's slack (50 us or more) to every
/// collective. This thread yields between rounds for a while, then naps
/// briefly, and sleeps when nothing is watched.
class NcclProgressPoller {
public:
  NcclProgressPoller();
  /// Stops the thread: joins it, or, when the last owner goes on the
  /// thread itself (a callback dropping the last reference to its actor),
  /// lets it end on its own.
  ~NcclProgressPoller();
  NcclProgressPoller(const NcclProgressPoller&) = delete;
  NcclProgressPoller& operator=(const NcclProgressPoller&) = delete;

  /// Calls `changed` on the poller's thread once `comm` is no longer in
  /// progress (ready or failed; a state that throws counts), or once
  /// `max_wait` passed, whichever comes first; then forgets it. `changed`
  /// must not block (it sends the actor a message).
  void watch(NcclComm comm, std::chrono::nanoseconds max_wait, std::function<void()> changed);

  /// Stops watching `comm`, without calling its `changed`; returns once the
  /// thread no longer reads it, so the caller may abort it.
  void forget(NcclComm comm);

private:
  struct State;  // shared with the thread
  static void run(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

} // namespace troupe::internal

#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/fibers/fiber_local.hpp>

namespace troupe::internal {

/// The outcome of work a fiber handed off without waiting for it (an NCCL
/// group on its way to a GPU's stream): "" or why it failed, once `done`.
struct HandOff {
  Completion done;
  std::string error;
};

/// An actor's fiber on which user code runs (a replica's function, a
/// scheduled function on a worker). A blocking troupe call made there (a
/// variable read from a parameter server, strategy.run inside a scheduled
/// function) must not block the actor's thread, which other actors need:
/// Executor::wait asks the current FiberWaiter to suspend the fiber
/// instead, and the actor resumes it when the completion is set.
class FiberWaiter {
public:
  /// Suspends the calling fiber until `done` is set. Called on the fiber.
  virtual void await(const Completion& done) = 0;

  /// Called on the fiber: `handoff` is settled before the fiber's function
  /// returns (settle_handoffs). Throws the error of an earlier handoff that
  /// failed meanwhile, and waits for the oldest one when max_handoffs are
  /// outstanding.
  void hand_off(std::shared_ptr<const HandOff> handoff);

  /// Called on the fiber when its function returned: waits for every
  /// handoff, and throws the first one's error (an Error, Errc::internal).
  void settle_handoffs();

  /// Forgets the handoffs (the function failed already: its error is the one
  /// reported, and the handoffs' errors are about the same failure).
  void drop_handoffs() noexcept { handoffs_.clear(); }

  static constexpr std::size_t max_handoffs = 16;

  /// The waiter whose fiber the calling code runs on, or null on a plain thread.
  [[nodiscard]] static FiberWaiter* current() noexcept { return FiberLocal<FiberWaiter>::current(); }

  /// Makes a waiter the current one while it lives; an actor wraps each
  /// resume of its fiber in one (fibers migrate between threads).
  using Installer = FiberLocal<FiberWaiter>::Installer;

protected:
  ~FiberWaiter() = default;

  /// Called on the fiber by await(): remembers what it waits for, before the
  /// fiber yields to its actor.
  void wait_for(const Completion& done) noexcept { awaited_ = &done; }

  /// Called by the actor after the fiber yielded: true when the fiber waits
  /// for a completion not set yet (the actor goes back to its mailbox until
  /// FiberWakeMsg), false when it should be resumed now or did not wait.
  [[nodiscard]] bool park(const caf::actor& self);

  /// Called by the actor on FiberWakeMsg: whether the fiber was parked (and
  /// is no more), so the actor resumes it.
  [[nodiscard]] bool unpark() noexcept { return std::exchange(parked_, false); }

  /// Whether the last yield was a wait (so the actor resumes the fiber).
  [[nodiscard]] bool waiting() const noexcept { return awaited_ != nullptr; }

private:
  /// Waits for the oldest handoff and forgets it; throws its error.
  void settle_oldest();

  const Completion* awaited_ = nullptr;
  std::deque<std::shared_ptr<const HandOff>> handoffs_;
  bool parked_ = false;
};

/// What an actor sends itself when the completion its fiber awaits is set.
struct FiberWakeMsg {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, FiberWakeMsg&) {
  return f(caf::meta::type_name("troupe::FiberWakeMsg"));
}

/// Arranges for `self` to receive FiberWakeMsg once `done` is set; false when
/// `done` already is (resume the fiber at once then).
[[nodiscard]] bool wake_when_set(const Completion& done, const caf::actor& self);

} // namespace troupe::internal

#pragma once

#include <cstddef>
#include <functional>

#include <boost/context/fiber.hpp>
#include <caf/actor.hpp>

#include <troupe/actors/fibers/fiber_waiter.hpp>

namespace troupe::internal {

/// The fiber an actor runs user code on (a replica's function, a worker's
/// scheduled function), shared by ReplicaActor and WorkerActor: the fiber
/// runs the actor's `task` each time the actor starts it, and the actor
/// resumes it from its message handlers until the task yields back.
///
/// The fiber yields in three ways: the task returned (the actor reports it),
/// the task called yield_to_actor() (it needs the actor, as a collective
/// does), or a blocking troupe call awaited a completion (FiberWaiter): then
/// resume_fiber() parks, and the actor calls it again on FiberWakeMsg.
class FiberHost : public FiberWaiter {
public:
  /// Suspends the fiber until `done` is set. Called on the fiber.
  void await(const Completion& done) override;

protected:
  /// `task` runs on the fiber, on a stack of `stack_bytes`, each time the
  /// actor starts the fiber; it must let boost's forced_unwind through.
  FiberHost(std::size_t stack_bytes, std::function<void()> task);
  ~FiberHost();

  /// Creates the fiber unless there is one (it is reused across tasks);
  /// throws std::exception when its stack cannot be had.
  void ensure_fiber();
  [[nodiscard]] std::size_t stack_bytes() const noexcept { return stack_bytes_; }

  /// Starts or resumes the fiber until it yields back without waiting
  /// (returns true: the actor looks at what the task left) or parks waiting
  /// for a completion (returns false: FiberWakeMsg to `self` comes when it is
  /// set). Each switch to the fiber runs inside `around(switch_in)`, which
  /// installs the actor's fiber-locals around the call (fibers move between
  /// threads); this host installs itself as the current FiberWaiter.
  template <class Around>
  bool resume_fiber(const caf::actor& self, Around&& around) {
    for (;;) {
      {
        FiberWaiter::Installer waiter(this);
        around([this] { user_ = std::move(user_).resume(); });
      }
      if (!waiting())
        return true;
      if (park(self))
        return false;
    }
  }

  /// Called on the fiber: hands control back to the actor, which resumes it
  /// with resume_fiber().
  void yield_to_actor();

  /// Destroys a suspended fiber, unwinding its stack (forced_unwind): the
  /// task's locals are destroyed while the actor still exists. For on_exit.
  void drop_fiber() noexcept;

private:
  std::size_t stack_bytes_;
  std::function<void()> task_;
  boost::context::fiber user_;   ///< the suspended task side
  boost::context::fiber caller_; ///< the actor side, while the task runs
};

} // namespace troupe::internal

#include <troupe/actors/fiber_waiter.hpp>

#include <caf/send.hpp>

namespace troupe::internal {

namespace {

thread_local FiberWaiter* tl_waiter = nullptr;

} // namespace

// Out of line on purpose, as current_frame(): an inlined thread_local address
// could be reused after the fiber resumed on another thread.
FiberWaiter* FiberWaiter::current() noexcept {
  return tl_waiter;
}

FiberWaiter::Installer::Installer(FiberWaiter* waiter) noexcept : previous_(tl_waiter) {
  tl_waiter = waiter;
}

FiberWaiter::Installer::~Installer() {
  tl_waiter = previous_;
}

bool FiberWaiter::park(const caf::actor& self) {
  const auto* awaited = std::exchange(awaited_, nullptr);
  if (!awaited || !wake_when_set(*awaited, self))
    return false;
  parked_ = true;
  return true;
}

bool wake_when_set(const Completion& done, const caf::actor& self) {
  return done.call_when_set([self] { caf::anon_send(self, FiberWakeMsg{}); });
}

} // namespace troupe::internal

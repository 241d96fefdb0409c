#include <troupe/actors/fibers/fiber_waiter.hpp>
#include <troupe/actors/fibers/fiber_local_impl.hpp>

#include <caf/send.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

template class FiberLocal<FiberWaiter>;

void FiberWaiter::hand_off(std::shared_ptr<const HandOff> handoff) {
  handoffs_.push_back(std::move(handoff));
  // The newest stays: it was just handed off. Older ones that finished are
  // settled now, so that a failure surfaces at the next collective.
  while (handoffs_.size() > 1 && (handoffs_.front()->done.done() || handoffs_.size() > max_handoffs))
    settle_oldest();
}

void FiberWaiter::settle_handoffs() {
  while (!handoffs_.empty())
    settle_oldest();
}

void FiberWaiter::settle_oldest() {
  const auto handoff = std::move(handoffs_.front());
  handoffs_.pop_front();
  if (!handoff->done.done())
    await(handoff->done);
  handoff->done.settle();
  // Later handoffs stay: a caller that catches this error and goes on still
  // hears of theirs.
  if (!handoff->error.empty())
    throw Error(Errc::internal, handoff->error);
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

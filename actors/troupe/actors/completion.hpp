#pragma once

#include <atomic>
#include <cstdint>

namespace troupe::internal {

/// A one-shot flag that an actor raises and the user-facing edge waits for
/// (through RuntimeImpl::wait, which also steps the simulation).
class Completion {
public:
  /// Raises the flag and wakes a waiter. Called once, from any thread.
  void set() noexcept {
    state_.store(1, std::memory_order_release);
    state_.notify_all();
  }

  [[nodiscard]] bool done() const noexcept { return state_.load(std::memory_order_acquire) != 0; }

  /// Blocks the calling (non-actor) thread until set(): spins briefly first,
  /// since a strategy step often completes within microseconds.
  void wait() const noexcept {
    for (int i = 0; i < 4000; ++i)
      if (done())
        return;
    while (!done())
      state_.wait(0, std::memory_order_acquire);
  }

private:
  std::atomic<uint32_t> state_{0};
};

} // namespace troupe::internal

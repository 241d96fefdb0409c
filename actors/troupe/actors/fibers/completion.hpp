#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace troupe::internal {

/// A one-shot flag that an actor raises and the user-facing edge waits for
/// (through Executor::wait, which also steps the simulation).
class Completion {
public:
  /// Raises the flag and wakes a waiter (a blocked thread, or the actor of a
  /// suspended fiber through call_when_set). Called once, from any thread.
  void set() noexcept {
    std::function<void()> wake;
    {
      // Everything that touches this object happens under the lock: a waiter
      // that saw done() may destroy it once settle() got the lock.
      std::lock_guard<std::mutex> lock(mutex_);
      state_.store(1, std::memory_order_seq_cst);
      // A futex wake only for a thread asleep in wait() (one that went to
      // sleep after this store sees the flag and does not sleep).
      if (sleepers_.load(std::memory_order_seq_cst) > 0)
        state_.notify_all();
      wake = std::move(on_set_);
    }
    if (wake)
      wake();
  }

  /// Returns once set() has let go of this object: whoever saw done() and
  /// is about to destroy the Completion calls it first (wait() does).
  void settle() const noexcept { std::lock_guard<std::mutex> lock(mutex_); }

  /// Has `wake` called, by the thread that raises the flag, once it is
  /// raised; returns false and drops `wake` when it already is. A fiber that
  /// waits suspends itself and lets `wake` tell its actor to resume it.
  bool call_when_set(std::function<void()> wake) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done())
      return false;
    if (on_set_)
      on_set_ = [first = std::move(on_set_), second = std::move(wake)] { first(); second(); };
    else
      on_set_ = std::move(wake);
    return true;
  }

  [[nodiscard]] bool done() const noexcept { return state_.load(std::memory_order_acquire) != 0; }

  /// Blocks the calling (non-actor) thread until set(): spins briefly first,
  /// since a strategy step often completes within microseconds, then yields
  /// for up to 50 us (a GPU round trip takes 10 to 50: a futex wake-up would
  /// add tens more), then sleeps.
  void wait() const noexcept {
    bool seen = false;
    for (int i = 0; i < 4000 && !seen; ++i)
      seen = done();
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (!seen && std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
      seen = done();
    }
    if (!done()) {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      while (state_.load(std::memory_order_seq_cst) == 0)
        state_.wait(0, std::memory_order_seq_cst);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    settle();
  }


private:
  std::atomic<uint32_t> state_{0};
  mutable std::atomic<int> sleepers_{0};  // threads asleep in wait()
  mutable std::mutex mutex_;
  mutable std::function<void()> on_set_;
};

} // namespace troupe::internal

#include <troupe/actors/gpu/nccl_progress_poller.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace troupe::internal {

namespace {

// Rounds with only a yield between them, after something changed: NCCL's
// launch thread puts a group on the stream within tens of microseconds.
constexpr auto spin_period = std::chrono::microseconds{200};
// Then naps of this, while watches remain (a communicator being created
// takes milliseconds).
constexpr auto nap = std::chrono::microseconds{20};

} // namespace

struct NcclProgressPoller::State {
  struct Watch {
    NcclComm comm;
    std::chrono::steady_clock::time_point until;
    std::function<void()> changed;
  };
  std::mutex mutex;  // held while the thread reads a communicator's state
  std::condition_variable wake;
  std::vector<Watch> watches;
  std::uint64_t watches_added = 0;
  bool stopping = false;
};

NcclProgressPoller::NcclProgressPoller() : state_(std::make_shared<State>()) {
}

NcclProgressPoller::~NcclProgressPoller() {
  {
    std::lock_guard<std::mutex> guard{state_->mutex};
    state_->stopping = true;
  }
  state_->wake.notify_all();
  if (!thread_.joinable())
    return;
  if (thread_.get_id() == std::this_thread::get_id())
    thread_.detach();  // it holds the state, and ends at its next round
  else
    thread_.join();
}

void NcclProgressPoller::watch(NcclComm comm, std::chrono::nanoseconds max_wait, std::function<void()> changed) {
  {
    std::lock_guard<std::mutex> guard{state_->mutex};
    state_->watches.push_back(State::Watch{comm, std::chrono::steady_clock::now() + max_wait, std::move(changed)});
    ++state_->watches_added;
    if (!thread_.joinable())
      thread_ = std::thread([state = state_] { run(state); });
  }
  state_->wake.notify_one();
}

void NcclProgressPoller::forget(NcclComm comm) {
  std::lock_guard<std::mutex> guard{state_->mutex};
  auto& watches = state_->watches;
  watches.erase(std::remove_if(watches.begin(), watches.end(), [comm](const State::Watch& w) { return w.comm == comm; }),
                watches.end());
}

void NcclProgressPoller::run(const std::shared_ptr<State>& state) {
#ifdef __linux__
  // Naps of 20 us, not the default timer slack's 50 us more.
  (void) prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
  auto& watches = state->watches;
  auto active_since = std::chrono::steady_clock::now();
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> lock{state->mutex};
  while (!state->stopping) {
    if (seen != state->watches_added) {  // a new group: spin for it
      seen = state->watches_added;
      active_since = std::chrono::steady_clock::now();
    }
    if (watches.empty()) {
      state->wake.wait(lock, [&] { return state->stopping || !watches.empty(); });
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::function<void()>> changed;
    for (auto it = watches.begin(); it != watches.end();) {
      bool moved = true;
      try {
        std::string error;
        moved = nccl_backend().state(it->comm, error) != NcclState::in_progress;
      } catch (...) {
        // The actor reads the state itself, and reports what went wrong.
      }
      if (moved || now >= it->until) {
        changed.push_back(std::move(it->changed));
        it = watches.erase(it);
      } else {
        ++it;
      }
    }
    if (!changed.empty()) {
      lock.unlock();
      for (auto& tell : changed)
        tell();
      changed.clear();  // may drop an actor, and with it this poller: `state` stays
      lock.lock();
      active_since = std::chrono::steady_clock::now();
      continue;
    }
    if (std::chrono::steady_clock::now() - active_since < spin_period) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    } else {
      state->wake.wait_for(lock, nap);
    }
  }
}

} // namespace troupe::internal

#include "cuda_event_poller.hpp"

#include <chrono>
#include <utility>

namespace troupe::internal {

namespace {

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

/// Rounds of polling with only a yield between them before the thread naps:
/// a kernel of a training step finishes within tens of microseconds.
constexpr int spin_rounds = 2000;
constexpr auto nap = std::chrono::microseconds(20);
/// How long the thread watches for new events before it sleeps.
constexpr auto idle_watch = std::chrono::microseconds(200);

} // namespace

CudaEventPoller::CudaEventPoller(std::function<void(int, cudaEvent_t)> recycle) : recycle_(std::move(recycle)) {
}

CudaEventPoller::~CudaEventPoller() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void CudaEventPoller::watch(int gpu, cudaStream_t stream, cudaEvent_t event,
                            std::function<void(const std::string&)> done) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    incoming_.push_back(Pending{gpu, stream, event, std::move(done)});
    ++unreported_[stream];
    has_incoming_.store(true, std::memory_order_release);
    if (!thread_.joinable())
      thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
}

void CudaEventPoller::drain(cudaStream_t stream) {
  std::unique_lock<std::mutex> lock{mutex_};
  reported_.wait(lock, [&] { return unreported_.count(stream) == 0; });
}

bool CudaEventPoller::report_completed(std::vector<Pending>& pending) {
  // `pending` is in the order of watch(): once one event of a stream is not
  // complete, its stream's later events wait for the next round, so that a
  // stream's callbacks come in order (a device actor frees staging buffers
  // by sequence number).
  std::vector<cudaStream_t> blocked;
  std::vector<cudaStream_t> reported;
  for (std::size_t i = 0; i < pending.size();) {
    bool stream_blocked = false;
    for (auto s : blocked)
      stream_blocked = stream_blocked || s == pending[i].stream;
    if (stream_blocked) {
      ++i;
      continue;
    }
    const cudaError_t status = cudaEventQuery(pending[i].event);
    if (status == cudaErrorNotReady) {
      blocked.push_back(pending[i].stream);
      ++i;
      continue;
    }
    auto done = std::move(pending[i]);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    // The event's own failure is the stream's error (CUDA's errors after a
    // faulting kernel are sticky); clear it from this thread's state.
    if (status != cudaSuccess)
      (void) cudaGetLastError();
    // The waiter first: recycling the event is not on its path.
    done.done(status == cudaSuccess ? std::string{} : describe(status));
    recycle_(done.gpu, done.event);
    reported.push_back(done.stream);
  }
  if (reported.empty())
    return false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    for (auto s : reported)
      if (auto it = unreported_.find(s); it != unreported_.end() && --it->second == 0)
        unreported_.erase(it);
  }
  reported_.notify_all();
  return true;
}

void CudaEventPoller::run() {
  std::vector<Pending> pending;
  int idle_rounds = 0;
  for (;;) {
    if (pending.empty()) {
      const auto until = std::chrono::steady_clock::now() + idle_watch;
      while (!has_incoming_.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
    }
    {
      std::unique_lock<std::mutex> lock{mutex_};
      if (pending.empty())
        wake_.wait(lock, [&] { return stopping_ || !incoming_.empty(); });
      has_incoming_.store(false, std::memory_order_relaxed);
      if (stopping_ && incoming_.empty() && pending.empty())
        return;
      for (auto& p : incoming_)
        pending.push_back(std::move(p));
      incoming_.clear();
    }
    const bool progressed = report_completed(pending);
    if (progressed || pending.empty()) {
      idle_rounds = 0;
    } else if (++idle_rounds < spin_rounds) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
    }
  }
}

} // namespace troupe::internal

#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

namespace troupe::internal {

/// Reports when CUDA events complete, from one thread that polls them, as
/// TensorFlow's EventMgr does: a host callback (cudaStreamAddCallback) costs
/// tens of microseconds of latency and stalls its stream while it runs,
/// where a poll sees a completed event within a few microseconds. The thread
/// polls while events are pending, yielding between rounds; with none, it
/// watches for new ones for a moment (a training step sends the next within
/// microseconds, and a condition variable's wake-up costs tens of them)
/// before it sleeps on a condition variable.
class CudaEventPoller {
public:
  CudaEventPoller() = default;
  ~CudaEventPoller();
  CudaEventPoller(const CudaEventPoller&) = delete;
  CudaEventPoller& operator=(const CudaEventPoller&) = delete;

  /// Calls `done` with "" or the stream's error once `event` (recorded on a
  /// stream of `gpu`) completes, then destroys the event. `done` runs on the
  /// poller's thread and must not call CUDA.
  void watch(int gpu, cudaEvent_t event, std::function<void(const std::string& error)> done);

private:
  struct Pending {
    int gpu;
    cudaEvent_t event;
    std::function<void(const std::string&)> done;
  };

  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Pending> incoming_;
  std::atomic<bool> has_incoming_{false};
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace troupe::internal

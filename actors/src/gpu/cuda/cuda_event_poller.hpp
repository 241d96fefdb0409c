#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
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
  /// `recycle` takes back each event once reported (the backend's pool).
  explicit CudaEventPoller(std::function<void(int gpu, cudaEvent_t event)> recycle);
  ~CudaEventPoller();
  CudaEventPoller(const CudaEventPoller&) = delete;
  CudaEventPoller& operator=(const CudaEventPoller&) = delete;

  /// Calls `done` with "" or the stream's error once `event` (recorded on
  /// `stream` of `gpu`) completes, then hands the event to `recycle`. The events of one
  /// stream are reported in the order they were watched, even when a later
  /// one is seen complete first. `done` runs on the poller's thread and must
  /// not call CUDA.
  void watch(int gpu, cudaStream_t stream, cudaEvent_t event, std::function<void(const std::string& error)> done);

  /// Returns once every event watched on `stream` so far was reported (its
  /// `done` has returned); the stream's work must be complete or completing.
  void drain(cudaStream_t stream);

private:
  struct Pending {
    int gpu;
    cudaStream_t stream;
    cudaEvent_t event;
    std::function<void(const std::string&)> done;
  };

  void run();
  /// Reports the events found complete, each stream's in order; true when any was.
  bool report_completed(std::vector<Pending>& pending);

  std::function<void(int, cudaEvent_t)> recycle_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Pending> incoming_;
  std::atomic<bool> has_incoming_{false};
  /// Events watched and not yet reported, per stream (drain waits for zero).
  std::map<cudaStream_t, int> unreported_;
  std::condition_variable reported_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace troupe::internal

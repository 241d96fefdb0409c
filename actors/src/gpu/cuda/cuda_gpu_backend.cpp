#include "cuda_gpu_backend.hpp"

#include "cuda_event_poller.hpp"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

/// Error(internal) naming the GPU and the call when `status` is a failure.
void check(cudaError_t status, int gpu, const char* call) {
  if (status != cudaSuccess)
    fail(Errc::internal, "GPU " + std::to_string(gpu) + ": " + call + " failed (" + describe(status) + ")");
}

class CudaGpuBackend final : public GpuBackend {
public:
  CudaGpuBackend() {
    int count = 0;
    const auto status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      // No driver or no card: a machine without a GPU, not an error of the program.
      reason_ = "CUDA reports " + describe(status);
      (void) cudaGetLastError();
      count_ = 0;
    } else {
      count_ = count;
      if (count == 0)
        reason_ = "CUDA found no GPU";
    }
  }

  // -- discovery ------------------------------------------------------------------

  int device_count() override { return count_; }

  std::string unavailable_reason() override { return reason_; }

  GpuProperties properties(int gpu) override {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, gpu), gpu, "cudaGetDeviceProperties");
    GpuProperties out;
    out.name = prop.name;
    out.total_memory = prop.totalGlobalMem;
    out.compute_capability_major = prop.major;
    out.compute_capability_minor = prop.minor;
    select(gpu);
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), gpu, "cudaMemGetInfo");
    out.free_memory = free;
    return out;
  }

  // -- memory ---------------------------------------------------------------------

  void* allocate_device(int gpu, std::size_t bytes) override {
    select(gpu);
    void* ptr = nullptr;
    const auto status = cudaMalloc(&ptr, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void) cudaGetLastError();
      return nullptr;
    }
    check(status, gpu, "cudaMalloc");
    return ptr;
  }

  void free_device(int gpu, void* ptr) noexcept override {
    if (cudaSetDevice(gpu) == cudaSuccess)
      (void) cudaFree(ptr);
  }

  void* allocate_pinned(std::size_t bytes) override {
    void* ptr = nullptr;
    const auto status = cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable);
    if (status == cudaErrorMemoryAllocation) {
      (void) cudaGetLastError();
      return nullptr;
    }
    check(status, -1, "cudaHostAlloc");
    return ptr;
  }

  void free_pinned(void* ptr) noexcept override { (void) cudaFreeHost(ptr); }

  // -- streams --------------------------------------------------------------------

  void make_current(int gpu) override { select(gpu); }

  bool can_read_peer(int gpu, int peer) override {
    return gpu == peer || enable_peer_access(gpu, peer);
  }

  GpuStream create_stream(int gpu) override {
    select(gpu);
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), gpu, "cudaStreamCreateWithFlags");
    return stream;
  }

  void destroy_stream(int gpu, GpuStream stream) noexcept override {
    if (cudaSetDevice(gpu) != cudaSuccess)
      return;
    (void) cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    // As the emulated backend does: no callback of the stream runs after this
    // (the device actor frees the staging buffers that callbacks read).
    poller_.drain(static_cast<cudaStream_t>(stream));
    (void) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  }

  void copy_2d_async(int gpu, GpuStream stream, void* dst, std::size_t dst_pitch, const void* src,
                     std::size_t src_pitch, std::size_t width, std::size_t rows) override {
    select(gpu);
    auto* s = static_cast<cudaStream_t>(stream);
    // cudaMemcpy2DAsync refuses pitches beyond the device's maximum (2^31 - 1
    // bytes on current cards): copy such rows one by one.
    constexpr std::size_t max_pitch = (std::size_t{1} << 31) - 1;
    if (dst_pitch > max_pitch || src_pitch > max_pitch) {
      for (std::size_t r = 0; r < rows; ++r)
        check(cudaMemcpyAsync(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch,
                              width, cudaMemcpyDeviceToDevice, s),
              gpu, "cudaMemcpyAsync (device to device, a row of a 2D copy)");
      return;
    }
    check(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDeviceToDevice, s), gpu,
          "cudaMemcpy2DAsync (device to device)");
  }

  void copy_async(int gpu, GpuStream stream, void* dst, const void* src, std::size_t bytes, GpuCopyKind kind,
                  int src_gpu) override {
    select(gpu);
    auto* s = static_cast<cudaStream_t>(stream);
    switch (kind) {
      case GpuCopyKind::host_to_device:
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), gpu, "cudaMemcpyAsync (host to device)");
        return;
      case GpuCopyKind::device_to_host:
        check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), gpu, "cudaMemcpyAsync (device to host)");
        return;
      case GpuCopyKind::device_to_device:
        if (src_gpu == gpu) {
          check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), gpu,
                "cudaMemcpyAsync (device to device)");
        } else {
          enable_peer_access(gpu, src_gpu);
          check(cudaMemcpyPeerAsync(dst, gpu, src, src_gpu, bytes, s), gpu, "cudaMemcpyPeerAsync");
        }
        return;
    }
  }

  void zero_async(int gpu, GpuStream stream, void* dst, std::size_t bytes) override {
    select(gpu);
    check(cudaMemsetAsync(dst, 0, bytes, static_cast<cudaStream_t>(stream)), gpu, "cudaMemsetAsync");
  }

  void notify_when_done(int gpu, GpuStream stream, std::function<void(const std::string&)> done) override {
    // An event behind the stream's work, polled (CudaEventPoller says why).
    auto event = static_cast<cudaEvent_t>(create_event(gpu));
    try {
      record_event(gpu, stream, event);
    } catch (...) {
      destroy_event(gpu, event);
      throw;
    }
    poller_.watch(gpu, static_cast<cudaStream_t>(stream), event, std::move(done));
  }

  // -- events ---------------------------------------------------------------------

  GpuEvent create_event(int gpu) override {
    {
      // Every transfer takes an event: reuse them (cudaEventCreate costs
      // about a microsecond on the path of each readback).
      std::lock_guard<std::mutex> guard{mutex_};
      if (auto& pool = event_pool_[gpu]; !pool.empty()) {
        cudaEvent_t event = pool.back();
        pool.pop_back();
        return event;
      }
    }
    select(gpu);
    cudaEvent_t event = nullptr;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), gpu, "cudaEventCreateWithFlags");
    return event;
  }

  void destroy_event(int gpu, GpuEvent event) noexcept override {
    // Back to the pool, even while a recording is pending: a later record
    // replaces it, and waits enqueued before kept what they waited for.
    try {
      std::lock_guard<std::mutex> guard{mutex_};
      event_pool_[gpu].push_back(static_cast<cudaEvent_t>(event));
    } catch (...) {
      if (cudaSetDevice(gpu) == cudaSuccess)
        (void) cudaEventDestroy(static_cast<cudaEvent_t>(event));
    }
  }

  void record_event(int gpu, GpuStream stream, GpuEvent event) override {
    select(gpu);
    check(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)), gpu,
          "cudaEventRecord");
  }

  void wait_event(int gpu, GpuStream stream, GpuEvent event) override {
    select(gpu);
    check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0), gpu,
          "cudaStreamWaitEvent");
  }

private:
  static void select(int gpu) { check(cudaSetDevice(gpu), gpu, "cudaSetDevice"); }

  /// Lets `gpu` read `peer`'s memory directly where the cards allow it (tried
  /// once per pair); otherwise cudaMemcpyPeerAsync stages through the host.
  /// Returns whether `gpu` has peer access to `peer`.
  bool enable_peer_access(int gpu, int peer) {
    std::lock_guard<std::mutex> guard{mutex_};
    if (auto known = peer_access_.find({gpu, peer}); known != peer_access_.end())
      return known->second;
    bool enabled = false;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, gpu, peer) == cudaSuccess && can != 0) {
      select(gpu);
      const auto status = cudaDeviceEnablePeerAccess(peer, 0);
      if (status != cudaSuccess && status != cudaErrorPeerAccessAlreadyEnabled)
        check(status, gpu, "cudaDeviceEnablePeerAccess");
      enabled = true;
    }
    (void) cudaGetLastError();
    peer_access_[{gpu, peer}] = enabled;
    return enabled;
  }

  int count_ = 0;
  std::string reason_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, bool> peer_access_;
  std::map<int, std::vector<cudaEvent_t>> event_pool_;  // by GPU
  CudaEventPoller poller_{[this](int gpu, cudaEvent_t event) { destroy_event(gpu, event); }};
};

} // namespace

std::unique_ptr<GpuBackend> make_cuda_gpu_backend() {
  return std::make_unique<CudaGpuBackend>();
}

} // namespace troupe::internal

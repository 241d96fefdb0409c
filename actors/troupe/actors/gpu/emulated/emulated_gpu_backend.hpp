#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <troupe/actors/gpu/gpu_backend.hpp>

namespace troupe::testing {

/// GPUs emulated in host memory, so that troupe's GPU code paths (device
/// actors, transfers, allocators, GPU tensors) run in tests on machines
/// without a GPU. Work runs when it is enqueued; completions are reported
/// from a thread of the backend, as CUDA's are. It checks what CUDA would
/// not let pass: device pointers must lie in memory of the GPU they are used
/// on, host pointers of a copy must be pinned, every block is freed once.
class EmulatedGpuBackend final : public internal::GpuBackend {
public:
  /// `gpus` cards of `memory_per_gpu` bytes each.
  EmulatedGpuBackend(int gpus, std::size_t memory_per_gpu);
  ~EmulatedGpuBackend() override;

  // -- internal::GpuBackend -----------------------------------------------------------

  int device_count() override { return gpus_; }
  std::string unavailable_reason() override { return "the emulated backend has no GPU"; }
  internal::GpuProperties properties(int gpu) override;
  void* allocate_device(int gpu, std::size_t bytes) override;
  void free_device(int gpu, void* ptr) noexcept override;
  void* allocate_pinned(std::size_t bytes) override;
  void free_pinned(void* ptr) noexcept override;
  void make_current(int) override {}
  bool can_read_peer(int, int) override { return true; }
  internal::GpuStream create_stream(int gpu) override;
  void destroy_stream(int gpu, internal::GpuStream stream) noexcept override;
  void copy_async(int gpu, internal::GpuStream stream, void* dst, const void* src, std::size_t bytes,
                  internal::GpuCopyKind kind, int src_gpu) override;
  void copy_2d_async(int gpu, internal::GpuStream stream, void* dst, std::size_t dst_pitch, const void* src,
                     std::size_t src_pitch, std::size_t width, std::size_t rows) override;
  void zero_async(int gpu, internal::GpuStream stream, void* dst, std::size_t bytes) override;
  void notify_when_done(int gpu, internal::GpuStream stream,
                        std::function<void(const std::string&)> done) override;
  internal::GpuEvent create_event(int gpu) override;
  void destroy_event(int gpu, internal::GpuEvent event) noexcept override;
  void record_event(int gpu, internal::GpuStream stream, internal::GpuEvent event) override;
  void wait_event(int gpu, internal::GpuStream stream, internal::GpuEvent event) override;

  // -- what tests look at ---------------------------------------------------------------

  /// Device bytes allocated and not freed, over all GPUs.
  [[nodiscard]] std::size_t device_bytes_held() const;
  [[nodiscard]] std::size_t pinned_bytes_held() const;
  [[nodiscard]] int streams_created() const;
  [[nodiscard]] int streams_alive() const;
  /// Copies enqueued so far, of `kind`.
  [[nodiscard]] int copies(internal::GpuCopyKind kind) const;
  /// Waits until `count` copies of `kind` were enqueued, or `timeout` passed;
  /// returns whether they were.
  [[nodiscard]] bool wait_for_copies(internal::GpuCopyKind kind, int count, std::chrono::milliseconds timeout);
  /// Events created and not destroyed.
  [[nodiscard]] int events_alive() const;
  /// Problems found (a pointer on the wrong GPU, an unpinned host buffer, a
  /// double free, a wait on an event never recorded, which CUDA would let
  /// run ahead); empty when the GPU code used the backend as CUDA requires.
  [[nodiscard]] std::string misuse() const;

  /// The next copy_async throws, as a failed cudaMemcpyAsync does.
  void fail_next_copy();
  /// While held, no stream reports its work done (notify_when_done's
  /// callbacks wait), as a stream stuck behind a kernel that never ends.
  /// Release before the Runtime goes: a stream is destroyed once its
  /// callbacks ran.
  void hold_completions(bool held);
  /// From the next notify_when_done on, every one reports `error` as the
  /// stream's error, as CUDA does after a sticky error (a faulting kernel).
  void fail_streams_from_now(std::string error);

private:
  struct Block {
    int gpu;
    std::size_t bytes;
  };
  /// The GPU whose block holds [ptr, ptr + bytes), or -1. Caller holds mutex_.
  int gpu_of(const void* ptr, std::size_t bytes) const;
  bool pinned(const void* ptr, std::size_t bytes) const;
  void note(const std::string& problem);
  void deliver();

  const int gpus_;
  const std::size_t memory_per_gpu_;
  mutable std::mutex mutex_;
  std::map<const std::byte*, Block> device_blocks_;
  std::map<const std::byte*, std::size_t> pinned_blocks_;
  std::map<int, std::size_t> used_;
  std::map<internal::GpuCopyKind, int> copies_;
  struct Event {
    int gpu;
    bool recorded;
  };
  std::map<int, Event> events_;  // by id, the GpuEvent's value
  int next_event_ = 1;
  int streams_created_ = 0;
  int streams_alive_ = 0;
  bool fail_next_copy_ = false;
  std::string stream_error_;
  std::string misuse_;
  // Completions, delivered in order by one thread.
  std::condition_variable wake_;
  std::deque<std::function<void()>> completions_;
  bool delivering_ = false;
  bool held_ = false;
  std::condition_variable idle_;  // no completion queued or running
  std::condition_variable copied_;  // a copy was enqueued
  bool stopping_ = false;
  std::thread deliverer_;
};

} // namespace troupe::testing

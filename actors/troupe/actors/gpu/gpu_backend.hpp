#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <troupe/core/device_memory.hpp>
#include <troupe/core/scoped_override.hpp>

namespace troupe::internal {

/// A backend's event: a point in a stream's work that other streams can wait for.
using GpuEvent = void*;

/// What a GPU is, as the backend reports it.
struct GpuProperties {
  std::string name;              ///< "NVIDIA H100 80GB HBM3"
  std::size_t total_memory = 0;  ///< bytes
  std::size_t free_memory = 0;   ///< bytes free when asked
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
};

/// Which memories a copy moves bytes between.
enum class GpuCopyKind { host_to_device, device_to_host, device_to_device };

/// The GPU driver that troupe's device actors use: CUDA's runtime API in a
/// CUDA build, none in a build without CUDA, a host-memory emulation in
/// troupe's tests.
///
/// Every call names the physical GPU it acts on and makes it current itself:
/// nothing relies on a thread's current device, since actors and the fibers
/// on them move between threads. Calls other than device_count and
/// unavailable_reason throw Error(internal) naming the GPU and the failed
/// driver call. Thread-safe.
class GpuBackend {
public:
  virtual ~GpuBackend() = default;

  // -- discovery ------------------------------------------------------------------

  /// Physical GPUs this process may use; 0 without any (never throws).
  [[nodiscard]] virtual int device_count() = 0;
  /// Why device_count() is 0, for error messages ("this build of troupe has
  /// no CUDA support ...", "CUDA reports: no CUDA-capable device is detected").
  [[nodiscard]] virtual std::string unavailable_reason() = 0;
  [[nodiscard]] virtual GpuProperties properties(int gpu) = 0;

  // -- memory ---------------------------------------------------------------------

  /// Device memory on `gpu`, or nullptr when the card is out of memory.
  [[nodiscard]] virtual void* allocate_device(int gpu, std::size_t bytes) = 0;
  virtual void free_device(int gpu, void* ptr) noexcept = 0;
  /// Page-locked host memory for staging copies, or nullptr when out of it.
  [[nodiscard]] virtual void* allocate_pinned(std::size_t bytes) = 0;
  virtual void free_pinned(void* ptr) noexcept = 0;

  // -- streams --------------------------------------------------------------------

  /// Makes `gpu` current on the calling thread, for kernels launched right
  /// after on this thread (a device actor does it before every launch).
  virtual void make_current(int gpu) = 0;
  /// Whether kernels running on `gpu` can read memory of `peer` directly
  /// (the same card, or peer access, which this enables once per pair).
  [[nodiscard]] virtual bool can_read_peer(int gpu, int peer) = 0;

  [[nodiscard]] virtual GpuStream create_stream(int gpu) = 0;
  /// Waits for the stream's work and for its notify_when_done callbacks to
  /// return, then destroys it.
  virtual void destroy_stream(int gpu, GpuStream stream) noexcept = 0;
  /// Enqueues a copy of `bytes` on `stream` of `gpu`; host memory must be
  /// pinned (allocate_pinned). Device to device may cross GPUs (`src` on
  /// `src_gpu`), through peer access where the cards allow it.
  virtual void copy_async(int gpu, GpuStream stream, void* dst, const void* src, std::size_t bytes,
                          GpuCopyKind kind, int src_gpu) = 0;
  /// Enqueues a copy of `rows` rows of `width` bytes within `gpu`'s memory,
  /// from rows `src_pitch` bytes apart to rows `dst_pitch` bytes apart
  /// (cudaMemcpy2DAsync): a block of a row-major tensor into a wider one.
  virtual void copy_2d_async(int gpu, GpuStream stream, void* dst, std::size_t dst_pitch, const void* src,
                             std::size_t src_pitch, std::size_t width, std::size_t rows) = 0;
  /// Enqueues setting `bytes` at `dst` to zero.
  virtual void zero_async(int gpu, GpuStream stream, void* dst, std::size_t bytes) = 0;
  /// Calls `done` once the work enqueued on `stream` so far has finished,
  /// with "" or the error that stopped the stream. `done` runs on a thread of
  /// the backend, never inside this call, and must not call the backend; the
  /// callbacks of one stream run in the order they were asked for.
  virtual void notify_when_done(int gpu, GpuStream stream, std::function<void(const std::string& error)> done) = 0;

  // -- events (ordering between streams, no timing) --------------------------------

  [[nodiscard]] virtual GpuEvent create_event(int gpu) = 0;
  /// May be called while a recording is still pending (CUDA then frees it later).
  virtual void destroy_event(int gpu, GpuEvent event) noexcept = 0;
  /// Enqueues recording `event` on `stream`: it completes with the work enqueued before it.
  virtual void record_event(int gpu, GpuStream stream, GpuEvent event) = 0;
  /// Enqueues a wait on `stream`: what is enqueued on it later runs after
  /// `event`, recorded on a stream of any GPU of the process, completed.
  /// The event must have been recorded before this call.
  virtual void wait_event(int gpu, GpuStream stream, GpuEvent event) = 0;
};

/// The process's backend: CUDA in a CUDA build, else one without GPUs.
[[nodiscard]] GpuBackend& gpu_backend();

/// Replaces the process's backend while it lives (troupe's tests run the GPU
/// code on an emulated backend this way).
using ScopedGpuBackend = ScopedOverride<GpuBackend>;

} // namespace troupe::internal

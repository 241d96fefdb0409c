#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <troupe/core/fwd.hpp>

namespace troupe::internal {

/// A GPU driver's stream (the GPU backend's, actors/gpu/gpu_backend.hpp):
/// work enqueued on it runs in order on one GPU.
using GpuStream = void*;

/// Library state a stream's kernels keep between launches (a cuBLAS handle
/// bound to the stream), created by the kernels on first use and owned by
/// the device actor, which drops it after its stream.
struct GpuLibraryHandles {
  std::shared_ptr<void> blas;
};

/// Where a kernel launch enqueues its work: the physical GPU (current on the
/// launching thread), the logical GPU's stream and its library state.
struct GpuLaunchContext {
  int gpu = 0;
  GpuStream stream = nullptr;
  GpuLibraryHandles* handles = nullptr;
};

/// Memory of one device whose bytes the host cannot address (a logical GPU):
/// what a Tensor needs to allocate, free and move its bytes. The Runtime that
/// owns the device implements it (its caching allocator, and copies made by
/// the device's actor) and registers it for the device's name.
///
/// allocate/deallocate are thread-safe and return at once. The copies block
/// the calling thread, or suspend the calling fiber, until the bytes are
/// there; they throw Error naming the device when the device failed or its
/// Runtime is gone.
class DeviceMemory {
public:
  virtual ~DeviceMemory() = default;

  /// The device's short name, "GPU:0".
  [[nodiscard]] virtual const std::string& device() const noexcept = 0;
  /// The physical card (CUDA device ordinal) this logical device lives on;
  /// -1 when it has none (a test's memory).
  [[nodiscard]] virtual int card() const noexcept { return -1; }

  /// A block of at least `bytes`; Error(resource_exhausted) naming the device,
  /// the request and what is held when it does not fit.
  [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
  /// Returns a block of allocate() (work still queued on the device's stream
  /// that uses it runs before any later user of the block).
  virtual void deallocate(void* ptr) noexcept = 0;

  /// `bytes` from this device at `src` to host memory at `dst`.
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  /// Enqueues `bytes` from host memory at `src` to this device at `dst` and
  /// returns at once: whatever is sent to the device later runs after it.
  /// `owner` keeps `src` alive until the device's actor has taken its copy.
  /// A copy that fails poisons the device, as a failed launch does.
  virtual void copy_from_host(void* dst, std::shared_ptr<const void> owner, const void* src, std::size_t bytes) = 0;
  /// `bytes` from `src` in the memory of `source` (another logical GPU of the
  /// same Runtime, or this one) to this device at `dst`.
  virtual void copy_from_device(void* dst, DeviceMemory& source, const void* src, std::size_t bytes) = 0;
  /// Zeroes `bytes` at `dst` on this device.
  virtual void fill_zero(void* dst, std::size_t bytes) = 0;

  /// Enqueues a kernel on the device's stream after everything sent to the
  /// device before it, and returns without waiting: `enqueue` runs on the
  /// device's actor. Memory the kernel uses may be freed at once, since every
  /// later user of a block is enqueued after it (one stream per device). A
  /// kernel that fails to launch poisons the device: every later copy or
  /// synchronize on it throws Error(internal) naming `what` and the cause.
  virtual void launch(const char* what, std::function<void(const GpuLaunchContext&)> enqueue) = 0;
  /// As launch, but returns once the device's actor has enqueued the work
  /// (not once it ran), and throws what stopped it: for work that records an
  /// event another stream is about to wait for.
  virtual void launch_and_confirm(const char* what, std::function<void(const GpuLaunchContext&)> enqueue) = 0;
  /// Waits until the device has run everything sent to it so far; throws the
  /// stream's error. Another device's stream that reads this device's memory
  /// calls it first.
  virtual void synchronize() = 0;
};

/// The memory serving `device` (matched by type and index, "GPU:1" and
/// "/gpu:1" alike), or null for host devices. A GPU that no Runtime of this
/// process serves is Error(not_found) naming the GPUs there are, or why there
/// are none.
[[nodiscard]] std::shared_ptr<DeviceMemory> device_memory_for(const DeviceSpec& device);

/// The name of the first logical GPU ("GPU:2") on physical card `card` (a
/// CUDA device ordinal), or Error(not_found) naming the cards this process's
/// GPUs are on.
[[nodiscard]] std::string device_of_card(int card);

/// Makes `memory` serve its device until unregistered. Several Runtimes may
/// serve the same device name at once: the one registered last serves, and
/// the one before it serves again once it unregisters.
void register_device_memory(std::shared_ptr<DeviceMemory> memory);
void unregister_device_memory(const DeviceMemory* memory) noexcept;

/// Says why this process has no GPU at all ("this build of troupe has no CUDA
/// support ..."), or "" when it has some. core knows no GPU driver: the GPU
/// backend (actors/gpu/gpu_backend.cpp) installs this once, so that
/// device_memory_for can name the cause and the fix.
using GpuAbsenceReason = std::string (*)();
void set_gpu_absence_reason(GpuAbsenceReason reason) noexcept;

} // namespace troupe::internal

#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <troupe/core/fwd.hpp>

namespace troupe::internal {

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

  /// A block of at least `bytes`; Error(resource_exhausted) naming the device,
  /// the request and what is held when it does not fit.
  [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
  /// Returns a block of allocate() (work still queued on the device's stream
  /// that uses it runs before any later user of the block).
  virtual void deallocate(void* ptr) noexcept = 0;

  /// `bytes` from this device at `src` to host memory at `dst`.
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  /// `bytes` from host memory at `src` to this device at `dst`.
  virtual void copy_from_host(void* dst, const void* src, std::size_t bytes) = 0;
  /// `bytes` from `src` in the memory of `source` (another logical GPU of the
  /// same Runtime, or this one) to this device at `dst`.
  virtual void copy_from_device(void* dst, DeviceMemory& source, const void* src, std::size_t bytes) = 0;
  /// Zeroes `bytes` at `dst` on this device.
  virtual void fill_zero(void* dst, std::size_t bytes) = 0;
};

/// The memory serving `device` (matched by type and index, "GPU:1" and
/// "/gpu:1" alike), or null for host devices. A GPU that no Runtime of this
/// process serves is Error(not_found) naming the GPUs there are, or why there
/// are none.
[[nodiscard]] std::shared_ptr<DeviceMemory> device_memory_for(const DeviceSpec& device);

/// Makes `memory` serve its device until unregistered. Several Runtimes may
/// serve the same device name at once: the one registered last serves, and
/// the one before it serves again once it unregisters.
void register_device_memory(std::shared_ptr<DeviceMemory> memory);
void unregister_device_memory(const DeviceMemory* memory) noexcept;

} // namespace troupe::internal

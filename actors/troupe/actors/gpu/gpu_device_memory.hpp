#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <troupe/actors/gpu/caching_device_allocator.hpp>
#include <troupe/actors/gpu/gpu_device_messages.hpp>
#include <troupe/core/device_memory.hpp>

namespace troupe::internal {

class Executor;

/// A logical GPU's memory as Tensors see it: blocks from the GPU's caching
/// allocator (taken and returned directly, thread-safe), bytes moved by the
/// GPU's device actor (a GpuTransferMsg, waited for through
/// Executor::wait, so a fiber suspends instead of blocking its thread).
///
/// Tensors keep it alive after their Runtime is gone; their memory is still
/// freed then, but a copy is Error(failed_precondition) saying so.
///
/// allocate() may wait for the device actor (the allocator's release barrier,
/// before cached blocks go back to the driver): call it from user threads
/// and replicas' fibers, never from an actor's message handler.
class GpuDeviceMemory final : public DeviceMemory {
public:
  GpuDeviceMemory(std::string name, int gpu, std::unique_ptr<CachingDeviceAllocator> allocator,
                  Executor& runtime, GpuDeviceActorHandle device_actor);

  // -- DeviceMemory ----------------------------------------------------------------

  [[nodiscard]] const std::string& device() const noexcept override { return name_; }
  [[nodiscard]] int card() const noexcept override { return gpu_; }
  [[nodiscard]] void* allocate(std::size_t bytes) override { return allocator_->allocate(bytes); }
  void deallocate(void* ptr) noexcept override { allocator_->deallocate(ptr); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  void copy_from_host(void* dst, std::shared_ptr<const void> owner, const void* src, std::size_t bytes) override;
  void copy_from_device(void* dst, DeviceMemory& source, const void* src, std::size_t bytes) override;
  void fill_zero(void* dst, std::size_t bytes) override;
  void launch(const char* what, std::function<void(const GpuLaunchContext&)> enqueue) override;
  void launch_and_confirm(const char* what, std::function<void(const GpuLaunchContext&)> enqueue) override;
  void synchronize() override;

  // -- properties -----------------------------------------------------------------

  /// The physical GPU this logical one lives on.
  [[nodiscard]] int gpu() const noexcept { return gpu_; }
  [[nodiscard]] CachingDeviceAllocator& allocator() noexcept { return *allocator_; }

  /// Issues a group of NCCL calls on the device's stream, after everything
  /// sent to it before (GpuDeviceActor); returns once the group is on the
  /// stream. Throws Error(internal) with the reason it failed.
  void nccl(NcclGroupMsg group);
  /// Aborts this device's rank of communicator `name`, if it has one.
  void abort_nccl(const std::string& name, const std::string& why);
  /// Frees this device's rank of communicator `name` once its collectives finished.
  void close_nccl(const std::string& name);

  /// Called when the Runtime stops: later copies fail, frees still work.
  void detach() noexcept;

private:
  /// Sends the transfer to the device actor and waits for it; throws its error.
  void run(GpuTransfer::Kind kind, void* dst, const void* src, std::size_t bytes, int src_gpu, const char* what);

  std::string name_;
  int gpu_;
  std::unique_ptr<CachingDeviceAllocator> allocator_;
  std::mutex mutex_;
  Executor* runtime_;  // null once detached
  GpuDeviceActorHandle device_actor_;
};

} // namespace troupe::internal

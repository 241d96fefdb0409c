#pragma once

#include <memory>
#include <string>
#include <vector>

#include <troupe/actors/gpu/gpu_device_messages.hpp>
#include <troupe/actors/runtime.hpp>

namespace troupe::internal {

class GpuDeviceMemory;
class Executor;

/// A Runtime's logical GPUs: for each, a device actor (its stream) and a
/// caching allocator with the device's share of the card's memory,
/// registered so that Tensors on "GPU:n" use them. Stopping it (destroying
/// it) stops the device actors and detaches the memories from the Runtime.
class GpuDevices {
public:
  /// Error(invalid_argument) naming a bad GPU option of `options`.
  static void check_options(const RuntimeOptions& options);

  /// The logical GPUs of every physical GPU the backend reports; null when
  /// there is none (a log line says why, once per process).
  [[nodiscard]] static std::unique_ptr<GpuDevices> start(Executor& runtime, const RuntimeOptions& options);

  ~GpuDevices();
  GpuDevices(const GpuDevices&) = delete;
  GpuDevices& operator=(const GpuDevices&) = delete;

  /// "GPU:0", "GPU:1", ...
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] std::size_t size() const noexcept { return devices_.size(); }
  [[nodiscard]] GpuDeviceMemory& memory(std::size_t index) const { return *devices_.at(index).memory; }

private:
  struct Device {
    std::shared_ptr<GpuDeviceMemory> memory;
    GpuDeviceActorHandle actor;
  };

  GpuDevices() = default;

  std::vector<Device> devices_;
};

} // namespace troupe::internal

#include <troupe/actors/gpu/gpu_devices.hpp>

#include <atomic>

#include <caf/all.hpp>

#include <troupe/actors/gpu/gpu_device_actor.hpp>
#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

/// A physical GPU's memory from the backend, for a caching allocator.
class RawGpuMemory final : public RawDeviceMemory {
public:
  RawGpuMemory(GpuBackend& backend, int gpu) : backend_(backend), gpu_(gpu) {}
  void* allocate(std::size_t bytes) override { return backend_.allocate_device(gpu_, bytes); }
  void deallocate(void* ptr, std::size_t) noexcept override { backend_.free_device(gpu_, ptr); }

private:
  GpuBackend& backend_;
  int gpu_;
};

} // namespace

void GpuDevices::check_options(const RuntimeOptions& options) {
  if (options.logical_gpu_devices_per_gpu < 1)
    fail(Errc::invalid_argument, "logical_gpu_devices_per_gpu must be 1 or more (the logical GPUs each card is "
                                 "split into), got " + std::to_string(options.logical_gpu_devices_per_gpu));
}

std::unique_ptr<GpuDevices> GpuDevices::start(Executor& runtime, const RuntimeOptions& options) {
  auto& backend = gpu_backend();
  const int count = backend.device_count();
  if (count == 0) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      TROUPE_LOG(info, "gpu") << "no GPU devices: " << backend.unavailable_reason();
    return nullptr;
  }
  const int per_gpu = options.logical_gpu_devices_per_gpu;
  std::unique_ptr<GpuDevices> devices{new GpuDevices};
  // Shared by the device actors (and kept by each: the last one to stop ends it).
  auto nccl_poller = std::make_shared<NcclProgressPoller>();
  for (int gpu = 0; gpu < count; ++gpu) {
    const auto properties = backend.properties(gpu);
    // TensorFlow gives each virtual device a memory_limit; ours defaults to an
    // equal share of what is free now, keeping 5% for CUDA's own use.
    const std::size_t limit = options.gpu_memory_limit_bytes != 0
                                ? options.gpu_memory_limit_bytes
                                : static_cast<std::size_t>(static_cast<double>(properties.free_memory) * 0.95)
                                    / static_cast<std::size_t>(per_gpu);
    for (int j = 0; j < per_gpu; ++j) {
      const std::string name = "GPU:" + std::to_string(gpu * per_gpu + j);
      auto allocator = std::make_unique<CachingDeviceAllocator>(name, std::make_unique<RawGpuMemory>(backend, gpu),
                                                                limit);
      // Made here, so that a GPU that cannot run a stream fails the Runtime's
      // construction, naming it, rather than its first copy.
      auto actor = runtime.system().spawn<GpuDeviceActor>(
        GpuDeviceSetup{name, gpu, &backend, backend.create_stream(gpu), nccl_poller});
      auto memory = std::make_shared<GpuDeviceMemory>(name, gpu, std::move(allocator), runtime, actor);
      register_device_memory(memory);
      devices->devices_.push_back(Device{std::move(memory), std::move(actor)});
    }
    TROUPE_LOG(info, "gpu") << "GPU " << gpu << " (" << properties.name << ", compute capability "
                            << properties.compute_capability_major << "." << properties.compute_capability_minor
                            << ", " << human_bytes(properties.free_memory) << " free of " << human_bytes(properties.total_memory)
                            << "): logical devices GPU:" << gpu * per_gpu << "..GPU:" << gpu * per_gpu + per_gpu - 1
                            << ", " << human_bytes(limit) << " each";
  }
  return devices;
}

GpuDevices::~GpuDevices() {
  std::vector<GpuDeviceActorHandle> actors;
  for (auto& device : devices_) {
    unregister_device_memory(device.memory.get());
    device.memory->detach();
    caf::anon_send_exit(device.actor, caf::exit_reason::user_shutdown);
    actors.push_back(device.actor);
  }
  // Until they are gone, the actors may still run work queued before the
  // exit (copies and kernels that nobody waits for) on memory that the
  // allocators return to the driver once the last tensor drops. Stopped, they
  // have waited for their streams and dropped the rest.
  if (!actors.empty()) {
    caf::scoped_actor self{actors.front().home_system()};
    self->wait_for(actors);
  }
}

std::vector<std::string> GpuDevices::names() const {
  std::vector<std::string> out;
  out.reserve(devices_.size());
  for (const auto& device : devices_)
    out.push_back(device.memory->device());
  return out;
}

} // namespace troupe::internal

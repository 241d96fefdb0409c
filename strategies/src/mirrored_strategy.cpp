#include <troupe/strategies/mirrored_strategy.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/strategies/local_replicas_extended.hpp>

namespace troupe {

namespace {

// TensorFlow's default: every GPU, else the CPU.
std::vector<std::string> default_devices(Runtime& runtime) {
  std::vector<std::string> gpus;
  for (const auto& device : runtime.devices())
    if (device.is_gpu())
      gpus.push_back(device.short_name());
  if (gpus.empty())
    return {"CPU:0"};
  return gpus;
}

} // namespace

MirroredStrategy::MirroredStrategy(Runtime& runtime, const std::vector<std::string>& devices,
                                   CommunicationOptions options)
  : Strategy(std::make_unique<internal::LocalReplicasExtended>(
      "MirroredStrategy", runtime, devices.empty() ? default_devices(runtime) : devices, options)) {
  static_cast<internal::LocalReplicasExtended&>(extended()).start();
}

} // namespace troupe

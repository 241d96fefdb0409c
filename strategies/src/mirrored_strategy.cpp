#include <troupe/strategies/mirrored_strategy.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/strategies/local_replicas_extended.hpp>

namespace troupe {

namespace {

// TensorFlow's default: every GPU, else the CPU. This build's replicas run on
// CPU devices only, so the default is "CPU:0".
std::vector<std::string> default_devices(Runtime& runtime) {
  std::vector<std::string> gpus;
  for (const auto& d : runtime.devices())
    if (d.is_gpu())
      gpus.push_back(d.short_name());
  return gpus.empty() ? std::vector<std::string>{"CPU:0"} : gpus;
}

} // namespace

MirroredStrategy::MirroredStrategy(Runtime& runtime, const std::vector<std::string>& devices,
                                   CommunicationOptions options)
  : Strategy(std::make_unique<internal::LocalReplicasExtended>(
      "MirroredStrategy", runtime, devices.empty() ? default_devices(runtime) : devices, options)) {
  static_cast<internal::LocalReplicasExtended&>(extended()).start();
}

} // namespace troupe

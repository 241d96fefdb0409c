#include <troupe/strategies/mirrored_strategy.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/strategies/local_replicas_extended.hpp>

namespace troupe {

namespace {

// TensorFlow's default is every GPU, else the CPU. Replicas run on CPU devices
// until troupe has GPU kernels (GPU tensors and copies exist; ops on them do
// not yet), so the default stays "CPU:0" even where GPUs are.
std::vector<std::string> default_devices(Runtime&) {
  return {"CPU:0"};
}

} // namespace

MirroredStrategy::MirroredStrategy(Runtime& runtime, const std::vector<std::string>& devices,
                                   CommunicationOptions options)
  : Strategy(std::make_unique<internal::LocalReplicasExtended>(
      "MirroredStrategy", runtime, devices.empty() ? default_devices(runtime) : devices, options)) {
  static_cast<internal::LocalReplicasExtended&>(extended()).start();
}

} // namespace troupe

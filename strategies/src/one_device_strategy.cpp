#include <troupe/strategies/one_device_strategy.hpp>

#include <troupe/strategies/local_replicas_extended.hpp>

namespace troupe {

OneDeviceStrategy::OneDeviceStrategy(Runtime& runtime, const std::string& device)
  : Strategy(std::make_unique<internal::LocalReplicasExtended>("OneDeviceStrategy", runtime,
                                                               std::vector<std::string>{device},
                                                               CommunicationOptions{})) {
  static_cast<internal::LocalReplicasExtended&>(extended()).start();
}

} // namespace troupe

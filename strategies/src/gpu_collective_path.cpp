#include <troupe/strategies/gpu_collective_path.hpp>

#include <troupe/actors/gpu/gpu_collectives.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

std::string gpu_collective_capability(const std::vector<DeviceSpec>& devices) {
  bool any_gpu = false;
  for (const auto& device : devices)
    any_gpu = any_gpu || device.is_gpu();
  if (!any_gpu)
    return "cpu";
  const auto why = GpuCollectives::nccl_unusable_reason(devices);
  return why.empty() ? "nccl" : "host: " + why;
}

bool gpu_tensors_through_host(CommunicationImplementation implementation,
                              const std::vector<std::pair<std::string, std::string>>& capabilities) {
  std::string cannot;
  bool any_gpu = false;
  constexpr std::string_view host = "host: ";
  for (const auto& [task, capability] : capabilities) {
    if (capability != "cpu" && capability != "nccl" && !capability.starts_with(host))
      fail(Errc::data_loss, "task " + task + " described its GPU collectives as \"" + capability
                              + "\", which this build does not know; run the same troupe build on every worker");
    any_gpu = any_gpu || capability != "cpu";
    if (capability != "nccl")
      cannot += (cannot.empty() ? "" : "; ") + task + ": "
                + (capability == "cpu" ? std::string{"its replicas run on CPU devices"}
                                       : capability.substr(host.size()));
  }
  if (!any_gpu)
    return false;  // no GPU tensors anywhere: nothing to choose
  if (cannot.empty())
    return implementation == CommunicationImplementation::RING;
  if (implementation == CommunicationImplementation::NCCL)
    fail(Errc::not_supported, "MultiWorkerMirroredStrategy: CommunicationImplementation::NCCL needs every worker "
                              "to run NCCL over GPUs of its own, but " + cannot
                                + ". Give every worker GPUs of its own (troupe-launch --gpus-per-worker), or use "
                                  "CommunicationImplementation::AUTO, which then takes the host's ring");
  TROUPE_LOG(info, "coll") << "MultiWorkerMirroredStrategy: GPU tensors cross workers through the host's ring, not "
                              "NCCL: " << cannot;
  return true;
}

} // namespace troupe::internal

#include <troupe/strategies/multi_worker_mirrored_strategy.hpp>

#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/runtime_impl.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/net/cluster_resolver.hpp>
#include <troupe/strategies/local_replicas_extended.hpp>

namespace troupe {

namespace {

// Every CPU device. TensorFlow's default would take the GPUs, but GPU tensors
// cannot cross workers until troupe drives NCCL (issue 13).
std::vector<std::string> default_devices(Runtime& runtime) {
  std::vector<std::string> cpus;
  for (const auto& d : runtime.devices())
    if (d.is_cpu())
      cpus.push_back(d.short_name());
  return cpus;
}

internal::WorkerPlacement placement_of(Runtime& runtime, const CommunicationOptions& options) {
  auto* cluster = runtime.impl().cluster();
  if (options.implementation == CommunicationImplementation::NCCL) {
    // Cross-worker GPU collectives (NCCL) are not built yet (issue 13).
    TROUPE_LOG(warning, "coll") << "MultiWorkerMirroredStrategy: CommunicationImplementation::NCCL is not "
                                   "available (no GPU devices); using RING";
  }
  if (cluster == nullptr)
    return {};
  if (!cluster->participates()) {
    const auto& resolver = *cluster->resolver();
    fail(Errc::failed_precondition,
         "MultiWorkerMirroredStrategy runs on chief and worker tasks; this is task " + resolver.task_type() + ":"
           + std::to_string(resolver.task_id()) + ". Run ps tasks with ParameterServerStrategy and evaluators "
           "with a single-worker strategy");
  }
  return {cluster->rank(), static_cast<int>(cluster->task_names().size()), cluster};
}

CommunicationOptions without_nccl(CommunicationOptions options) {
  if (options.implementation == CommunicationImplementation::NCCL)
    options.implementation = CommunicationImplementation::RING;
  return options;
}

} // namespace

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(Runtime& runtime, CommunicationOptions options,
                                                         const std::vector<std::string>& devices)
  : Strategy(std::make_unique<internal::LocalReplicasExtended>(
      "MultiWorkerMirroredStrategy", runtime, devices.empty() ? default_devices(runtime) : devices,
      without_nccl(options), placement_of(runtime, options))),
    resolver_(runtime.impl().resolver()) {
  static_cast<internal::LocalReplicasExtended&>(extended()).start();
}

} // namespace troupe

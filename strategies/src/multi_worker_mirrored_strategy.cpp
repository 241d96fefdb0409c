#include <troupe/strategies/multi_worker_mirrored_strategy.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/actors/gpu/nccl_backend.hpp>
#include <troupe/net/cluster_resolver.hpp>
#include <troupe/strategies/local_replicas_extended.hpp>

namespace troupe {

namespace {

// The GPUs when the strategy asks for NCCL and this worker has GPUs and
// NCCL; else every CPU device. TensorFlow's default takes the GPUs whenever
// there are any, but workers sharing one card (a test cluster on one
// machine) cannot run NCCL between them, so troupe takes them on request.
std::vector<std::string> default_devices(Runtime& runtime, const CommunicationOptions& options) {
  std::vector<std::string> cpus;
  std::vector<std::string> gpus;
  for (const auto& d : runtime.devices())
    (d.is_gpu() ? gpus : cpus).push_back(d.short_name());
  if (options.implementation == CommunicationImplementation::NCCL && !gpus.empty()
      && internal::nccl_backend().available())
    return gpus;
  return cpus;
}

internal::WorkerPlacement placement_of(Runtime& runtime) {
  auto cluster = runtime.impl().membership();
  if (!cluster)
    return {};
  if (!cluster->participates()) {
    const auto& resolver = *cluster->resolver;
    fail(Errc::failed_precondition,
         "MultiWorkerMirroredStrategy runs on chief and worker tasks; this is task " + resolver.task_type() + ":"
           + std::to_string(resolver.task_id()) + ". Run ps tasks with ParameterServerStrategy and evaluators "
           "with a single-worker strategy");
  }
  return {cluster->rank, static_cast<int>(cluster->task_names.size()), cluster};
}

} // namespace

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(Runtime& runtime, CommunicationOptions options,
                                                         const std::vector<std::string>& devices)
  : Strategy(std::make_unique<internal::LocalReplicasExtended>(
      "MultiWorkerMirroredStrategy", runtime, devices.empty() ? default_devices(runtime, options) : devices,
      options, placement_of(runtime))),
    resolver_(runtime.impl().resolver()) {
  static_cast<internal::LocalReplicasExtended&>(extended()).start();
}

} // namespace troupe

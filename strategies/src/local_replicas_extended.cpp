#include <troupe/strategies/local_replicas_extended.hpp>

#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/actors/replicas/agreement_group.hpp>
#include <troupe/actors/replicas/replica_group.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/gpu_collective_path.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/actors/replicas/settings_agreement.hpp>
#include <troupe/strategies/strategy.hpp>

namespace troupe::internal {

namespace {

constexpr const char* gpu_capability_setting = "GPU collectives";

std::vector<DeviceSpec> resolve_devices(const std::string& strategy, Runtime& runtime,
                                        const std::vector<std::string>& names) {
  if (names.empty())
    fail(Errc::invalid_argument, strategy + ": Must specify at least one device.");
  std::vector<DeviceSpec> devices;
  for (const auto& name : names) {
    auto device = runtime.resolve_device(name);
    for (const auto& d : devices)
      if (d == device)
        fail(Errc::invalid_argument, strategy + ": No duplicates allowed in `devices` argument: \""
                                       + name + "\" names " + device.short_name()
                                       + " a second time");
    devices.push_back(std::move(device));
  }
  return devices;
}

} // namespace

LocalReplicasExtended::LocalReplicasExtended(std::string strategy_name, Runtime& runtime,
                                             const std::vector<std::string>& devices,
                                             CommunicationOptions options, WorkerPlacement placement)
  : name_(std::move(strategy_name)), runtime_(runtime),
    devices_(resolve_devices(name_, runtime, devices)), options_(options), placement_(placement) {
  if (options_.timeout_seconds < 0)
    fail(Errc::invalid_argument, name_ + ": CommunicationOptions.timeout_seconds must be >= 0 "
                                          "(0 = the TROUPE_COLLECTIVE_TIMEOUT_SECONDS knob), got "
                                   + std::to_string(options_.timeout_seconds));
  // Values cross workers only when there are other workers to reach.
  if (placement_.num_workers > 1)
    cross_device_ops_ = std::make_unique<CollectiveAllReduce>(*this, placement_.cluster->task_names);
  else
    cross_device_ops_ = std::make_unique<ReductionToOneDevice>(static_cast<int>(devices_.size()));
}

LocalReplicasExtended::~LocalReplicasExtended() = default;

void LocalReplicasExtended::start() {
  const int n = num_replicas_in_sync();
  std::vector<void*> frames;
  for (size_t i = 0; i < devices_.size(); ++i) {
    frames_.push_back(std::make_unique<detail::ContextFrame>());
    frames.push_back(frames_.back().get());
  }
  const auto& k = knobs();
  GroupOptions group_options{
    options_.timeout_seconds > 0 ? options_.timeout_seconds : k.collective_timeout_seconds,
    k.stall_warning_seconds, k.local_reduce_split_bytes, k.fiber_stack_bytes, std::nullopt, std::nullopt,
    options_.implementation, options_.bytes_per_pack, nullptr};
  const int local = static_cast<int>(devices_.size());
  DataPlaneHandle link;
  if (const auto& cluster = placement_.cluster) {
    CrossWorkerSetup setup;
    setup.rank = placement_.worker_index;
    setup.task_names = cluster->task_names;
    setup.local_replicas = local;
    setup.implementation = options_.implementation;
    setup.bytes_per_pack = options_.bytes_per_pack;
    setup.direct_exchange_max_bytes = k.direct_exchange_max_bytes;
    setup.halving_doubling_max_bytes = k.halving_doubling_max_bytes;
    setup.ring.chunk_bytes = k.ring_chunk_bytes;
    setup.max_frame_bytes = k.max_frame_bytes;
    // The id is the strategy's position among this worker's cluster
    // strategies, and the workers agree on it and on every setting their
    // collectives depend on before any collective runs.
    const auto position = runtime_.impl().next_cluster_group_id();
    setup.gpu_tensors_through_host = agree_on_cluster_settings(position, setup);
    group_options.cluster = setup;
    group_options.group_id = position;
    link = cluster->link;
    group_options.direct_link = cluster->frame_sender;
  }
  group_ = std::make_unique<ReplicaGroup>(runtime_, devices_, std::move(frames), group_options, link);
  const int offset = placement_.worker_index * local;
  for (int i = 0; i < local; ++i) {
    contexts_.push_back(std::make_unique<ReplicaContext>(container_strategy(), offset + i, n,
                                                         devices_[static_cast<size_t>(i)],
                                                         &group_->handle(i)));
    *frames_[static_cast<size_t>(i)] = {&container_strategy(), contexts_.back().get()};
  }
}

bool LocalReplicasExtended::agree_on_cluster_settings(uint64_t position, const CrossWorkerSetup& setup) {
  const char* implementation = setup.implementation == CommunicationImplementation::AUTO ? "AUTO"
                               : setup.implementation == CommunicationImplementation::RING ? "RING"
                                                                                            : "NCCL";
  const Settings mine{
    {"strategy", name_},
    {"position among the worker's multi-worker strategies", std::to_string(position)},
    {"replicas per worker", std::to_string(setup.local_replicas)},
    {"CommunicationOptions.implementation", implementation},
    {"CommunicationOptions.bytes_per_pack", std::to_string(setup.bytes_per_pack)},
    {"TROUPE_RING_CHUNK_KIB", std::to_string(setup.ring.chunk_bytes / 1024)},
    {"TROUPE_DIRECT_EXCHANGE_MAX_KIB", std::to_string(setup.direct_exchange_max_bytes / 1024)},
    {"TROUPE_HALVING_DOUBLING_MAX_KIB", std::to_string(setup.halving_doubling_max_bytes / 1024)},
    {"TROUPE_MAX_FRAME_MIB", std::to_string(setup.max_frame_bytes >> 20)},
    // Not compared: every worker's decides how GPU tensors cross workers.
    {gpu_capability_setting, gpu_collective_capability(devices_)},
  };
  const std::string what = name_ + " #" + std::to_string(position) + " of task "
                           + setup.task_names.at(static_cast<size_t>(setup.rank));
  const std::string fix = "Every worker must create the same multi-worker strategies in the same order, "
                          "with the same number of replica devices, the same CommunicationOptions and the "
                          "same TROUPE_* collective settings";
  std::vector<std::string> gathered;
  try {
    gathered = runtime_.impl().agreement_group().exchange(encode_settings(mine));
  } catch (const Error& e) {
    throw Error(e.code(), what + ": the workers could not compare their settings at its creation: " + e.what()
                            + ". " + fix + " (a worker that never creates it fails the others here).");
  }
  std::vector<WorkerSettings> workers;
  std::vector<std::pair<std::string, std::string>> capabilities;
  for (size_t w = 0; w < gathered.size(); ++w) {
    const auto& task = setup.task_names.at(w);
    auto settings = decode_settings(gathered[w], task);
    std::string capability = "cpu";  // a worker that does not say has no GPU replicas
    std::erase_if(settings, [&](const auto& setting) {
      if (setting.first != gpu_capability_setting)
        return false;
      capability = setting.second;
      return true;
    });
    capabilities.emplace_back(task, capability);
    workers.push_back({task, std::move(settings)});
  }
  require_same_settings(workers, what, fix + ".");
  try {
    return gpu_tensors_through_host(setup.implementation, capabilities);
  } catch (const Error& e) {
    throw Error(e.code(), what + ": " + e.what());
  }
}

std::vector<std::exception_ptr>
LocalReplicasExtended::call_for_each_replica(const std::function<void(int)>& body) {
  return group_->run(body);
}

} // namespace troupe::internal

#include <troupe/strategies/local_replicas_extended.hpp>

#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/actors/replica_group.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/strategy.hpp>

namespace troupe::internal {

namespace {

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
    cross_device_ops_ = std::make_unique<CollectiveAllReduce>(*this);
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
    k.stall_warning_seconds, k.local_reduce_split_bytes, k.fiber_stack_bytes, std::nullopt, 0};
  const int local = static_cast<int>(devices_.size());
  const caf::actor* link = nullptr;
  if (auto* cluster = placement_.cluster) {
    CrossWorkerSetup setup;
    setup.rank = placement_.worker_index;
    setup.task_names = cluster->task_names();
    setup.local_replicas = local;
    setup.implementation = options_.implementation;
    setup.bytes_per_pack = options_.bytes_per_pack;
    setup.halving_doubling_max_bytes = k.halving_doubling_max_bytes;
    setup.ring.chunk_bytes = k.ring_chunk_bytes;
    group_options.cluster = setup;
    link = &cluster->link();
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

std::vector<std::exception_ptr>
LocalReplicasExtended::call_for_each_replica(const std::function<void(int)>& body) {
  return group_->run(body);
}

} // namespace troupe::internal

#include <troupe/strategies/parameter_server_extended.hpp>

#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/replicas/settings_agreement.hpp>
#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/cross_device_ops.hpp>
#include <troupe/strategies/local_replicas_extended.hpp>

namespace troupe::internal {

namespace {

/// The cluster's parameter-server side, checked as TensorFlow checks it.
const PsCluster& cluster_of(Runtime& runtime) {
  const auto* cluster = runtime.impl().ps_cluster();
  if (!cluster)
    fail(Errc::invalid_argument,
         "ParameterServerStrategy: Cluster spec must be non-empty in `tf.distribute.cluster_resolver."
         "ClusterResolver`: this runtime is a single process. Create the Runtime with troupe::LocalCluster{.workers "
         "= 2, .ps = 1}, troupe::Simulation{.seed = 0, .workers = 2, .ps = 1}, or as the chief of a TF_CONFIG "
         "cluster with worker and ps jobs");
  if (cluster->shape().ps < 1)
    fail(Errc::invalid_argument, "There must be at least one ps.");
  if (cluster->shape().workers < 1)
    fail(Errc::invalid_argument, "There must be at least one worker.");
  return *cluster;
}

} // namespace

ParameterServerExtended::ParameterServerExtended(Runtime& runtime, std::optional<Partitioner> partitioner)
  : runtime_(runtime), partitioner_(std::move(partitioner)), placement_(cluster_of(runtime).shape().ps) {
  const auto& cluster = *runtime.impl().ps_cluster();
  workers_ = cluster.shape().workers;
  coordinator_ = cluster.is_coordinator();
  servers_ = cluster.parameter_servers();
  // A worker's replicas run on its CPU devices: variables live on the
  // parameter servers, and GPU tensors do not cross processes yet.
  for (const auto& device : runtime.devices())
    if (device.is_cpu())
      devices_.push_back(device);
  for (int j = 0; j < cluster.shape().ps; ++j)
    ps_devices_.push_back(RoundRobinPlacement::device(j));
  cross_device_ops_ = std::make_unique<ReductionToOneDevice>(static_cast<int>(devices_.size()));
}

ParameterServerExtended::~ParameterServerExtended() = default;

void ParameterServerExtended::check_variable_creation() const {
  fail(Errc::failed_precondition,
       "ParameterServerStrategy keeps variables on the parameter servers: create them with "
       "ParameterServerStrategy::create_variable, which returns a ShardedVariable, not through Strategy&");
}

void ParameterServerExtended::agree_on_settings(const std::vector<std::pair<std::string, std::string>>& settings) {
  auto* cluster = runtime_.impl().ps_cluster();
  const auto verdict = cluster->agree_on_settings(encode_settings(settings));
  if (!verdict.empty())
    fail(Errc::failed_precondition, verdict);
}

LocalReplicasExtended& ParameterServerExtended::replicas_of(WorkerContext* worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = replicas_[worker];
  if (!slot) {
    std::vector<std::string> names;
    for (const auto& device : devices_)
      names.push_back(device.short_name());
    slot = std::make_unique<LocalReplicasExtended>(strategy_name(), runtime_, names, CommunicationOptions{});
    share_container(*slot, container_strategy());
    slot->start();
  }
  return *slot;
}

std::vector<std::exception_ptr> ParameterServerExtended::call_for_each_replica(const std::function<void(int)>& body) {
  return replicas_of(WorkerContext::current()).call_for_each_replica(body);
}

} // namespace troupe::internal

#include <troupe/net/tpu_cluster_resolver.hpp>

#include <mutex>

#include <troupe/core/errors.hpp>
#include <troupe/net/tf_config_cluster_resolver.hpp>

namespace troupe {

// What initialize_tpu_system learned; shared by the copies of a resolver, as
// Python shares one resolver object.
struct TPUClusterResolver::TpuSystemState {
  mutable std::mutex mutex;
  std::optional<int> cores_per_host;
  std::optional<std::string> serialized_topology;
};

namespace {

std::string checked_tpu_name(std::string tpu) {
  if (tpu.empty() || tpu == "local")
    return "local";
  fail(Errc::not_found, "TPUClusterResolver: no TPU named \"" + tpu
                          + "\": troupe has only local, emulated TPUs (RuntimeOptions.logical_tpu_cores); "
                            "pass \"\" or \"local\"");
}

} // namespace

TPUClusterResolver::TPUClusterResolver(std::string tpu) : TPUClusterResolver(std::move(tpu), TFConfigClusterResolver()) {}

TPUClusterResolver TPUClusterResolver::from_tf_config(std::string tpu, std::string_view tf_config) {
  auto name = checked_tpu_name(std::move(tpu)); // before TF_CONFIG is read: the name's error comes first
  return TPUClusterResolver(std::move(name),
                            TFConfigClusterResolver::from_json(tf_config.empty() ? "{}" : tf_config));
}

TPUClusterResolver::TPUClusterResolver(std::string tpu, const ClusterResolver& tf_config)
  : tpu_(checked_tpu_name(std::move(tpu))), state_(std::make_shared<TpuSystemState>()) {
  auto cluster = tf_config.cluster_spec();
  if (cluster.empty())
    return; // a local TPU
  if (cluster.num_tasks("worker") == 0)
    fail(Errc::invalid_argument, "TPUClusterResolver: TF_CONFIG's cluster " + cluster.to_json()
                                   + " has no \"worker\" job; a TPU slice's hosts are the worker tasks: "
                                     "name them in a \"worker\" job, or unset TF_CONFIG for a local TPU");
  if (tf_config.task_type() != "worker" || tf_config.task_id() < 0)
    fail(Errc::invalid_argument, "TPUClusterResolver: TF_CONFIG's task is \"" + tf_config.task_type() + "\" "
                                   + std::to_string(tf_config.task_id())
                                   + ", but a TPU slice's tasks are its hosts, the \"worker\" tasks; set "
                                     "TF_CONFIG's \"task\" to {\"type\": \"worker\", \"index\": i}");
  cluster_ = std::move(cluster);
  task_id_ = tf_config.task_id();
}

std::map<std::string, int> TPUClusterResolver::num_accelerators() const {
  const std::lock_guard lock(state_->mutex);
  if (!state_->cores_per_host)
    fail(Errc::failed_precondition, "TPUClusterResolver::num_accelerators: the TPU system is not initialized, "
                                    "so its cores are unknown; call initialize_tpu_system(rt, resolver) first");
  return {{"TPU", *state_->cores_per_host}};
}

std::string TPUClusterResolver::master(std::string_view task_type, int task_id, std::string_view) const {
  if (cluster_.empty())
    return "";
  const bool given = !task_type.empty() && task_id >= 0;
  const auto& address = cluster_.task_address(given ? task_type : std::string_view(task_type_),
                                              given ? task_id : task_id_);
  return format_master_url(address, "grpc");
}

std::optional<std::string> TPUClusterResolver::tpu_topology() const {
  const std::lock_guard lock(state_->mutex);
  return state_->serialized_topology;
}

void TPUClusterResolver::connect_tpu_system(int cores_per_host, std::string serialized_topology) {
  if (cores_per_host < 1)
    fail(Errc::invalid_argument, "TPUClusterResolver::connect_tpu_system: cores_per_host must be 1 or more, got "
                                   + std::to_string(cores_per_host));
  const std::lock_guard lock(state_->mutex);
  state_->cores_per_host = cores_per_host;
  state_->serialized_topology = std::move(serialized_topology);
}

} // namespace troupe

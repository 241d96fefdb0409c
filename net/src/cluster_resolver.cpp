#include <troupe/net/cluster_resolver.hpp>

#include <cstdlib>

#include <troupe/core/errors.hpp>
#include <troupe/net/slurm_cluster_resolver.hpp>
#include <troupe/net/tf_config_cluster_resolver.hpp>

namespace troupe {

namespace {

bool is_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

} // namespace

std::map<std::string, int> ClusterResolver::num_accelerators() const {
  return {};
}

std::string ClusterResolver::master(std::string_view task_type, int task_id,
                                    std::string_view rpc_layer) const {
  auto cluster = cluster_spec();
  if (cluster.empty())
    return {};
  auto type = task_type.empty() ? this->task_type() : std::string(task_type);
  auto id = task_id < 0 ? this->task_id() : task_id;
  if (type.empty() || id < 0)
    return {};
  auto layer = rpc_layer.empty() ? this->rpc_layer() : std::string(rpc_layer);
  return format_master_url(cluster.task_address(type, id), layer);
}

std::shared_ptr<ClusterResolver> ClusterResolver::from_env() {
  if (is_set("TF_CONFIG"))
    return std::make_shared<TFConfigClusterResolver>();
  if (is_set("SLURM_PROCID") && (is_set("SLURM_STEP_NODELIST") || is_set("SLURM_JOB_NODELIST")))
    return std::make_shared<SlurmClusterResolver>();
  return std::make_shared<TFConfigClusterResolver>(TFConfigClusterResolver::from_json("{}"));
}

void ClusterResolver::check_task(const ClusterSpec& cluster, std::string_view task_type,
                                 int task_id, std::string_view source) {
  const auto prefix = std::string(source) + ": ";
  const auto type = std::string(task_type);
  const auto& jobs = cluster.as_dict();
  auto job = jobs.find(type);
  if (job == jobs.end()) {
    // tf.distribute lets the evaluator run outside the training cluster.
    if (type == "evaluator" && task_id >= 0)
      return;
    std::string names;
    for (const auto& [name, tasks] : jobs)
      names += (names.empty() ? "" : ", ") + name;
    fail(Errc::invalid_argument,
         prefix + "task type \"" + type + "\" is not a job of the cluster ("
           + (names.empty() ? std::string("the cluster is empty") : "jobs: " + names) + "): "
           + (names.empty() ? std::string("add the job and its tasks to the cluster")
                            : "use one of its jobs"));
  }
  const auto size = static_cast<int>(job->second.size());
  if (task_id < 0 || task_id >= size)
    fail(Errc::invalid_argument, prefix + "task index " + std::to_string(task_id)
                                   + " is out of range for job \"" + type + "\", which has "
                                   + std::to_string(size) + (size == 1 ? " task" : " tasks")
                                   + ": use an index in 0.." + std::to_string(size - 1));
}

std::string ClusterResolver::format_master_url(std::string_view address,
                                               std::string_view rpc_layer) {
  if (rpc_layer.empty())
    return std::string(address);
  return std::string(rpc_layer) + "://" + std::string(address);
}

} // namespace troupe

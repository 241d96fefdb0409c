// troupe-launch: starts the tasks of a troupe (tf.distribute) cluster.
//
// Local mode starts one child per task on this machine, each with its own
// TF_CONFIG, TROUPE_TASK_NAME, a shared TROUPE_CLUSTER_TOKEN (and with
// --gpus-per-worker its own CUDA_VISIBLE_DEVICES), prefixes
// their output with "[worker:0] " and stops the cluster when one task fails
// (a parameter-server cluster: when its coordinator, the chief, exits).
// Rank mode (--attach) runs as one rank of mpirun or srun: it derives the
// cluster from the launcher's variables and execs the program.
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attach.hpp"
#include "child_process.hpp"
#include "cluster_token.hpp"
#include "gpu_assignment.hpp"
#include "options.hpp"
#include "port_picker.hpp"
#include "supervisor.hpp"
#include "tf_config.hpp"
#include "timeline_merge.hpp"

#include <troupe/actors/gpu/gpu_backend.hpp>

namespace {

using namespace troupe::launch;

int run_local(const Options& opts) {
  ClusterShape shape;
  shape.chief = opts.chief ? 1 : 0;
  shape.workers = opts.workers;
  shape.ps = opts.ps;
  shape.evaluator = opts.evaluator ? 1 : 0;

  PortPicker picker(opts.host, static_cast<size_t>(shape.listening_tasks()));
  std::vector<std::string> addresses;
  for (uint16_t port : picker.ports())
    addresses.push_back(task_address(opts.host, port));
  const ClusterSpec cluster = make_cluster_spec(shape, addresses);

  const char* given_token = std::getenv(cluster_token_variable);
  const std::string token = given_token != nullptr ? given_token : generate_cluster_token();
  std::map<std::string, std::string> gpus;
  if (opts.gpus_per_worker > 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const int count = visible != nullptr ? 0 : troupe::internal::gpu_backend().device_count();
    gpus = assign_gpus(shape.tasks(), opts.gpus_per_worker,
                       visible_gpus(visible != nullptr ? std::optional<std::string>{visible} : std::nullopt, count),
                       visible != nullptr ? "CUDA_VISIBLE_DEVICES=" + std::string{visible} : "this machine");
  }
  // TROUPE_TRACE=path: each task writes a part, merged into path at the end.
  const char* trace = std::getenv("TROUPE_TRACE");
  const std::string timeline = trace != nullptr ? trace : "";
  std::vector<TaskLaunch> launches;
  std::vector<std::string> task_names;
  for (const TaskId& task : shape.tasks()) {
    task_names.push_back(task.name());
    std::vector<std::string> variables{"TF_CONFIG=" + tf_config_json(cluster, task), "TROUPE_TASK_NAME=" + task.name(),
                                       std::string(cluster_token_variable) + "=" + token};
    if (auto it = gpus.find(task.name()); it != gpus.end())
      variables.push_back("CUDA_VISIBLE_DEVICES=" + it->second);
    if (opts.tls)
      variables.push_back("TROUPE_TLS=1");
    if (!timeline.empty())
      variables.push_back("TROUPE_TRACE=" + timeline_part(timeline, task.name()));
    launches.push_back({task, make_environment(variables)});
  }

  std::cerr << "troupe-launch: starting " << shape.describe() << " on " << opts.host << " ("
            << describe_ports(picker.ports()) << ")" << std::endl;
  // As late as possible: from here another process could take a port.
  picker.release();
  // A parameter-server cluster is its coordinator's job (TensorFlow's ClusterCoordinator).
  Supervisor supervisor({.grace_seconds = opts.grace_seconds,
                         .timeout_seconds = opts.timeout_seconds,
                         .coordinator = shape.ps > 0 ? "chief:0" : ""});
  const int status = supervisor.run(opts.program, launches);
  if (!timeline.empty())
    std::cerr << "troupe-launch: " << merge_timelines(timeline, task_names) << std::endl;
  return status;
}

} // namespace

int main(int argc, char** argv) {
  Options opts;
  try {
    opts = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::invalid_argument& e) {
    std::cerr << "troupe-launch: " << e.what() << "\n";
    return 2;
  }
  if (opts.help) {
    std::cout << usage();
    return 0;
  }
  try {
    return opts.attach ? run_attached(opts) : run_local(opts);
  } catch (const std::exception& e) {
    std::cerr << "troupe-launch: " << e.what() << "\n";
    return 1;
  }
}

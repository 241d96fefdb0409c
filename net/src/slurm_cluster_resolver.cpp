#include <troupe/net/slurm_cluster_resolver.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <set>

#include <troupe/core/errors.hpp>
#include <troupe/net/hostlist.hpp>

namespace troupe {

namespace {

// Every variable the resolver reads.
constexpr std::array<const char*, 9> variables{
  "SLURM_PROCID",    "SLURM_STEP_NODELIST",       "SLURM_JOB_NODELIST",
  "SLURM_NTASKS",    "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
  "SLURM_STEP_GPUS", "SLURM_STEP_NUM_TASKS",      "CUDA_VISIBLE_DEVICES"};

/// The variables of `variables` that the process environment sets.
SlurmClusterResolver::Environment process_environment() {
  SlurmClusterResolver::Environment out;
  for (const auto* name : variables)
    if (const char* value = std::getenv(name))
      out.emplace(name, value);
  return out;
}

[[noreturn]] void reject(const std::string& why) {
  fail(Errc::invalid_argument, "SlurmClusterResolver: " + why);
}

/// The first of `names` that is set, as (name, value).
std::optional<std::pair<std::string, std::string>>
first_set(const SlurmClusterResolver::Environment& env, std::initializer_list<const char*> names) {
  for (const auto* name : names)
    if (auto i = env.find(name); i != env.end())
      return *i;
  return std::nullopt;
}

/// A non-negative int from the variable `name`.
int parse_count(const std::string& name, const std::string& value) {
  int out = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (value.empty() || ec != std::errc{} || ptr != value.data() + value.size() || out < 0)
    reject(name + "=\"" + value + "\" is not a non-negative integer");
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty())
    return out;
  size_t begin = 0;
  for (;;) {
    auto end = text.find(',', begin);
    out.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos)
      return out;
    begin = end + 1;
  }
}

void check_option(const char* name, std::optional<int> value, int min) {
  if (value && *value < min)
    reject("option " + std::string(name) + " = " + std::to_string(*value) + " must be at least "
           + std::to_string(min));
}

/// Everything a SlurmClusterResolver reports, resolved from options and variables.
struct Resolved {
  ClusterSpec cluster;
  std::string task_type;
  int task_id = -1;
  int rank = 0;
  int gpus_per_task = 0;
  std::string visible_devices;
};

Resolved resolve(const SlurmClusterResolverOptions& options,
                 const SlurmClusterResolver::Environment& env) {
  Resolved out;

  // -- this task ---------------------------------------------------------------
  auto procid = first_set(env, {"SLURM_PROCID"});
  if (!procid)
    reject("SLURM_PROCID is not set: run this process inside a Slurm step (srun), or use "
           "TFConfigClusterResolver outside Slurm");
  out.rank = parse_count("SLURM_PROCID", procid->second);

  // -- nodes and their tasks ------------------------------------------------------
  auto nodelist = first_set(env, {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"});
  if (!nodelist)
    reject("neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST is set: run this process inside "
           "a Slurm step (srun)");
  std::vector<std::string> hosts;
  try {
    hosts = expand_hostlist(nodelist->second);
  } catch (const Error& e) {
    reject(nodelist->first + ": " + e.what());
  }
  std::set<std::string_view> unique_hosts;
  for (const auto& host : hosts)
    if (!unique_hosts.insert(host).second)
      reject(nodelist->first + "=\"" + nodelist->second + "\" names host \"" + host
             + "\" twice: list every node once");

  check_option("tasks_per_node", options.tasks_per_node, 1);
  std::vector<int> tasks_per_node;
  if (options.tasks_per_node) {
    tasks_per_node.assign(hosts.size(), *options.tasks_per_node);
  } else {
    auto spec = first_set(env, {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"});
    if (!spec)
      reject("neither SLURM_STEP_TASKS_PER_NODE nor SLURM_TASKS_PER_NODE is set: run this "
             "process inside a Slurm step (srun), or pass the tasks_per_node option");
    try {
      tasks_per_node = expand_tasks_per_node(spec->second);
    } catch (const Error& e) {
      reject(spec->first + ": " + e.what());
    }
    if (tasks_per_node.size() != hosts.size())
      reject(spec->first + "=\"" + spec->second + "\" gives task counts for "
             + std::to_string(tasks_per_node.size()) + " nodes but " + nodelist->first + "=\""
             + nodelist->second + "\" lists " + std::to_string(hosts.size())
             + ": both must describe the same step");
  }
  int total = 0;
  for (auto n : tasks_per_node)
    total += n;
  const auto max_per_node = *std::max_element(tasks_per_node.begin(), tasks_per_node.end());
  if (auto num_tasks = first_set(env, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"})) {
    auto n = parse_count(num_tasks->first, num_tasks->second);
    if (n != total)
      reject(num_tasks->first + "=" + num_tasks->second + " but the nodes run "
             + std::to_string(total) + " tasks (" + nodelist->first + "=\"" + nodelist->second
             + "\" with the tasks per node): they must agree");
  }
  if (out.rank >= total)
    reject("SLURM_PROCID=" + procid->second + " is not below the step's " + std::to_string(total)
           + " tasks");

  // -- ports and GPUs -------------------------------------------------------------
  if (options.port_base < 1 || options.port_base + max_per_node - 1 > 65535)
    reject("port_base " + std::to_string(options.port_base) + " with up to "
           + std::to_string(max_per_node)
           + " tasks per node leaves the port range 1..65535: choose a lower port_base");
  check_option("gpus_per_node", options.gpus_per_node, 0);
  check_option("gpus_per_task", options.gpus_per_task, 0);
  std::vector<std::string> devices;
  if (auto list = first_set(env, {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS"}))
    devices = split_list(list->second);
  const int gpus_per_node = options.gpus_per_node.value_or(static_cast<int>(devices.size()));
  out.gpus_per_task = options.gpus_per_task.value_or(gpus_per_node / max_per_node);
  if (static_cast<int64_t>(max_per_node) * out.gpus_per_task > gpus_per_node)
    reject("nodes run up to " + std::to_string(max_per_node) + " tasks with "
           + std::to_string(out.gpus_per_task) + " GPUs each but have "
           + std::to_string(gpus_per_node)
           + " GPUs (gpus_per_node): lower gpus_per_task or the tasks per node");

  // -- layout: node by node, then jobs in order ----------------------------------------
  std::vector<std::string> addresses;
  addresses.reserve(static_cast<size_t>(total));
  for (size_t node = 0; node < hosts.size(); ++node) {
    for (int k = 0; k < tasks_per_node[node]; ++k) {
      if (static_cast<int>(addresses.size()) == out.rank) {
        for (int g = k * out.gpus_per_task; g < (k + 1) * out.gpus_per_task; ++g) {
          if (!out.visible_devices.empty())
            out.visible_devices += ',';
          out.visible_devices += static_cast<size_t>(g) < devices.size()
                                   ? devices[static_cast<size_t>(g)]
                                   : std::to_string(g);
        }
      }
      addresses.push_back(hosts[node] + ":" + std::to_string(options.port_base + k));
    }
  }

  auto jobs = options.jobs;
  if (jobs.empty())
    jobs.push_back({"worker", total});
  std::set<std::string_view> job_names;
  int requested = 0;
  std::string sizes;
  for (const auto& job : jobs) {
    if (job.num_tasks < 0)
      reject("job \"" + job.name + "\" asks for " + std::to_string(job.num_tasks)
             + " tasks: give it 0 or more");
    if (!job_names.insert(job.name).second)
      reject("job \"" + job.name + "\" is listed twice in the jobs option: list each job once");
    requested += job.num_tasks;
    sizes += (sizes.empty() ? "" : ", ") + job.name + ": " + std::to_string(job.num_tasks);
  }
  if (requested != total)
    reject("the jobs option asks for " + std::to_string(requested) + " tasks (" + sizes
           + ") but the Slurm step has " + std::to_string(total) + ": make the job sizes add up to "
           + std::to_string(total));
  ClusterSpec::JobMap cluster;
  int offset = 0;
  for (const auto& job : jobs) {
    if (job.num_tasks == 0)
      continue;
    cluster[job.name].assign(addresses.begin() + offset,
                             addresses.begin() + offset + job.num_tasks);
    if (out.rank >= offset && out.rank < offset + job.num_tasks) {
      out.task_type = job.name;
      out.task_id = out.rank - offset;
    }
    offset += job.num_tasks;
  }
  try {
    out.cluster = ClusterSpec(std::move(cluster));
  } catch (const Error& e) {
    reject(e.what());
  }
  return out;
}

} // namespace

SlurmClusterResolver::SlurmClusterResolver(SlurmClusterResolverOptions options)
  : SlurmClusterResolver(options, process_environment()) {
  // As TensorFlow's auto_set_gpu; a task without GPUs leaves the variable alone.
  if (options.auto_set_gpu && gpus_per_task_ > 0)
    setenv("CUDA_VISIBLE_DEVICES", visible_devices_.c_str(), 1);
}

SlurmClusterResolver::SlurmClusterResolver(SlurmClusterResolverOptions options,
                                           const Environment& env)
  : rpc_layer_(options.rpc_layer) {
  auto resolved = resolve(options, env);
  cluster_ = std::move(resolved.cluster);
  task_type_ = std::move(resolved.task_type);
  task_id_ = resolved.task_id;
  rank_ = resolved.rank;
  gpus_per_task_ = resolved.gpus_per_task;
  visible_devices_ = std::move(resolved.visible_devices);
}

std::map<std::string, int> SlurmClusterResolver::num_accelerators() const {
  return {{"GPU", gpus_per_task_}};
}

} // namespace troupe

#include "attach.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>

#include <unistd.h>

#include "cluster_token.hpp"

namespace troupe::launch {

namespace {

std::string describe_hosts(const std::vector<std::string>& hosts) {
  std::vector<std::string> distinct;
  for (const auto& host : hosts)
    if (std::find(distinct.begin(), distinct.end(), host) == distinct.end())
      distinct.push_back(host);
  std::string text;
  for (size_t i = 0; i < distinct.size() && i < 8; ++i)
    text += (i > 0 ? ", " : "") + distinct[i];
  if (distinct.size() > 8)
    text += ", ...";
  return text;
}

std::vector<std::string> rank_hosts(const Options& opts, const RankEnvironment& env) {
  const auto size = static_cast<size_t>(env.size);
  if (opts.hosts.size() == 1)
    return std::vector<std::string>(size, opts.hosts.front());
  if (opts.hosts.size() == size)
    return opts.hosts;
  if (!opts.hosts.empty())
    throw std::runtime_error(
      "--hosts names " + std::to_string(opts.hosts.size()) + " hosts for " + std::to_string(size)
      + " ranks (" + env.source
      + "): give one host per rank, node by node, or a single host for all ranks");
  if (!env.hosts.empty())
    return env.hosts;
  if (env.local_size && *env.local_size < env.size)
    throw std::runtime_error("the " + std::to_string(env.size) + " ranks span several nodes ("
                             + env.local_size_variable + " is " + std::to_string(*env.local_size)
                             + "): pass --hosts with one host per rank, node by node");
  return std::vector<std::string>(size, "127.0.0.1");
}

} // namespace

AttachPlan plan_attach(const Options& opts, const RankEnvironment& env) {
  AttachPlan plan;
  plan.hosts = rank_hosts(opts, env);
  const bool hosts_from_launcher = opts.hosts.empty() && !env.hosts.empty();

  // Ports follow the local rank, counted over the ranks listed before on the
  // same host, so every rank computes the same table.
  std::map<std::string, int> seen;
  std::vector<std::string> addresses;
  for (size_t r = 0; r < plan.hosts.size(); ++r) {
    const int local_rank = seen[plan.hosts[r]]++;
    const int port = opts.base_port + local_rank;
    if (port > 65535)
      throw std::runtime_error("--base-port " + std::to_string(opts.base_port)
                               + " leaves no port for local rank " + std::to_string(local_rank)
                               + " on " + plan.hosts[r] + ": pick a base port of at most "
                               + std::to_string(65535 - local_rank));
    if (static_cast<int>(r) == env.rank && env.local_rank && *env.local_rank != local_rank)
      throw std::runtime_error(
        "rank " + std::to_string(env.rank) + " is local rank " + std::to_string(*env.local_rank)
        + " on its node (" + env.local_rank_variable + ") but the host list makes it local rank "
        + std::to_string(local_rank) + " on " + plan.hosts[r]
        + ": list the hosts in rank order, one per rank, spelled the same way "
          "for ranks on the same node");
    plan.ports.push_back(static_cast<uint16_t>(port));
    addresses.push_back(task_address(plan.hosts[r], static_cast<uint16_t>(port)));
  }
  if (hosts_from_launcher && !env.node_name.empty()
      && env.node_name != plan.hosts[static_cast<size_t>(env.rank)])
    throw std::runtime_error("rank " + std::to_string(env.rank) + " runs on " + env.node_name
                             + " (SLURMD_NODENAME) but Slurm's task layout puts it on "
                             + plan.hosts[static_cast<size_t>(env.rank)]
                             + ": pass --hosts with one host per rank");

  ClusterShape shape;
  shape.chief = opts.chief ? 1 : 0;
  shape.workers = env.size - shape.chief;
  plan.cluster = make_cluster_spec(shape, addresses);
  plan.task =
    opts.chief && env.rank == 0 ? TaskId{"chief", 0} : TaskId{"worker", env.rank - shape.chief};
  plan.summary = "troupe-launch: attaching " + std::to_string(env.size) + " ranks (" + env.source
                 + ") as " + shape.describe() + " on " + describe_hosts(plan.hosts) + " ("
                 + describe_ports(plan.ports) + ")";
  return plan;
}

int run_attached(const Options& opts) {
  const RankEnvironment env = detect_rank_environment(process_environment());
  const AttachPlan plan = plan_attach(opts, env);
  if (env.rank == 0) {
    std::string line = plan.summary;
    if (std::getenv(cluster_token_variable) == nullptr)
      line += "; TROUPE_CLUSTER_TOKEN is not set: export the same random one to every rank (a cluster "
              "beyond loopback refuses to start without it; docs/security.md)";
    std::cerr << line << std::endl;
  }
  ::setenv("TF_CONFIG", tf_config_json(plan.cluster, plan.task).c_str(), 1);
  ::setenv("TROUPE_TASK_NAME", plan.task.name().c_str(), 1);
  std::vector<char*> argv;
  for (const auto& arg : opts.program)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "troupe-launch: cannot run " << opts.program.front() << ": " << std::strerror(errno)
            << std::endl;
  return 127;
}

} // namespace troupe::launch

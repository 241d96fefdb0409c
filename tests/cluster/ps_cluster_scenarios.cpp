#include "ps_cluster_scenarios.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/net/bootstrap/cluster_node.hpp>

namespace troupe::testing {

namespace {

using internal::ClusterNode;
using internal::TaskLostMsg;

// The name under which every task publishes its probe actor.
constexpr const char* probe_actor_name = "cluster_probe";
constexpr auto deadline = std::chrono::seconds(60);

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names)
    out += (out.empty() ? "" : ",") + name;
  return out.empty() ? "-" : out;
}

void print(const std::string& line) {
  std::printf("PROBE %s\n", line.c_str());
  std::fflush(stdout);
}

// The chief: reach every other member's probe actor, which each publishes
// once it joined; then the cluster has formed everywhere.
std::vector<caf::actor> reach_every_member(ClusterNode& cluster) {
  std::vector<caf::actor> probes;
  for (const auto& task : cluster.members()) {
    if (task == "chief:0")
      continue;
    probes.push_back(cluster.lookup(task, probe_actor_name, deadline));
    print("REACHED " + task);
  }
  return probes;
}

// `order` for ps:0: "" (none), "die" or "freeze".
int run_chief(caf::scoped_actor& self, ClusterNode& cluster, const std::string& order) {
  const auto probes = reach_every_member(cluster);
  if (order.empty())
    return 0;
  const auto ps = cluster.lookup("ps:0", probe_actor_name, deadline);
  self->send(ps, order);
  bool seen = false;
  self->receive_while([&] { return !seen; })(
    [&](const TaskLostMsg& verdict) {
      if (verdict.task != "ps:0")
        return;
      seen = true;
      std::printf("PROBE LOST %s at %.3f left=%d: %s\n", verdict.task.c_str(), wall_seconds(), verdict.left ? 1 : 0,
                  verdict.why.c_str());
      std::fflush(stdout);
    },
    caf::after(deadline) >> [&] {
      print("WRONG no verdict on ps:0 within 60 s");
      seen = true;
    });
  // A coordinator that lost a parameter server has failed its job.
  return 1;
}

// A worker or ps: wait for the chief to leave (or, as ps:0 of "ps_lost", to be told to die).
int run_follower(caf::scoped_actor& self, ClusterNode& cluster) {
  bool done = false;
  int status = 0;
  self->receive_while([&] { return !done; })(
    [&](const TaskLostMsg& verdict) {
      if (verdict.task != "chief:0")
        return;
      print("SAW chief:0 " + std::string(verdict.left ? "left" : "lost") + ": " + verdict.why);
      done = true;
    },
    [&](const std::string& order) {
      if (order != "die" && order != "freeze")
        return;
      const bool freeze = order == "freeze";
      std::printf("PROBE VICTIM %s %s at %.3f\n", (cluster.task_type() + ":" + std::to_string(cluster.task_index())).c_str(),
                  freeze ? "stops" : "dies", wall_seconds());
      std::fflush(stdout);
      std::raise(freeze ? SIGSTOP : SIGKILL);
    },
    caf::after(deadline) >> [&] {
      print("WRONG the chief did not leave within 60 s");
      status = 1;
      done = true;
    });
  return status;
}

} // namespace

int run_ps_cluster_scenario(Runtime& rt, const std::string& scenario) {
  auto* cluster = rt.impl().cluster();
  if (cluster == nullptr) {
    print("WRONG no cluster: run under troupe-launch --ps");
    return 1;
  }
  const auto me = cluster->task_type() + ":" + std::to_string(cluster->task_index());
  print("MEMBER " + me + " members=" + joined(cluster->members()) + " workers=" + joined(cluster->tasks_of("worker"))
        + " ps=" + joined(cluster->tasks_of("ps")) + " collective=" + joined(cluster->task_names())
        + " rank=" + std::to_string(cluster->rank()));
  caf::scoped_actor self{rt.impl().system()};
  cluster->watch_losses(caf::actor_cast<caf::actor>(self));
  cluster->publish(probe_actor_name, caf::actor_cast<caf::actor>(self));
  if (cluster->task_type() == "chief")
    return run_chief(self, *cluster, scenario == "ps_lost" ? "die" : scenario == "ps_frozen" ? "freeze" : "");
  return run_follower(self, *cluster);
}

} // namespace troupe::testing

#include "ps_fault_scenarios.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include <unistd.h>
#include <cstdio>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "support/event_wait.hpp"

namespace troupe::testing {

namespace {

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void print(const std::string& line) {
  std::printf("PROBE %s\n", line.c_str());
  std::fflush(stdout);
}

constexpr int64_t functions = 20;

// The pid a test wrote into `path`, once it did; 0 when `deadline` passes first.
int64_t wait_for_pid_file(const std::string& path, std::chrono::steady_clock::time_point deadline) {
  int64_t pid = 0;
  (void)wait_for_change_in(std::filesystem::path(path).parent_path().string(), deadline, [&] {
    std::ifstream in(path);
    return static_cast<bool>(in >> pid) && pid > 0;
  });
  return pid > 0 ? pid : 0;
}

// "ps_worker_rejoin": see the header.
int rejoin_scenario(Runtime& rt, const std::string& pid_file) {
  ParameterServerStrategy strategy(rt);
  ClusterCoordinator coordinator(strategy);
  ShardedVariable w{nullptr};
  {
    auto scope = strategy.scope();
    w = strategy.create_variable(Tensor::zeros({2}, DType::int64), {.name = "w"});
  }
  auto step = remote_function("ps_rejoin_step", [&](int64_t) {
    w.assign_add(Tensor::full({2}, 1.0, DType::int64));
    return static_cast<int64_t>(::getpid());
  });
  const std::string me = rt.task_type() + ":" + std::to_string(rt.task_index());
  if (rt.task_type() != "chief") {
    const int status = rt.serve();
    print("SERVE " + me + " returned " + std::to_string(status) + " at " + std::to_string(wall_seconds()));
    return status;
  }
  int64_t scheduled = 0;
  auto run_round = [&] {
    std::vector<RemoteValue<int64_t>> results;
    for (int i = 0; i < 10; ++i)
      results.push_back(coordinator.schedule(step, scheduled++));
    coordinator.join();
    std::vector<int64_t> pids;
    for (auto& r : results)
      pids.push_back(r.fetch());
    return pids;
  };
  auto first = run_round();
  std::set<int64_t> before(first.begin(), first.end());
  std::string listed;
  for (auto pid : before)
    listed += (listed.empty() ? "" : ",") + std::to_string(pid);
  print("PHASE1 pids=" + listed);
  const int64_t restarted = wait_for_pid_file(pid_file, std::chrono::steady_clock::now() + std::chrono::seconds(90));
  if (restarted == 0) {
    print("ERROR no restarted worker's pid in " + pid_file);
    return 5;
  }
  // The coordinator adds the rejoined worker asynchronously: rounds until it ran some.
  int64_t ran = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ran == 0 && std::chrono::steady_clock::now() < deadline)
    for (auto pid : run_round())
      ran += pid == restarted ? 1 : 0;
  print("REJOINED pid=" + std::to_string(restarted) + " ran=" + std::to_string(ran)
        + " functions=" + std::to_string(scheduled));
  const auto value = w.read_value().to_vector<int64_t>();
  print("RESULT w=" + std::to_string(value[0]) + "," + std::to_string(value[1])
        + " expected=" + std::to_string(scheduled));
  if (ran == 0 || before.count(restarted) != 0)
    return 6;
  return value[0] == scheduled && value[1] == scheduled ? 0 : 4;
}

// "ps_nan" and "ps_nan_caught": see the header.
int nan_scenario(Runtime& rt, bool caught) {
  ParameterServerStrategy strategy(rt);
  ClusterCoordinator coordinator(strategy);
  ShardedVariable w{nullptr};
  {
    auto scope = strategy.scope();
    w = strategy.create_variable(Tensor::zeros({2}, DType::float32), {.name = "w"});
  }
  const bool poisoned = rt.task_type() == "worker" && rt.task_index() == 1;
  auto step = remote_function("ps_nan_step", [&](int64_t id) {
    auto gradient = Tensor::full({2}, 1.0, DType::float32);
    if (poisoned)
      gradient = gradient * Tensor(std::numeric_limits<float>::quiet_NaN());
    w.assign_add(check_numerics(gradient, "the gradient at step " + std::to_string(id)));
    return id;
  });
  if (rt.task_type() != "chief")
    return rt.serve();
  // Rounds of functions until worker:1 ran one (the coordinator adds the
  // workers asynchronously): its error is raised by a schedule or a join.
  try {
    for (int64_t id = 1; id <= 100 * functions; ++id) {
      (void) coordinator.schedule(step, id);
      if (id % functions == 0)
        coordinator.join();
    }
  } catch (const Error& e) {
    if (!caught)
      throw; // the Runtime ends while the exception unwinds
    rt.report_job_failure(e.what());
    print(std::string("ERROR ") + e.what());
    return 3;
  }
  print("WRONG no function failed");
  return 1;
}

} // namespace

int run_ps_fault_scenario(Runtime& rt, const std::string& scenario, const std::string& argument) {
  if (scenario == "ps_worker_rejoin")
    return rejoin_scenario(rt, argument);
  if (scenario == "ps_nan" || scenario == "ps_nan_caught")
    return nan_scenario(rt, scenario == "ps_nan_caught");
  const std::string me = rt.task_type() + ":" + std::to_string(rt.task_index());
  ParameterServerStrategy strategy(rt);
  ClusterCoordinator coordinator(strategy);
  ShardedVariable w{nullptr};
  {
    auto scope = strategy.scope();
    w = strategy.create_variable(Tensor::zeros({2}, DType::int64), {.name = "w"});
  }
  // This process's first function (a worker runs one at a time).
  bool first = true;
  auto step = remote_function("ps_fault_step", [&](int64_t id) {
    w.assign_add(Tensor::full({2}, 1.0, DType::int64));
    if (scenario == "ps_worker_frozen" && me == "worker:1" && std::exchange(first, false)) {
      print("VICTIM worker:1 stops at " + std::to_string(wall_seconds()));
      std::raise(SIGSTOP);
    }
    w.assign_add(Tensor::full({2}, 10.0, DType::int64));
    return id;
  });
  if (rt.task_type() != "chief") {
    const int status = rt.serve();
    print("SERVE " + me + " returned " + std::to_string(status) + " at " + std::to_string(wall_seconds()));
    return scenario == "ps_chief_killed" ? (status == 1 ? 0 : 2) : status;
  }
  std::vector<RemoteValue<int64_t>> results;
  for (int64_t id = 0; id < functions; ++id)
    results.push_back(coordinator.schedule(step, id));
  if (scenario == "ps_chief_killed") {
    (void) results.front().fetch();
    print("VICTIM chief:0 dies at " + std::to_string(wall_seconds()));
    std::raise(SIGKILL);
  }
  coordinator.join();
  print("FINISHED at " + std::to_string(wall_seconds()));
  for (int64_t id = 0; id < functions; ++id)
    if (results[static_cast<std::size_t>(id)].fetch() != id)
      return 3;
  const auto value = w.read_value().to_vector<int64_t>();
  print("RESULT w=" + std::to_string(value[0]) + "," + std::to_string(value[1])
        + " expected=" + std::to_string(functions * 11));
  return value[0] == functions * 11 && value[1] == functions * 11 ? 0 : 4;
}

} // namespace troupe::testing

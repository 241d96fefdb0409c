#include "ps_fault_scenarios.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

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

} // namespace

int run_ps_fault_scenario(Runtime& rt, const std::string& scenario) {
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

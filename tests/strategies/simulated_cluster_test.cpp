// SimulatedCluster: a user's multi-worker program run as every task of a
// cluster in one process, under the seeded simulation, with network faults.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <troupe/core/timeline.hpp>
#include <troupe/troupe.hpp>

using namespace troupe;
using namespace std::chrono_literals;

namespace {

/// What one task saw: its place in the cluster and the bits of three steps'
/// cross-worker reductions.
struct TaskView {
  std::string type;
  int index = -1;
  int replicas = 0;
  std::vector<float> sums;
};

/// A user's program: three steps of an all-reduce of values that depend on
/// the replica and the step, then strategy.reduce.
TaskView program(Runtime& rt) {
  MultiWorkerMirroredStrategy strategy(rt);
  TaskView view;
  view.type = rt.task_type();
  view.index = rt.task_index();
  view.replicas = strategy.num_replicas_in_sync();
  for (int step = 0; step < 3; ++step) {
    auto values = strategy.experimental_distribute_values_from_function([step](const ValueContext& ctx) {
      return Tensor::from_vector<float>({0.1f * static_cast<float>(ctx.replica_id_in_sync_group + 1),
                                         1.0f / static_cast<float>(ctx.replica_id_in_sync_group + 3 + step)});
    });
    auto sums = strategy.run([](const Tensor& v) { return get_replica_context().all_reduce(ReduceOp::SUM, v); },
                             values);
    for (const auto& t : strategy.experimental_local_results(sums))
      for (float x : t.to_vector<float>())
        view.sums.push_back(x);
  }
  return view;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> fault_free_sums(int workers, int devices) {
  SimulatedCluster sim({.seed = 1, .workers = workers, .devices_per_worker = devices});
  auto results = sim.run(program);
  REQUIRE(results.at(0).ok());
  return results.at(0).value->sums;
}

} // namespace

TEST_CASE("a simulated MultiWorkerMirroredStrategy cluster runs the user's program as every task",
          "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 7, .workers = 3, .devices_per_worker = 2});
  auto results = sim.run(program);
  REQUIRE(results.size() == 3);
  for (int w = 0; w < 3; ++w) {
    const auto& r = results[static_cast<size_t>(w)];
    INFO(r.task << (r.error ? std::string(": ") + r.error->what() : ""));
    REQUIRE(r.ok());
    CHECK(r.task == "worker:" + std::to_string(w));
    CHECK(r.value->type == "worker");
    CHECK(r.value->index == w);
    CHECK(r.value->replicas == 6);
    // Every replica of every worker holds the same sum: 0.1 * (1 + ... + 6).
    REQUIRE(r.value->sums.size() == 3 * 2 * 2);
    CHECK(r.value->sums[0] == Approx(2.1f));
    CHECK(same_bits(r.value->sums, results[0].value->sums));
  }
  CHECK(sim.steps() > 0);
}

TEST_CASE("a simulated task's Runtime names its task and cluster", "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 3, .chief = 1, .workers = 2});
  auto results = sim.run([](Runtime& rt) {
    auto resolver = rt.cluster_resolver();
    REQUIRE(resolver != nullptr);
    return rt.task_type() + ":" + std::to_string(rt.task_index()) + " of "
           + std::to_string(resolver->cluster_spec().num_tasks("chief")) + "+"
           + std::to_string(resolver->cluster_spec().num_tasks("worker")) + " sim="
           + std::to_string(rt.is_simulation());
  });
  REQUIRE(results.size() == 3);
  CHECK(*results[0].value == "chief:0 of 1+2 sim=1");
  CHECK(*results[1].value == "worker:0 of 1+2 sim=1");
  CHECK(*results[2].value == "worker:1 of 1+2 sim=1");
}

TEST_CASE("the same seed replays a simulated cluster's run bit for bit, faults included", "[simulated_cluster]") {
  auto run = [](uint64_t seed) {
    SimulatedCluster sim({.seed = seed, .workers = 3});
    sim.faults().delay(0ms, 3ms).reorder(0.2).duplicate(0.1);
    auto results = sim.run(program);
    std::vector<std::string> outcome;
    for (const auto& r : results)
      outcome.push_back(r.ok() ? std::to_string(r.value->sums.size()) : r.error->what());
    return std::make_tuple(sim.trace_hash(), sim.steps(), outcome, sim.network_counts().duplicated);
  };
  const auto first = run(11);
  CHECK(run(11) == first);
  CHECK(std::get<0>(run(12)) != std::get<0>(first));
}

TEST_CASE("a killed simulated worker fails every survivor's collective with a named error",
          "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 5, .workers = 3});
  sim.faults().kill("worker:1", 0ms);
  auto results = sim.run(program);
  CHECK(results[1].killed);
  for (int w : {0, 2}) {
    const auto& r = results[static_cast<size_t>(w)];
    REQUIRE_FALSE(r.ok());
    CHECK_FALSE(r.killed);
    CHECK(r.error->code() == Errc::peer_lost);
    CHECK_THAT(std::string(r.error->what()), Catch::Contains("worker:1 was killed"));
  }
}

TEST_CASE("a partition shorter than the peer timeout delays a simulated run without changing a bit",
          "[simulated_cluster]") {
  const auto expected = fault_free_sums(3, 1);
  SimulatedCluster sim({.seed = 9, .workers = 3, .peer_timeout = 4s});
  sim.faults().partition({"worker:0"}, {"worker:1", "worker:2"}, 0ms, 3s);
  auto results = sim.run(program);
  for (const auto& r : results) {
    INFO(r.task << (r.error ? std::string(": ") + r.error->what() : ""));
    REQUIRE(r.ok());
    CHECK(same_bits(r.value->sums, expected));
  }
  CHECK(sim.network_counts().held > 0);
  CHECK(sim.virtual_time() >= 3s);
}

TEST_CASE("a partition past the peer timeout ends the simulated run on both sides with named errors",
          "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 9, .workers = 3, .peer_timeout = 4s});
  sim.faults().partition({"worker:0"}, {"worker:1", "worker:2"}, 0ms);
  auto results = sim.run(program);
  for (const auto& r : results) {
    INFO(r.task);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error->code() == Errc::peer_lost);
    CHECK_THAT(std::string(r.error->what()), Catch::Contains("sent nothing for the peer timeout"));
  }
}

TEST_CASE("a simulated task that never returns fails the run naming it and the seed", "[simulated_cluster]") {
  // Every frame is lost: each collective waits for its timeout (60 s), past
  // the run's deadline.
  SimulatedCluster sim({.seed = 21, .workers = 2, .deadline = 30s});
  sim.faults().drop(1.0);
  try {
    (void)sim.run(program);
    FAIL("the run should have failed");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::deadlock);
    CHECK_THAT(std::string(e.what()), Catch::Contains("seed 21") && Catch::Contains("worker:0, worker:1 did not return")
                                        && Catch::Contains("the deadline t=30.000s passed; the last event was at t="));
  }
}

TEST_CASE("a simulated worker that leaves early fails the others' next collective at once, not at its timeout",
          "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 21, .workers = 2});
  auto results = sim.run([](Runtime& rt) {
    MultiWorkerMirroredStrategy strategy(rt);
    const int steps = rt.task_index() == 0 ? 2 : 1;
    for (int s = 0; s < steps; ++s)
      strategy.run([] { return get_replica_context().all_reduce(ReduceOp::SUM, Tensor(1.0f)); });
  });
  CHECK(results[1].ok());
  REQUIRE_FALSE(results[0].ok());
  // worker:1's group aborts the collective as it stops (or its link answers
  // the announce, when that comes later), before worker:1's bye.
  CHECK(results[0].error->code() == Errc::cancelled);
  CHECK_THAT(std::string(results[0].error->what()), Catch::Contains("worker:1: its strategy was destroyed before"));
  CHECK(sim.virtual_time() < 61s);
}

TEST_CASE("SimulatedFaults refuses faults that name no task or no time", "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 1, .workers = 2});
  CHECK_THROWS_WITH(sim.faults().drop(1.5), Catch::Contains("a probability lies in [0, 1]"));
  CHECK_THROWS_WITH(sim.faults().delay(2ms, 1ms), Catch::Contains("max is below min"));
  sim.faults().kill("worker:7", 0ms);
  CHECK_THROWS_WITH(sim.run([](Runtime&) {}), Catch::Contains("no task \"worker:7\"")
                                                 && Catch::Contains("worker:0, worker:1"));
}

TEST_CASE("TPUStrategy over two simulated hosts runs as it does across processes", "[simulated_cluster][tpu]") {
  SimulatedCluster sim({.seed = 13, .workers = 2, .logical_tpu_cores = 8});
  sim.faults().delay(10us, 200us);
  auto results = sim.run([](Runtime& rt) {
    // The program of a real host: the runtime's cluster, as TF_CONFIG gives it there.
    TPUClusterResolver resolver("", *rt.cluster_resolver());
    const auto topology = initialize_tpu_system(rt, resolver);
    TPUStrategy tpu(rt, resolver);
    auto sums = tpu.run([] {
      auto& ctx = get_replica_context();
      return ctx.all_reduce(ReduceOp::SUM, Tensor(static_cast<int64_t>(ctx.replica_id_in_sync_group())));
    });
    std::vector<int64_t> out{topology.num_tasks(), topology.num_tpus_per_task(), tpu.num_replicas_in_sync()};
    for (const auto& t : tpu.experimental_local_results(sums))
      out.push_back(t.item<int64_t>());
    return out;
  });
  for (const auto& r : results) {
    INFO(r.task << (r.error ? std::string(": ") + r.error->what() : ""));
    REQUIRE(r.ok());
    // 2 hosts of 4 cores, 8 replicas whose ids sum to 28, on each host's 4 replicas.
    CHECK(*r.value == std::vector<int64_t>{2, 4, 8, 28, 28, 28, 28});
  }
}

TEST_CASE("a simulated cluster's timeline has every task's steps and collectives on every replica, in virtual time",
          "[simulated_cluster][timeline]") {
  const auto path = (std::filesystem::temp_directory_path()
                     / ("troupe-timeline-" + std::to_string(::getpid()) + ".json")).string();
  SimulatedCluster sim({.seed = 5, .workers = 3, .devices_per_worker = 2, .trace_path = path});
  sim.faults().delay(100us, 300us);
  auto results = sim.run(program);
  for (const auto& r : results)
    REQUIRE(r.ok());
  std::ifstream in(path);
  REQUIRE(in);
  const auto trace = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  REQUIRE(trace.contains("traceEvents"));
  const auto virtual_us = std::chrono::duration_cast<std::chrono::microseconds>(sim.virtual_time()).count();
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> spans; // per track: [ts, end)
  std::map<std::pair<int, int>, std::set<std::string>> collectives;           // per track: keys
  std::map<std::pair<int, int>, int> steps;
  for (const auto& e : trace["traceEvents"]) {
    const auto ph = e.at("ph").get<std::string>();
    REQUIRE((ph == "X" || ph == "M"));
    const auto track = std::make_pair(e.at("pid").get<int>(), e.at("tid").get<int>());
    if (ph == "M") {
      if (e.at("name") == "process_name")
        processes[track.first] = e.at("args").at("name").get<std::string>();
      continue;
    }
    const auto ts = e.at("ts").get<int64_t>();
    const auto dur = e.at("dur").get<int64_t>();
    CHECK(ts >= 0);
    CHECK(dur >= 0);
    CHECK(ts + dur <= virtual_us); // virtual time, from the run's start at 0
    spans[track].emplace_back(ts, ts + dur);
    if (e.at("cat") == "collective")
      collectives[track].insert(e.at("args").at("key").get<std::string>());
    if (e.at("cat") == "step")
      ++steps[track];
  }
  CHECK(processes == std::map<int, std::string>{{0, "worker:0"}, {1, "worker:1"}, {2, "worker:2"}});
  // Spans on one track nest: each starts after the one before ends, or inside it.
  for (auto& [track, list] : spans) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<int64_t, int64_t>> open;
    for (const auto& s : list) {
      while (!open.empty() && open.back().second <= s.first)
        open.pop_back();
      INFO("pid " << track.first << " tid " << track.second << " span [" << s.first << ", " << s.second << ")");
      if (!open.empty())
        CHECK(s.second <= open.back().second);
      open.push_back(s);
    }
  }
  // The strategy's replicas (group 1): 3 steps each, and the same collectives on all 6.
  std::vector<std::pair<int, int>> replicas;
  for (int pid = 0; pid < 3; ++pid)
    for (int replica = 0; replica < 2; ++replica)
      replicas.emplace_back(pid, internal::Timeline::replica_track(1, replica));
  for (const auto& track : replicas) {
    INFO("pid " << track.first << " tid " << track.second);
    CHECK(steps[track] == 3);
    CHECK(collectives[track].size() == 3);
    CHECK(collectives[track] == collectives[replicas.front()]);
  }
}

TEST_CASE("a SimulatedCluster whose tasks cannot be made says why", "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 1, .workers = 2, .logical_tpu_cores = 3});
  CHECK_THROWS_WITH(sim.run([](Runtime&) {}), Catch::Contains("logical_tpu_cores must be 0 (no TPU) or a TPU slice"));
  SimulatedCluster uneven({.seed = 1, .workers = 3, .logical_tpu_cores = 8});
  CHECK_THROWS_WITH(uneven.run([](Runtime&) {}), Catch::Contains("cannot be split over 3 worker tasks"));
}

TEST_CASE("a simulated run past its step bound fails as a livelock naming the seed", "[simulated_cluster]") {
  SimulatedCluster sim({.seed = 4, .workers = 2, .max_steps = 50});
  CHECK_THROWS_WITH(sim.run(program), Catch::Contains("seed 4") && Catch::Contains("did not return")
                                        && Catch::Contains("it took more than 50 actor steps (a livelock?)"));
}

// SimulatedCluster with parameter servers: a user's ParameterServerStrategy
// program run as the chief, the workers and the ps tasks in one process,
// with kills and restarts, and its messages on the simulated network.

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <troupe/troupe.hpp>

using namespace troupe;
using namespace std::chrono_literals;

namespace {

/// Which run of a task's function (1, then 2 after a restart) ran each
/// scheduled function: (task index, run) per function id.
using Runs = std::map<int64_t, std::pair<int, int>>;

/// A user's parameter-server program, the same on every task: the chief
/// schedules rounds of `per_round` functions, each adding 1 then 10 to a
/// variable, until `enough` says so (at most 40 rounds); the others serve.
/// The chief returns the variable and how many functions it scheduled; the
/// others what serve() returned.
struct PsProgram {
  int per_round = 6;
  std::function<bool(int rounds)> enough = [](int rounds) { return rounds == 2; };
  std::shared_ptr<Runs> ran = std::make_shared<Runs>();
  std::shared_ptr<std::map<std::string, int>> starts = std::make_shared<std::map<std::string, int>>();
  std::vector<std::string> types; ///< task_type() of each run, in start order
  /// This task throws where it would serve, and serves while its stack
  /// unwinds (a destructor that waits): the job runs on meanwhile.
  std::string throws_while_serving;

  std::vector<int64_t> operator()(Runtime& rt) {
    const auto me = rt.task_type() + ":" + std::to_string(rt.task_index());
    const int run = ++(*starts)[me];
    types.push_back(rt.task_type());
    ParameterServerStrategy strategy(rt);
    ClusterCoordinator coordinator(strategy);
    ShardedVariable w{nullptr};
    {
      auto scope = strategy.scope();
      w = strategy.create_variable(Tensor::zeros({2}, DType::int64), {.name = "w"});
    }
    auto ran_here = ran;
    const int index = rt.task_index();
    auto step = remote_function("simulated_ps_step", [&w, ran_here, index, run](int64_t id) {
      w.assign_add(Tensor::full({2}, 1.0, DType::int64));
      w.assign_add(Tensor::full({2}, 10.0, DType::int64));
      (*ran_here)[id] = {index, run};
      return id;
    });
    if (me == throws_while_serving) {
      struct ServeOnUnwind {
        Runtime& rt;
        ~ServeOnUnwind() { (void)rt.serve(); }
      } serving{rt};
      fail(Errc::invalid_argument, me + "'s own mistake");
    }
    if (rt.task_type() != "chief")
      return {rt.serve()};
    int64_t scheduled = 0;
    for (int rounds = 0; rounds < 40 && !enough(rounds); ++rounds) {
      for (int i = 0; i < per_round; ++i)
        (void)coordinator.schedule(step, scheduled++);
      coordinator.join();
    }
    const auto value = w.read_value().to_vector<int64_t>();
    return {value.at(0), value.at(1), scheduled};
  }
};

} // namespace

TEST_CASE("a simulated parameter-server cluster runs the user's program as chief, workers and ps tasks",
          "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 3, .chief = 1, .workers = 2, .ps = 2});
  sim.faults().delay(50us, 500us);
  CHECK(sim.tasks() == std::vector<std::string>{"chief:0", "worker:0", "worker:1", "ps:0", "ps:1"});
  PsProgram program;
  auto results = sim.run(std::ref(program));
  REQUIRE(results.at(0).ok());
  CHECK(*results[0].value == std::vector<int64_t>{11 * 12, 11 * 12, 12});
  for (std::size_t i = 1; i < results.size(); ++i) {
    INFO(results[i].task);
    REQUIRE(results[i].ok());
    CHECK(results[i].value->at(0) == 0); // serve() ended as the chief ended the job
  }
  std::multiset<std::string> types(program.types.begin(), program.types.end());
  CHECK(types == std::multiset<std::string>{"chief", "ps", "ps", "worker", "worker"});
  // Both workers ran functions; their messages crossed the simulated
  // network, taking its latency (12 functions: more than 12 round trips).
  std::set<int> workers;
  for (const auto& [id, where] : *program.ran)
    workers.insert(where.first);
  CHECK(workers == std::set<int>{0, 1});
  CHECK(sim.network_counts().messages > 50);
  CHECK(sim.virtual_time() > 12 * 100us);
}

TEST_CASE("the same seed replays a simulated parameter-server run bit for bit, kill included",
          "[simulated_cluster][ps]") {
  auto run = [](uint64_t seed) {
    SimulatedCluster sim({.seed = seed, .chief = 1, .workers = 2, .ps = 1});
    sim.faults().delay(50us, 500us).kill("worker:1", 3ms);
    PsProgram program;
    auto results = sim.run(std::ref(program));
    REQUIRE(results.at(0).ok());
    return std::make_tuple(sim.trace_hash(), sim.steps(), *program.ran, sim.network_counts().messages);
  };
  const auto first = run(21);
  CHECK(run(21) == first);
  CHECK(std::get<0>(run(22)) != std::get<0>(first));
}

TEST_CASE("a killed simulated worker's functions run again elsewhere and count once", "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 4, .chief = 1, .workers = 2, .ps = 1});
  sim.faults().delay(50us, 500us).kill("worker:0", 2ms);
  PsProgram program;
  auto results = sim.run(std::ref(program));
  CHECK(results[1].killed);
  REQUIRE(results[0].ok());
  // Every function's effect once: 11 per function, though worker:0 died mid-run.
  CHECK(*results[0].value == std::vector<int64_t>{11 * 12, 11 * 12, 12});
  REQUIRE(results[2].ok());
  CHECK(results[2].value->at(0) == 0);
  int after_kill_on_survivor = 0;
  for (const auto& [id, where] : *program.ran)
    after_kill_on_survivor += where.first == 1 ? 1 : 0;
  CHECK(after_kill_on_survivor > 6);
}

TEST_CASE("a restarted simulated worker is taken back and runs functions again", "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 8, .chief = 1, .workers = 2, .ps = 1});
  sim.faults().delay(50us, 500us).kill("worker:1", 1ms).restart("worker:1", 3ms);
  PsProgram program;
  // Rounds go on until a function ran on worker:1's second run.
  program.enough = [ran = program.ran](int) {
    for (const auto& [id, where] : *ran)
      if (where == std::make_pair(1, 2))
        return true;
    return false;
  };
  auto results = sim.run(std::ref(program));
  REQUIRE(results[0].ok());
  const auto scheduled = results[0].value->at(2);
  CHECK(scheduled < 40 * 6);
  CHECK(*results[0].value == std::vector<int64_t>{11 * scheduled, 11 * scheduled, scheduled});
  CHECK(results[2].restarted);
  CHECK_FALSE(results[2].killed);
  REQUIRE(results[2].ok());
  CHECK(results[2].value->at(0) == 0);
  CHECK((*program.starts)["worker:1"] == 2);
}

TEST_CASE("a killed simulated parameter server ends every surviving task with a named error",
          "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 2, .chief = 1, .workers = 2, .ps = 2});
  sim.faults().delay(50us, 500us).kill("ps:1", 2ms);
  PsProgram program;
  auto results = sim.run(std::ref(program));
  CHECK(results[4].killed);
  REQUIRE_FALSE(results[0].ok());
  CHECK(results[0].error->code() == Errc::peer_lost);
  CHECK_THAT(std::string(results[0].error->what()), Catch::Contains("ps:1"));
  for (std::size_t i : {1, 2, 3}) {
    INFO(results[i].task);
    REQUIRE(results[i].ok());
    CHECK(results[i].value->at(0) == 1); // serve(): the job cannot go on
  }
}

TEST_CASE("SimulatedFaults refuses a restart that no real cluster could make", "[simulated_cluster][ps]") {
  auto refused = [](const std::string& task, bool killed, int ps) {
    SimulatedCluster sim({.seed = 1, .chief = 1, .workers = 2, .ps = ps});
    if (killed)
      sim.faults().kill(task, 1ms);
    sim.faults().restart(task, 2ms);
    CHECK_THROWS_WITH(sim.run([](Runtime&) {}), Catch::Contains("rejoins only as a worker of a cluster with ps"));
  };
  refused("worker:1", false, 1); // not killed first
  refused("ps:0", true, 1);      // a parameter server's variables are gone with it
  refused("worker:1", true, 0);  // no parameter servers: no rejoin
  CHECK_THROWS_WITH(SimulatedCluster({.workers = 2, .ps = 1}), Catch::Contains("set .chief = 1"));
}

TEST_CASE("a simulated worker frozen past the peer timeout is counted lost and its functions count once",
          "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 6, .chief = 1, .workers = 2, .ps = 1, .peer_timeout = 50ms});
  sim.faults().delay(50us, 500us).freeze("worker:0", 2ms, 10s);
  PsProgram program;
  auto results = sim.run(std::ref(program));
  REQUIRE(results[0].ok());
  CHECK(*results[0].value == std::vector<int64_t>{11 * 12, 11 * 12, 12});
  // The frozen worker counts the others lost too: its serve() cannot go on.
  REQUIRE(results[1].ok());
  CHECK(results[1].value->at(0) == 1);
  REQUIRE(results[2].ok());
  CHECK(results[2].value->at(0) == 0);
  CHECK(sim.virtual_time() >= 52ms);
}

TEST_CASE("a simulated partition within the peer timeout only delays a parameter-server job",
          "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 9, .chief = 1, .workers = 2, .ps = 1, .peer_timeout = 50ms});
  sim.faults().delay(50us, 500us).partition({"worker:1"}, {"chief:0", "ps:0"}, 1ms, 30ms);
  PsProgram program;
  auto results = sim.run(std::ref(program));
  REQUIRE(results[0].ok());
  CHECK(*results[0].value == std::vector<int64_t>{11 * 12, 11 * 12, 12});
  for (std::size_t i : {1, 2, 3}) {
    REQUIRE(results[i].ok());
    CHECK(results[i].value->at(0) == 0);
  }
  CHECK(sim.virtual_time() >= 30ms);
}

TEST_CASE("one simulated task's exception is its own: the other tasks' job still ends well",
          "[simulated_cluster][ps]") {
  // Every task shares one thread: while the failing worker unwinds (and a
  // destructor of its waits, here until the job ends), the others run, and
  // std::uncaught_exceptions() there counts its exception. Their farewells
  // must not say their job failed.
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("seed " << seed);
    SimulatedCluster sim({.seed = seed, .chief = 1, .workers = 2, .ps = 1});
    sim.faults().delay(50us, 500us);
    PsProgram program;
    program.throws_while_serving = "worker:0";
    auto results = sim.run(std::ref(program));
    REQUIRE(results[0].ok());
    CHECK(*results[0].value == std::vector<int64_t>{11 * 12, 11 * 12, 12});
    REQUIRE_FALSE(results[1].ok());
    CHECK_THAT(std::string(results[1].error->what()), Catch::Contains("worker:0's own mistake"));
    for (std::size_t i : {2, 3}) {
      REQUIRE(results[i].ok());
      CHECK(results[i].value->at(0) == 0);
    }
  }
}

TEST_CASE("a kill after a restart kills the restarted run", "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 5, .chief = 1, .workers = 2, .ps = 1});
  sim.faults().delay(50us, 500us).kill("worker:1", 1ms).restart("worker:1", 3ms).kill("worker:1", 5ms);
  PsProgram program;
  auto results = sim.run(std::ref(program));
  REQUIRE(results[0].ok());
  CHECK(*results[0].value == std::vector<int64_t>{11 * 12, 11 * 12, 12});
  CHECK(results[2].restarted);
  CHECK(results[2].killed);
  CHECK((*program.starts)["worker:1"] == 2);
}

TEST_CASE("a restart after a kill that came too late runs nothing again", "[simulated_cluster][ps]") {
  SimulatedCluster sim({.seed = 5, .chief = 1, .workers = 2, .ps = 1});
  // The job is over within milliseconds: the task had returned before its kill.
  sim.faults().delay(50us, 500us).kill("worker:1", 5s).restart("worker:1", 6s);
  PsProgram program;
  auto results = sim.run(std::ref(program));
  REQUIRE(results[2].ok());
  CHECK(results[2].value->at(0) == 0);
  CHECK_FALSE(results[2].restarted);
  CHECK_FALSE(results[2].killed);
  CHECK((*program.starts)["worker:1"] == 1);
}

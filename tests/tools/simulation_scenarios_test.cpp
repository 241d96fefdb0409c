// The seed runner and troupe-sim: seed ranges, replay lines, a deliberately
// broken protocol caught, and the seeds that found bugs (regression tests).
// Every scenario also runs over its CI seed range as a ctest of its own.

#include <chrono>
#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include <troupe/troupe.hpp>

#include <support/test_process.hpp>
#include <troupe_sim/scenarios.hpp>

using namespace troupe;
using Catch::Contains;

namespace {

const troupe_sim::Scenario& scenario(const std::string& name) {
  for (const auto& s : troupe_sim::scenarios())
    if (s.name == name)
      return s;
  FAIL("no scenario " << name);
  throw;
}

} // namespace

TEST_CASE("seed ranges parse one seed or a range and name a bad one", "[sim][seeds]") {
  CHECK(SeedRange::parse("417").first == 417);
  CHECK(SeedRange::parse("417").count() == 1);
  CHECK(SeedRange::parse("1-1000").count() == 1000);
  CHECK(SeedRange::parse("1-1000").to_string() == "1-1000");
  CHECK_THROWS_WITH(SeedRange::parse("10-1"), Contains("\"10-1\"") && Contains("ends before it starts"));
  CHECK_THROWS_WITH(SeedRange::parse("x"), Contains("\"x\"") && Contains("write one seed (417) or a range"));
  CHECK_THROWS_WITH(SeedRange::parse("1-"), Contains("\"1-\""));
}

TEST_CASE("run_seeds stops at the first failing seed and gives the line that replays it", "[sim][seeds]") {
  std::vector<uint64_t> seen;
  auto report = run_seeds({5, 20}, [&](uint64_t seed) {
    seen.push_back(seed);
    if (seed == 8)
      throw Error(Errc::internal, "broken at 8");
  }, "my_tests \"my scenario\"");
  CHECK(seen == std::vector<uint64_t>{5, 6, 7, 8});
  REQUIRE_FALSE(report.ok());
  CHECK(*report.failed_seed == 8);
  CHECK(report.seeds_run == 4);
  CHECK(report.replay == "TROUPE_SIM_SEED=8 my_tests \"my scenario\"");
  CHECK_THAT(report.summary(), Contains("seed 8 failed") && Contains("broken at 8")
                                 && Contains("replay: TROUPE_SIM_SEED=8 my_tests"));
  auto good = run_seeds({1, 3}, [](uint64_t) {}, "x");
  CHECK(good.ok());
  CHECK(good.seeds_run == 3);
  CHECK_THAT(good.summary(), Contains("seeds 1-3: all 3 passed in") && Contains("seeds/s"));
}

TEST_CASE("troupe-sim catches a deliberately broken protocol and prints the line that replays it",
          "[sim][seeds]") {
  // No abort, run_done or bye frame arrives: a worker whose step failed
  // leaves the others waiting past the scenario's one-second bound.
  testing::TestProcess broken({TROUPE_SIM_PROGRAM, "mwms-replica-error", "--seeds", "1-200", "--lose-failure-notices"});
  REQUIRE(broken.wait(std::chrono::seconds(60)));
  INFO(broken.out() << broken.err());
  CHECK(broken.exit_code() == 1);
  CHECK_THAT(broken.out(), Contains("did not return (the deadline t=1.000s passed")
                             && Contains("replay: TROUPE_SIM_SEED=1 troupe-sim mwms-replica-error "
                                         "--lose-failure-notices"));
  // The replay line runs that one seed, and fails the same way.
  testing::TestProcess replay({TROUPE_SIM_PROGRAM, "mwms-replica-error", "--lose-failure-notices"},
                              {{"TROUPE_SIM_SEED", "1"}});
  REQUIRE(replay.wait(std::chrono::seconds(60)));
  CHECK(replay.exit_code() == 1);
  CHECK_THAT(replay.out(), Contains("seeds 1: seed 1 failed after 1 seeds") && Contains("did not return"));
  // The protocol as it is passes the same seeds.
  testing::TestProcess fixed({TROUPE_SIM_PROGRAM, "mwms-replica-error", "--seeds", "1-200"});
  REQUIRE(fixed.wait(std::chrono::seconds(60)));
  INFO(fixed.out() << fixed.err());
  CHECK(fixed.exit_code() == 0);
  CHECK_THAT(fixed.out(), Contains("seeds 1-200: all 200 passed"));
}

// -- seeds that found bugs ----------------------------------------------------

TEST_CASE("mwms-replica-error seed 3: a worker whose step failed after its all-reduce fails the others' next "
          "collective at once, not at their timeout", "[sim][regression]") {
  // Found by the seeds: its strategy was gone, and the link dropped the
  // others' announces of their next collective without a word, so they
  // waited 60 s. The link now answers them with the group's abort.
  CHECK_NOTHROW(scenario("mwms-replica-error").run(3));
}

TEST_CASE("mwms-replica-error seeds 7, 23 and 234: the others' errors name the step that failed, not only that "
          "its worker left", "[sim][regression]") {
  // Found by the seeds: the failed worker's bye went out before its groups'
  // aborts (its process now exits once its actors settled), and the aborts
  // of a destroyed strategy said only that it was destroyed. They now carry
  // the failed step's error, as a peer's loss does after its run_done.
  for (const uint64_t seed : {7, 23, 234}) {
    INFO("seed " << seed);
    CHECK_NOTHROW(scenario("mwms-replica-error").run(seed));
  }
}

TEST_CASE("ps-kill-worker seeds 1-3: simulated tasks in one process keep their own functions and variable ids",
          "[sim][regression]") {
  // Found by the first seeds: remote_function names and ShardedVariable ids
  // were counted per process, so the tasks' programs overwrote each other's
  // functions and the workers updated "variable 3" where the chief had made
  // variable 1 ("there is no shard 0 of variable 3 on this server"). Each
  // simulated task's program now has its own FunctionRegistry.
  for (uint64_t seed : {1, 2, 3})
    CHECK_NOTHROW(scenario("ps-kill-worker").run(seed));
}

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <catch2/catch.hpp>

#include <atomic>

#include <troupe/core/caf_types.hpp>
#include <troupe/core/denormals.hpp>
#include <troupe/troupe.hpp>

using namespace troupe;
using Catch::Matchers::Contains;

TEST_CASE("a runtime offers its logical CPU devices and names missing ones", "[actors][runtime]") {
  Runtime rt({.logical_cpu_devices = 3});
  // GPUs, where the machine has any, come after the CPU devices.
  REQUIRE(rt.devices().size() >= 3);
  CHECK(rt.devices()[2].short_name() == "CPU:2");
  CHECK((rt.devices().size() == 3 || rt.devices()[3].is_gpu()));
  CHECK(rt.resolve_device("/job:localhost/replica:0/task:0/device:CPU:1").short_name() == "CPU:1");
  CHECK_THROWS_WITH(rt.resolve_device("CPU:3"),
                    Contains("device \"CPU:3\" does not exist in this runtime (devices: CPU:0, CPU:1, CPU:2"));
  CHECK_THROWS_WITH(rt.resolve_device("/job:worker/task:3/device:CPU:0"),
                    Contains("names another process (/job:worker/task:3/device:CPU:0)"));
  CHECK_THROWS_WITH(rt.resolve_device("/task:1/cpu:0"), Contains("names another process"));
  CHECK_FALSE(rt.is_simulation());
}

TEST_CASE("runtime options are checked", "[actors][runtime]") {
  CHECK_THROWS_WITH(Runtime({.logical_cpu_devices = 0}), Contains("logical_cpu_devices must be at least 1, got 0"));
  CHECK_THROWS_WITH(Runtime({.logical_cpu_devices = 1, .threads = -1}), Contains("RuntimeOptions.threads must be >= 0"));
  CHECK_THROWS_WITH(Runtime(Simulation{.seed = 1, .logical_cpu_devices = -2}),
                    Contains("logical_cpu_devices must be at least 1, got -2"));
}

TEST_CASE("troupe embeds in an application's own actor system", "[actors][runtime]") {
  caf::actor_system_config cfg;
  add_core_types(cfg);
  caf::actor_system system(cfg);
  {
    Runtime rt(system, {.logical_cpu_devices = 2});
    MirroredStrategy strategy(rt, {"CPU:0", "CPU:1"});
    auto r = strategy.run([] {
      auto& ctx = get_replica_context();
      return ctx.all_reduce(ReduceOp::SUM, Tensor(ctx.replica_id_in_sync_group() + 1));
    });
    CHECK(r[0].item<int32_t>() == 3);
  }
}

TEST_CASE("an embedded actor system on CAF's test coordinator is stepped deterministically", "[actors][runtime]") {
  auto trace = [] {
    caf::actor_system_config cfg;
    add_core_types(cfg);
    cfg.set("scheduler.policy", caf::atom("testing"));
    caf::actor_system system(cfg);
    uint64_t hash = 0;
    {
      Runtime rt(system, {.logical_cpu_devices = 3});
      CHECK(rt.is_simulation());
      MirroredStrategy strategy(rt, {"CPU:0", "CPU:1", "CPU:2"});
      auto r = strategy.run([] { return get_replica_context().all_gather(Tensor::from_vector<int32_t>({1}), 0); });
      CHECK(r[1].to_vector<int32_t>() == std::vector<int32_t>{1, 1, 1});
      hash = rt.simulation_trace_hash();
    }
    return hash;
  };
  CHECK(trace() == trace());
}

namespace {

// Recurses `depth` levels, each with 1 KiB of locals, and returns the sum of
// the levels' numbers: the result is right only if every frame was live at
// once, so a fiber stack too small for the recursion cannot pass.
int deep_sum(int depth) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth % 100);
  frame[sizeof frame - 1] = 1;
  if (depth == 0)
    return 0;
  const int below = deep_sum(depth - 1);
  return below + frame[0] + frame[sizeof frame - 1];
}

int expected_deep_sum(int depth) {
  int sum = 0;
  for (int level = 1; level <= depth; ++level)
    sum += level % 100 + 1;
  return sum;
}

} // namespace

TEST_CASE("replica functions run on fibers with deep stacks and survive many steps", "[actors][fibers]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, {"CPU:0", "CPU:1"});
  // 600 levels of 1 KiB fit the default 1 MiB fiber stack; with
  // TROUPE_FIBER_STACK_KIB=512 (or Boost's 128 KiB default) the test crashes.
  constexpr int depth = 600;
  for (int step = 0; step < 50; ++step) {
    CAPTURE(step);
    auto r = strategy.run([step] {
      auto& ctx = get_replica_context();
      // Each replica and step recurses to its own depth, so no value can come from another.
      const int sum = deep_sum(depth - ctx.replica_id_in_sync_group() - step);
      return ctx.all_reduce(ReduceOp::SUM, Tensor(static_cast<int32_t>(sum)));
    });
    CHECK(r[0].item<int32_t>() == expected_deep_sum(depth - step) + expected_deep_sum(depth - 1 - step));
  }
}

TEST_CASE("replica functions and dataset functions run with denormals flushed", "[actors][runtime][denormals]") {
  auto flushed_everywhere = [](Runtime& rt) {
    MirroredStrategy strategy(rt, {"CPU:0", "CPU:1"});
    std::atomic<int> map_calls{0}, map_flushed{0};
    auto dataset = Dataset::range(4)
                     .map([&](const Tensor& x) {
                       ++map_calls;
                       map_flushed += denormals_flushed() ? 1 : 0;
                       return x;
                     })
                     .batch(2);
    int replica_calls = 0, replica_flushed = 0;
    for (const auto& step : strategy.experimental_distribute_dataset(dataset)) {
      auto flags = strategy.run([](const Tensor&) { return Tensor(denormals_flushed() ? 1 : 0); }, step);
      for (const auto& flag : strategy.experimental_local_results(flags)) {
        ++replica_calls;
        replica_flushed += flag.item<int32_t>();
      }
    }
    CHECK(replica_calls == 4);
    CHECK(replica_flushed == replica_calls);
    CHECK(map_calls.load() >= 4); // and one more where the element spec is probed
    CHECK(map_flushed.load() == map_calls.load());
  };
  SECTION("threaded") {
    Runtime rt({.logical_cpu_devices = 2});
    flushed_everywhere(rt);
  }
  SECTION("simulated") {
    Runtime rt(Simulation{.seed = 3, .logical_cpu_devices = 2});
    flushed_everywhere(rt);
  }
  // The test's own thread is left as it was.
  CHECK_FALSE(denormals_flushed());
}

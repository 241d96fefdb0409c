#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <troupe/actors/runtime.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/tpu_cluster_resolver.hpp>
#include <troupe/strategies/device_assignment.hpp>
#include <troupe/strategies/tpu_system.hpp>

#include "../support/error_code_of.hpp"
#include "../support/test_process.hpp"

using Catch::Contains;
using troupe::Errc;
using troupe::Runtime;
using troupe::RuntimeOptions;
using troupe::Topology;
using troupe::TPUClusterResolver;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

TEST_CASE("initialize_tpu_system: records the emulated slice and connects the resolver", "[tpu]") {
  Runtime rt(RuntimeOptions{.logical_tpu_cores = 8});
  auto resolver = TPUClusterResolver::from_tf_config("", "");
  const auto copy = resolver;
  CHECK_FALSE(troupe::initialized_tpu_topology(rt).has_value());
  CHECK(error_code_of([&] { (void)resolver.num_accelerators(); }) == Errc::failed_precondition);

  const auto topology = troupe::initialize_tpu_system(rt, resolver);
  CHECK(topology == Topology::emulated_slice(8));
  CHECK(rt.impl().tpu_topology() == topology.serialized());
  CHECK(troupe::initialized_tpu_topology(rt) == topology);
  CHECK(copy.num_accelerators() == std::map<std::string, int>{{"TPU", 8}});
  CHECK(resolver.tpu_topology() == topology.serialized());
  const auto assignment = troupe::DeviceAssignment::build(topology, std::nullopt, std::nullopt, 8);
  CHECK(assignment.tpu_device(7, 0, "worker") == "/job:worker/task:0/device:TPU:7");

  // Initializing again gives the same slice; shutting down forgets it.
  CHECK(troupe::initialize_tpu_system(rt, resolver) == topology);
  troupe::shutdown_tpu_system(rt);
  CHECK_FALSE(troupe::initialized_tpu_topology(rt).has_value());
  CHECK_FALSE(rt.impl().tpu_topology().has_value());
  troupe::shutdown_tpu_system(rt); // twice is harmless
}

TEST_CASE("initialize_tpu_system: a runtime without TPU cores names logical_tpu_cores", "[tpu]") {
  Runtime rt(RuntimeOptions{});
  auto resolver = TPUClusterResolver::from_tf_config("", "");
  CHECK(error_code_of([&] { (void)troupe::initialize_tpu_system(rt, resolver); }) == Errc::not_found);
  CHECK_THAT(error_message_of([&] { (void)troupe::initialize_tpu_system(rt, resolver); }),
             Contains("RuntimeOptions{.logical_tpu_cores = N}"));
  CHECK(error_code_of([&] { (void)resolver.num_accelerators(); }) == Errc::failed_precondition);
}

TEST_CASE("initialize_tpu_system: a TF_CONFIG slice needs the runtime of that task", "[tpu]") {
  // 16 cores over 2 worker hosts, but this runtime is a single process.
  Runtime rt(RuntimeOptions{.logical_tpu_cores = 16});
  auto resolver = TPUClusterResolver::from_tf_config(
    "", R"({"cluster": {"worker": ["host0:8470", "host1:8470"]}, "task": {"type": "worker", "index": 1}})");
  const auto message = error_message_of([&] { (void)troupe::initialize_tpu_system(rt, resolver); });
  CHECK_THAT(message, Contains("describes task worker:1 of the cluster"));
  CHECK_THAT(message, Contains("the runtime is a single process"));
  CHECK_FALSE(troupe::initialized_tpu_topology(rt).has_value());
}

TEST_CASE("initialize_tpu_system: a simulated runtime has its slice too", "[tpu]") {
  Runtime rt(troupe::Simulation{.seed = 3, .logical_tpu_cores = 2});
  auto resolver = TPUClusterResolver::from_tf_config("local", "");
  CHECK(troupe::initialize_tpu_system(rt, resolver).mesh_shape() == std::vector<int>{1, 1, 1, 2});
  CHECK(resolver.num_accelerators() == std::map<std::string, int>{{"TPU", 2}});
}

namespace {

// The "TPU ..." lines each task printed, by task ("worker:0"), from troupe-launch's prefixed output.
std::map<std::string, std::vector<std::string>> tpu_lines(const std::string& out) {
  std::map<std::string, std::vector<std::string>> lines;
  for (const auto& line : troupe::testing::split_lines(out)) {
    const auto close = line.find("] TPU ");
    if (line.rfind("[worker:", 0) == 0 && close != std::string::npos)
      lines[line.substr(1, close - 1)].push_back(line.substr(close + 2));
  }
  return lines;
}

} // namespace

TEST_CASE("initialize_tpu_system: two worker hosts of a 16-core slice have 8 cores each", "[tpu]") {
  const auto r = troupe::testing::run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", TROUPE_TPU_WORKER},
                                               {}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = tpu_lines(r.out);
  REQUIRE(lines.size() == 2);
  const auto has = [](const std::vector<std::string>& mine, const std::string& line) {
    return std::find(mine.begin(), mine.end(), line) != mine.end();
  };
  for (const int task : {0, 1}) {
    const auto& mine = lines["worker:" + std::to_string(task)];
    INFO("worker " << task);
    CHECK(has(mine, "TPU cores 8"));
    CHECK(has(mine, "TPU topology tasks 2 per task 8"));
    CHECK(has(mine, "TPU DONE"));
    CHECK(std::any_of(mine.begin(), mine.end(), [](const std::string& l) { return l.rfind("TPU master grpc://", 0) == 0; }));
  }
  // DeviceAssignment.build(Topology::emulated_slice(16, 2), [1,1,1,2], num_replicas=8), as TensorFlow gives it.
  CHECK(has(lines["worker:0"], "TPU replica 0 /job:worker/task:0/device:TPU:0"));
  CHECK(has(lines["worker:0"], "TPU replica 6 /job:worker/task:0/device:TPU:6"));
  CHECK(has(lines["worker:1"], "TPU replica 2 /job:worker/task:1/device:TPU:0"));
  CHECK(has(lines["worker:1"], "TPU replica 4 /job:worker/task:1/device:TPU:6"));
}

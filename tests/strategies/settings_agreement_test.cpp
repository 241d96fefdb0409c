// Comparing settings across workers: the comparison and its wire form, and
// check_same_across_workers on one worker. Several workers: tests/cluster.

#include <catch2/catch.hpp>

#include <troupe/actors/replicas/agreement_group.hpp>
#include <troupe/actors/replicas/settings_agreement.hpp>
#include <troupe/troupe.hpp>

#include "support/error_code_of.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

namespace {

std::string failure_of(const std::vector<WorkerSettings>& workers) {
  try {
    require_same_settings(workers, "job", "Fix it.");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::failed_precondition);
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("settings that differ name every differing setting, worker and value", "[strategies]") {
  const std::vector<WorkerSettings> workers{
    {"worker:0", {{"--batch", "128"}, {"--seed", "1"}, {"--optimizer", "adam"}}},
    {"worker:1", {{"--batch", "64"}, {"--seed", "1"}, {"--optimizer", "adam"}}},
    {"worker:2", {{"--batch", "32"}, {"--seed", "1"}}},
  };
  CHECK(failure_of(workers)
        == "job: the workers differ: \"--batch\" is 128 on worker:0, but 64 on worker:1 and 32 on worker:2; "
           "\"--optimizer\" is adam on worker:0, but not given on worker:2. Fix it.");
  CHECK(failure_of({workers[0], workers[0], workers[0]}).empty());
}

TEST_CASE("settings survive their wire form and truncated or padded bytes are data_loss", "[strategies]") {
  const Settings settings{{"a", ""}, {"name", std::string("with\0zero", 9)}};
  const auto bytes = encode_settings(settings);
  CHECK(decode_settings(bytes, "worker:1") == settings);
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    CHECK(testing::error_code_of([&] { (void)decode_settings(bytes.substr(0, cut), "worker:1"); }) == Errc::data_loss);
  CHECK(testing::error_code_of([&] { (void)decode_settings(bytes + "x", "worker:1"); }) == Errc::data_loss);
  // A count far beyond the bytes is refused before anything is reserved.
  CHECK(testing::error_code_of([&] { (void)decode_settings(std::string("\xff\xff\xff\x7f", 4), "worker:1"); })
        == Errc::data_loss);
}

TEST_CASE("gathered agreement blocks split back into each worker's bytes and no other", "[strategies]") {
  const auto a = pack_block("first");
  const auto b = pack_block("");
  const auto gathered = concat({a, b}, 0);
  CHECK(unpack_blocks(gathered, 2) == std::vector<std::string>{"first", ""});
  CHECK(testing::error_code_of([&] { (void)unpack_blocks(gathered, 3); }) == Errc::data_loss);
  CHECK(testing::error_code_of([&] { (void)unpack_blocks(gathered, 1); }) == Errc::data_loss);
  CHECK(testing::error_code_of([&] { (void)unpack_blocks(gathered.slice(0, 10), 2); }) == Errc::data_loss);
}

TEST_CASE("check_same_across_workers compares nothing on one worker and is refused in replica context",
          "[strategies]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, {"CPU:0", "CPU:1"});
  strategy.extended().check_same_across_workers("--batch", 64);
  strategy.extended().check_same_across_workers("images", TensorSpec{Shape{-1, 784}, DType::float32});
  std::vector<std::string> refusals(2);
  strategy.run([&] {
    try {
      strategy.extended().check_same_across_workers("--batch", 64);
    } catch (const Error& e) {
      refusals[static_cast<size_t>(get_replica_context().replica_id_in_sync_group())] =
        std::string(name(e.code())) + ": " + e.what();
    }
  });
  for (const auto& refusal : refusals)
    CHECK_THAT(refusal, Contains("failed_precondition") && Contains("check_same_across_workers"));
}

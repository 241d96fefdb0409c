#include <catch2/catch.hpp>

#include <support/scoped_env.hpp>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include <troupe/core/errors.hpp>
#include <troupe/net/tpu_cluster_resolver.hpp>

#include "../support/error_code_of.hpp"

using Catch::Contains;
using troupe::ClusterSpec;
using troupe::Errc;
using troupe::TPUClusterResolver;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace {

using troupe::testing::ScopedEnv;


const char* const two_hosts = R"({"cluster": {"worker": ["host0:8470", "host1:8470"]},)"
                              R"( "task": {"type": "worker", "index": 1}})";

} // namespace

TEST_CASE("TPUClusterResolver: the empty name and local are this host, as TensorFlow's local TPU", "[tpu]") {
  const ScopedEnv no_tf_config("TF_CONFIG", std::nullopt);
  for (const char* name : {"", "local"}) {
    const TPUClusterResolver resolver(name);
    CHECK(resolver.tpu() == "local");
    CHECK(resolver.cluster_spec().empty());
    CHECK(resolver.task_type() == "worker");
    CHECK(resolver.task_id() == 0);
    CHECK(resolver.master().empty());
    CHECK(resolver.master("worker", 0).empty());
    CHECK(resolver.rpc_layer().empty());
    CHECK(resolver.environment().empty());
  }
  // TF_CONFIG without a cluster is still a local TPU.
  const ScopedEnv empty("TF_CONFIG", "{}");
  CHECK(TPUClusterResolver().cluster_spec().empty());
}

TEST_CASE("TPUClusterResolver: another TPU name is not found", "[tpu]") {
  CHECK(error_code_of([] { TPUClusterResolver("my-tpu"); }) == Errc::not_found);
  const auto message = error_message_of([] { TPUClusterResolver("grpc://10.0.0.2:8470"); });
  CHECK_THAT(message, Contains("no TPU named \"grpc://10.0.0.2:8470\""));
  CHECK_THAT(message, Contains("only local, emulated TPUs"));
  CHECK_THAT(message, Contains("\"\" or \"local\""));
}

TEST_CASE("TPUClusterResolver: TF_CONFIG's worker tasks are a multi-host slice", "[tpu]") {
  const auto check = [](const TPUClusterResolver& resolver) {
    CHECK(resolver.cluster_spec() == ClusterSpec({{"worker", {"host0:8470", "host1:8470"}}}));
    CHECK(resolver.task_type() == "worker");
    CHECK(resolver.task_id() == 1);
    CHECK(resolver.master() == "grpc://host1:8470");
    CHECK(resolver.master("worker", 0) == "grpc://host0:8470");
    CHECK(resolver.master("worker", 0, "other") == "grpc://host0:8470"); // TensorFlow always uses grpc here
    CHECK(resolver.rpc_layer() == "grpc");
    CHECK(error_code_of([&] { (void)resolver.master("worker", 2); }) == Errc::invalid_argument);
  };
  check(TPUClusterResolver::from_tf_config("", two_hosts));
  const ScopedEnv tf_config("TF_CONFIG", two_hosts);
  check(TPUClusterResolver("local"));
}

TEST_CASE("TPUClusterResolver: a TF_CONFIG cluster needs worker tasks and a worker task", "[tpu]") {
  const auto no_workers = error_message_of([] {
    (void)TPUClusterResolver::from_tf_config("", R"({"cluster": {"chief": ["a:1"], "ps": ["b:1"]},)"
                                                 R"( "task": {"type": "chief", "index": 0}})");
  });
  CHECK_THAT(no_workers, Contains("no \"worker\" job"));
  const auto chief = error_message_of([] {
    (void)TPUClusterResolver::from_tf_config("", R"({"cluster": {"chief": ["a:1"], "worker": ["b:1"]},)"
                                                 R"( "task": {"type": "chief", "index": 0}})");
  });
  CHECK_THAT(chief, Contains("TF_CONFIG's task is \"chief\" 0"));
  // TF_CONFIG's own errors come through.
  CHECK(error_code_of([] { (void)TPUClusterResolver::from_tf_config("", "{not json"); }) == Errc::invalid_argument);
  CHECK(error_code_of([] { (void)TPUClusterResolver::from_tf_config("v3-8", two_hosts); }) == Errc::not_found);
}

TEST_CASE("TPUClusterResolver: num_accelerators is known once the TPU system is connected", "[tpu]") {
  auto resolver = TPUClusterResolver::from_tf_config("", "");
  const auto copy = resolver; // made before: shares the state, as one Python object would
  CHECK(error_code_of([&] { (void)resolver.num_accelerators(); }) == Errc::failed_precondition);
  CHECK_THAT(error_message_of([&] { (void)copy.num_accelerators(); }),
             Contains("call initialize_tpu_system(rt, resolver) first"));
  CHECK_FALSE(resolver.tpu_topology().has_value());
  resolver.connect_tpu_system(8, "topology bytes");
  CHECK(resolver.num_accelerators() == std::map<std::string, int>{{"TPU", 8}});
  CHECK(copy.num_accelerators() == std::map<std::string, int>{{"TPU", 8}});
  CHECK(copy.tpu_topology() == std::optional<std::string>("topology bytes"));
  CHECK(error_code_of([&] { resolver.connect_tpu_system(0, ""); }) == Errc::invalid_argument);
  // A resolver of its own has its own state.
  CHECK(error_code_of([] { (void)TPUClusterResolver::from_tf_config("", "").num_accelerators(); })
        == Errc::failed_precondition);
}

#include <catch2/catch.hpp>

#include <support/capture_stderr.hpp>
#include <support/temp_files.hpp>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>

using troupe::Errc;
using troupe::Error;
using troupe::Knobs;
using troupe::internal::parse_knobs;

namespace {

/// Parses knobs from a fake environment.
Knobs parse(const std::map<std::string, std::string>& env) {
  return parse_knobs([&](const char* name) -> const char* {
    auto i = env.find(name);
    return i == env.end() ? nullptr : i->second.c_str();
  });
}

/// The message of the Error that parsing `env` throws.
std::string parse_error(const std::map<std::string, std::string>& env) {
  try {
    (void) parse(env);
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    return e.what();
  }
  FAIL("parsing did not throw");
  return {};
}

} // namespace

TEST_CASE("knobs take their defaults from an empty environment", "[core][config]") {
  auto k = parse({});
  CHECK(k.log_level == "warning");
  CHECK(k.log_components.empty());
  CHECK(k.collective_timeout_seconds == 60.0);
  CHECK(k.stall_warning_seconds == 10.0);
  CHECK(k.fiber_stack_bytes == 1024 * 1024);
  CHECK(k.local_reduce_split_bytes == 262144);
  CHECK(k.host_cache_bytes == std::size_t{1024} * 1024 * 1024);
  CHECK(k.idle_polls == 20000);
}

TEST_CASE("knobs read every TROUPE_ variable", "[core][config]") {
  auto k = parse({
    {"TROUPE_LOG", "DEBUG"},
    {"TROUPE_LOG_COMPONENTS", "coll,net"},
    {"TROUPE_COLLECTIVE_TIMEOUT_SECONDS", "2.5"},
    {"TROUPE_STALL_WARNING_SECONDS", "1"},
    {"TROUPE_FIBER_STACK_KIB", "64"},
    {"TROUPE_LOCAL_REDUCE_SPLIT_BYTES", "4096"},
    {"TROUPE_HOST_CACHE_MIB", "0"},
    {"TROUPE_IDLE_POLLS", "0"},
  });
  CHECK(k.log_level == "debug");
  CHECK(k.log_components == "coll,net");
  CHECK(k.collective_timeout_seconds == 2.5);
  CHECK(k.stall_warning_seconds == 1.0);
  CHECK(k.fiber_stack_bytes == 64 * 1024);
  CHECK(k.local_reduce_split_bytes == 4096);
  CHECK(k.host_cache_bytes == 0);
  CHECK(k.idle_polls == 0);
}

TEST_CASE("a set but empty variable counts as unset", "[core][config]") {
  auto k = parse({{"TROUPE_LOG", ""}, {"TROUPE_COLLECTIVE_TIMEOUT_SECONDS", ""}});
  CHECK(k.log_level == "warning");
  CHECK(k.collective_timeout_seconds == 60.0);
}

TEST_CASE("a bad knob value names the variable, the value and what it accepts",
          "[core][config]") {
  struct Case {
    const char* env;
    const char* value;
    const char* message;
  };
  auto c = GENERATE(values<Case>({
    {"TROUPE_LOG", "verbose",
     R"(TROUPE_LOG="verbose" is invalid: expected one of error, warning, info, debug)"},
    {"TROUPE_COLLECTIVE_TIMEOUT_SECONDS", "0",
     R"(TROUPE_COLLECTIVE_TIMEOUT_SECONDS="0" is invalid: expected a number of seconds greater than 0 (e.g. 30 or 2.5))"},
    {"TROUPE_COLLECTIVE_TIMEOUT_SECONDS", "10s",
     R"(TROUPE_COLLECTIVE_TIMEOUT_SECONDS="10s" is invalid: expected a number of seconds greater than 0 (e.g. 30 or 2.5))"},
    {"TROUPE_STALL_WARNING_SECONDS", "-1",
     R"(TROUPE_STALL_WARNING_SECONDS="-1" is invalid: expected a number of seconds greater than 0 (e.g. 30 or 2.5))"},
    {"TROUPE_STALL_WARNING_SECONDS", "inf",
     R"(TROUPE_STALL_WARNING_SECONDS="inf" is invalid: expected a number of seconds greater than 0 (e.g. 30 or 2.5))"},
    {"TROUPE_FIBER_STACK_KIB", "32",
     R"(TROUPE_FIBER_STACK_KIB="32" is invalid: expected an integer >= 64 (KiB of stack per replica fiber))"},
    {"TROUPE_FIBER_STACK_KIB", "256k",
     R"(TROUPE_FIBER_STACK_KIB="256k" is invalid: expected an integer >= 64 (KiB of stack per replica fiber))"},
    {"TROUPE_LOCAL_REDUCE_SPLIT_BYTES", "0",
     R"(TROUPE_LOCAL_REDUCE_SPLIT_BYTES="0" is invalid: expected an integer >= 1 (bytes))"},
    {"TROUPE_IDLE_POLLS", "many",
     R"(TROUPE_IDLE_POLLS="many" is invalid: expected an integer >= 0 (polls before an idle thread sleeps))"},
    {"TROUPE_PEER_TIMEOUT_SECONDS", "0",
     R"(TROUPE_PEER_TIMEOUT_SECONDS="0" is invalid: expected a number of seconds greater than 0 (e.g. 30 or 2.5))"},
    {"TROUPE_DATA_PORT_OFFSET", "70000",
     R"(TROUPE_DATA_PORT_OFFSET="70000" is invalid: expected an integer from 0 to 65535 (added to the task's port, 0 = any free port))"},
    {"TROUPE_DATA_PORT_OFFSET", "-1",
     R"(TROUPE_DATA_PORT_OFFSET="-1" is invalid: expected an integer >= 0 (added to the task's port, 0 = any free port))"},
    {"TROUPE_RING_CHUNK_KIB", "0",
     R"(TROUPE_RING_CHUNK_KIB="0" is invalid: expected an integer >= 1 (KiB per ring chunk))"},
    {"TROUPE_ALLOW_UNAUTHENTICATED", "yes", R"(TROUPE_ALLOW_UNAUTHENTICATED="yes" is invalid: expected 0 or 1)"},
    {"TROUPE_TLS", "on", R"(TROUPE_TLS="on" is invalid: expected 0 or 1)"},
    {"TROUPE_TRANSPORT", "rdma", R"(TROUPE_TRANSPORT="rdma" is invalid: expected tcp, ucx or auto)"},
    {"TROUPE_UCX_SPIN_US", "200000", R"(TROUPE_UCX_SPIN_US="200000" is invalid: expected at most 100000 microseconds)"},
    {"TROUPE_FLIGHT_RECORDER_ENTRIES", "5000",
     R"(TROUPE_FLIGHT_RECORDER_ENTRIES="5000" is invalid: expected at most 4096 collectives)"},
    {"TROUPE_HOST_CACHE_MIB", "-5",
     R"(TROUPE_HOST_CACHE_MIB="-5" is invalid: expected an integer >= 0 (MiB of cached host buffers))"},
    {"TROUPE_HOST_CACHE_MIB", "99999999999999999999",
     R"(TROUPE_HOST_CACHE_MIB="99999999999999999999" is invalid: expected an integer >= 0 (MiB of cached host buffers))"},
  }));
  CAPTURE(c.env, c.value);
  CHECK(parse_error({{c.env, c.value}}) == c.message);
}

TEST_CASE("the cluster token can come from a private file, and a bad file names the fix", "[core][config]") {
  const troupe::testing::TempDir dir("troupe_token");
  const auto path = dir.file("token");
  troupe::testing::write_bytes(path, "0123456789abcdef0123456789abcdef\nignored second line\n");
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  CHECK(parse({{"TROUPE_CLUSTER_TOKEN_FILE", path}}).cluster_token == "0123456789abcdef0123456789abcdef");
  // The same token in both places is no conflict; another one is.
  CHECK(parse({{"TROUPE_CLUSTER_TOKEN_FILE", path}, {"TROUPE_CLUSTER_TOKEN", "0123456789abcdef0123456789abcdef"}})
          .cluster_token
        == "0123456789abcdef0123456789abcdef");
  CHECK_THAT(parse_error({{"TROUPE_CLUSTER_TOKEN_FILE", path}, {"TROUPE_CLUSTER_TOKEN", "other"}}),
             Catch::Contains("TROUPE_CLUSTER_TOKEN gives another token; set one of the two"));
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  CHECK(parse_error({{"TROUPE_CLUSTER_TOKEN_FILE", path}})
        == "TROUPE_CLUSTER_TOKEN_FILE=\"" + path + "\": group or others may read it; make it private with `chmod 600 "
             + path + "`");
  troupe::testing::write_bytes(path, "\n");
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  CHECK_THAT(parse_error({{"TROUPE_CLUSTER_TOKEN_FILE", path}}), Catch::Contains("its first line is empty"));
  troupe::testing::write_bytes(path, std::string(5000, 'x'));
  CHECK_THAT(parse_error({{"TROUPE_CLUSTER_TOKEN_FILE", path}}), Catch::Contains("more than 4096 bytes"));
  CHECK_THAT(parse_error({{"TROUPE_CLUSTER_TOKEN_FILE", dir.file("missing")}}),
             Catch::Contains("cannot open it: No such file or directory"));
}

TEST_CASE("a ring chunk, halving-doubling or direct-exchange pack past the frame limit is refused, naming both knobs",
          "[core][config]") {
  CHECK(parse({{"TROUPE_MAX_FRAME_MIB", "2"}}).max_frame_bytes == (std::size_t{2} << 20));
  CHECK(parse_error({{"TROUPE_MAX_FRAME_MIB", "1"}, {"TROUPE_RING_CHUNK_KIB", "2048"}})
        == "TROUPE_RING_CHUNK_KIB=2048 is larger than TROUPE_MAX_FRAME_MIB=1: a ring chunk is one frame; lower the "
           "chunk or raise the frame limit");
  CHECK_THAT(parse_error({{"TROUPE_MAX_FRAME_MIB", "1"}, {"TROUPE_HALVING_DOUBLING_MAX_KIB", "4096"}}),
             Catch::Contains("TROUPE_HALVING_DOUBLING_MAX_KIB=4096 is larger than TROUPE_MAX_FRAME_MIB=1"));
  CHECK_THAT(parse_error({{"TROUPE_MAX_FRAME_MIB", "1"}, {"TROUPE_DIRECT_EXCHANGE_MAX_KIB", "2048"}}),
             Catch::Contains("TROUPE_DIRECT_EXCHANGE_MAX_KIB=2048 is larger than TROUPE_MAX_FRAME_MIB=1"));
  CHECK(parse_error({{"TROUPE_MAX_FRAME_MIB", "4096"}})
        == R"(TROUPE_MAX_FRAME_MIB="4096" is invalid: expected an integer from 1 to 2048 (MiB per data-plane frame))");
}

TEST_CASE("the knob table lists every variable with its default and help", "[core][config]") {
  const auto& table = troupe::knob_table();
  std::set<std::string> names;
  for (const auto& knob : table) {
    CAPTURE(knob.env);
    CHECK(std::strncmp(knob.env, "TROUPE_", 7) == 0);
    CHECK(knob.default_value != nullptr);
    CHECK(std::strlen(knob.help) > 10);
    names.insert(knob.env);
  }
  CHECK(names == std::set<std::string>{
                   "TROUPE_LOG", "TROUPE_LOG_COMPONENTS", "TROUPE_COLLECTIVE_TIMEOUT_SECONDS",
                   "TROUPE_STALL_WARNING_SECONDS", "TROUPE_FLIGHT_RECORDER_ENTRIES",
                   "TROUPE_FLIGHT_RECORDER_DIR", "TROUPE_TRACE", "TROUPE_FIBER_STACK_KIB",
                   "TROUPE_LOCAL_REDUCE_SPLIT_BYTES", "TROUPE_HOST_CACHE_MIB", "TROUPE_IDLE_POLLS",
                   "TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "TROUPE_PEER_HEARTBEAT_SECONDS",
                   "TROUPE_PEER_TIMEOUT_SECONDS", "TROUPE_DATA_PORT_OFFSET", "TROUPE_CLUSTER_TOKEN", "TROUPE_CLUSTER_TOKEN_FILE",
                   "TROUPE_ALLOW_UNAUTHENTICATED", "TROUPE_HANDSHAKE_TIMEOUT_SECONDS", "TROUPE_TLS",
                   "TROUPE_TRANSPORT", "TROUPE_UCX_SPIN_US", "TROUPE_RING_CHUNK_KIB", "TROUPE_DIRECT_EXCHANGE_MAX_KIB",
                   "TROUPE_HALVING_DOUBLING_MAX_KIB", "TROUPE_MAX_FRAME_MIB", "TROUPE_SCHEDULER_POLICY",
                                  "TROUPE_KERNELS"});
  // The table's defaults are what parsing an empty environment yields.
  std::map<std::string, std::string> defaults;
  for (const auto& knob : table)
    defaults[knob.env] = knob.default_value;
  auto from_table = parse(defaults);
  auto from_nothing = parse({});
  CHECK(from_table.log_level == from_nothing.log_level);
  CHECK(from_table.fiber_stack_bytes == from_nothing.fiber_stack_bytes);
  CHECK(from_table.host_cache_bytes == from_nothing.host_cache_bytes);
  CHECK(from_table.idle_polls == from_nothing.idle_polls);
}

TEST_CASE("knobs() is parsed once and stays the same object", "[core][config]") {
  // The test environment may set TROUPE_* variables, so only check identity.
  const auto* first = &troupe::knobs();
  CHECK(first == &troupe::knobs());
}

TEST_CASE("logging follows the process knobs", "[core][config][log]") {
  // Errors are shown at every level and for every component; debug only with TROUPE_LOG=debug.
  CHECK(troupe::log_enabled(troupe::LogLevel::error, "anything"));
  if (troupe::knobs().log_level != "debug")
    CHECK_FALSE(troupe::log_enabled(troupe::LogLevel::debug, "coll"));
}

using troupe::testing::capture_stderr;

TEST_CASE("a log line carries level, task, replica and component", "[core][config][log]") {
  auto& ctx = troupe::log_context();
  const auto saved = ctx;
  const auto saved_task = troupe::log_task();
  troupe::set_log_task("worker:2");
  ctx.replica = 1;
  auto with_replica = capture_stderr([] {
    troupe::LogLine(troupe::LogLevel::warning, "coll").stream() << "waiting for " << 3 << " ranks";
  });
  CHECK(with_replica == "[troupe W task=worker:2 replica=1 coll] waiting for 3 ranks\n");
  ctx.replica = -1;
  auto without_replica = capture_stderr([] {
    troupe::LogLine(troupe::LogLevel::error, "net").stream() << "peer lost";
    troupe::LogLine(troupe::LogLevel::info, "net").stream() << "i";
    troupe::LogLine(troupe::LogLevel::debug, "net").stream() << "d";
  });
  CHECK(without_replica
        == "[troupe E task=worker:2 net] peer lost\n[troupe I task=worker:2 net] i\n[troupe D task=worker:2 net] d\n");
  ctx = saved;
  troupe::set_log_task(saved_task);
}

TEST_CASE("the replica in the log context is per thread, the task is per process", "[core][config][log]") {
  const auto saved_task = troupe::log_task();
  troupe::log_context().replica = 5;
  troupe::set_log_task("worker:3");
  int other_replica = -7;
  std::string other_line;
  other_line = capture_stderr([&] {
    std::thread([&] {
      other_replica = troupe::log_context().replica;
      troupe::LogLine(troupe::LogLevel::warning, "net").stream() << "x";
    }).join();
  });
  CHECK(other_replica == -1);
  CHECK(other_line == "[troupe W task=worker:3 net] x\n");
  CHECK(troupe::log_context().replica == 5);
  troupe::log_context().replica = -1;
  troupe::set_log_task(saved_task);
}

TEST_CASE("TROUPE_LOG_COMPONENTS names that are none of troupe's components get a warning naming the valid ones",
          "[core][config][log]") {
  CHECK(troupe::unknown_log_components_warning("").empty());
  CHECK(troupe::unknown_log_components_warning("coll, net,data,kernels").empty());
  const auto warning = troupe::unknown_log_components_warning("coll,bogus,nett");
  CHECK(warning.find("TROUPE_LOG_COMPONENTS names \"bogus\", \"nett\", none of troupe's components "
                     "(coll, data, kernels, net, trace, tpu)") == 0);
}

TEST_CASE("TROUPE_LOG evaluates its stream only when the line is enabled", "[core][config][log]") {
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  auto out = capture_stderr([&] {
    TROUPE_LOG(error, "test") << "count " << count();
    TROUPE_LOG(debug, "test") << "count " << count();
  });
  const bool debug_on = troupe::log_enabled(troupe::LogLevel::debug, "test");
  CHECK(evaluated == (debug_on ? 2 : 1));
  CHECK(out.find("E task=") != std::string::npos);
  CHECK(out.find("test] count 1\n") != std::string::npos);
}

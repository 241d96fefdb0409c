// The chief's side of check_same_across_workers in a parameter-server cluster
// (PsSettingsAgreement): one verdict for every task of a round, tasks lost
// before they sent not waited for, missing tasks named at the deadline, a
// rejoined task judged against the chief alone, and its wire messages.
// Across processes: tests/cluster/ps_job_test.cpp.

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/actors/ps/ps_settings_agreement.hpp>
#include <troupe/actors/ps/ps_settings_messages.hpp>
#include <troupe/actors/replicas/settings_agreement.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>
#include <troupe/troupe.hpp>

#include "support/wire_system.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

namespace {

constexpr auto answer_within = std::chrono::seconds(10);

struct AgreementSystem : troupe::testing::WireSystem {
  /// An agreement of chief:0 with worker:0, worker:1 and ps:0.
  /// As the tasks reach it: a plain actor (found by name on the chief's node).
  caf::actor spawn(caf::timespan wait = std::chrono::seconds(30)) {
    return caf::actor_cast<caf::actor>(
      sys.spawn<PsSettingsAgreement>(std::vector<std::string>{"worker:0", "worker:1", "ps:0"}, wait));
  }
};

std::string settings(const std::string& optimizer, const std::string& limit = "4096") {
  return encode_settings({{"--optimizer", optimizer}, {"--limit", limit}});
}

/// A task's call, answered with the round's verdict.
class TaskCall {
public:
  TaskCall(caf::actor_system& sys, const caf::actor& agreement, uint32_t round, const std::string& task,
           const std::string& encoded)
    : self_(sys) {
    self_->send(agreement, PsSettingsMsg{round, task, encoded});
  }

  /// The verdict, or "NO ANSWER" when none came within answer_within.
  std::string verdict() {
    std::string result = "NO ANSWER";
    self_->receive([&](PsSettingsVerdictMsg& msg) { result = msg.error; },
                   caf::after(answer_within) >> [] {});
    return result;
  }

private:
  caf::scoped_actor self_;
};

/// The chief's own call: its slot, set once the round is decided.
std::shared_ptr<PsSettingsSlot> chief_call(const caf::actor& agreement, uint32_t round, const std::string& encoded) {
  auto slot = std::make_shared<PsSettingsSlot>();
  caf::anon_send(agreement, PsSettingsChiefMsg{round, encoded, slot});
  return slot;
}

std::string chief_verdict(const std::shared_ptr<PsSettingsSlot>& slot) {
  auto set = std::make_shared<std::promise<void>>();
  auto answered = set->get_future();
  if (!slot->done.call_when_set([set] { set->set_value(); }))
    return slot->error; // decided already
  if (answered.wait_for(answer_within) != std::future_status::ready)
    return "NO ANSWER";
  slot->done.settle();
  return slot->error;
}

} // namespace

TEST_CASE("the chief's settings agreement gives every task one verdict naming each task that differs",
          "[actors][parameter_server]") {
  AgreementSystem system;
  auto agreement = system.spawn();
  SECTION("the same settings everywhere: every call returns an empty verdict") {
    TaskCall w0(system.sys, agreement, 0, "worker:0", settings("adam"));
    TaskCall ps(system.sys, agreement, 0, "ps:0", settings("adam"));
    auto chief = chief_call(agreement, 0, settings("adam"));
    TaskCall w1(system.sys, agreement, 0, "worker:1", settings("adam"));
    CHECK(chief_verdict(chief).empty());
    CHECK(w0.verdict().empty());
    CHECK(w1.verdict().empty());
    CHECK(ps.verdict().empty());
  }
  SECTION("worker:1 with another optimizer and limit, ps:0 with another limit: all fail with one text") {
    TaskCall w0(system.sys, agreement, 0, "worker:0", settings("adam"));
    TaskCall w1(system.sys, agreement, 0, "worker:1", settings("sgd", "1000"));
    TaskCall ps(system.sys, agreement, 0, "ps:0", settings("adam", "512"));
    auto chief = chief_call(agreement, 0, settings("adam"));
    const std::string expected =
      "check_same_across_workers: the tasks differ: \"--optimizer\" is adam on chief:0, but sgd on worker:1; "
      "\"--limit\" is 4096 on chief:0, but 1000 on worker:1 and 512 on ps:0. Start every task of the job (chief, "
      "workers and parameter servers) with the same settings.";
    CHECK(chief_verdict(chief) == expected);
    CHECK(w0.verdict() == expected);
    CHECK(w1.verdict() == expected);
    CHECK(ps.verdict() == expected);
  }
  caf::anon_send_exit(agreement, caf::exit_reason::user_shutdown);
}

TEST_CASE("the settings agreement skips lost tasks, names missing ones at its deadline, and judges a rejoined "
          "task against the chief alone",
          "[actors][parameter_server]") {
  AgreementSystem system;
  SECTION("a task lost before it sent is not waited for; when it rejoins it is judged alone") {
    auto agreement = system.spawn();
    TaskCall w0(system.sys, agreement, 0, "worker:0", settings("adam"));
    TaskCall ps(system.sys, agreement, 0, "ps:0", settings("adam"));
    auto chief = chief_call(agreement, 0, settings("adam"));
    caf::anon_send(agreement, TaskLostMsg{"worker:1", "its process died", false, "", false, ""});
    CHECK(chief_verdict(chief).empty());
    CHECK(w0.verdict().empty());
    caf::anon_send(agreement, TaskJoinedMsg{"worker:1", NodeActorHandle{}});
    TaskCall rejoined_other(system.sys, agreement, 0, "worker:1", settings("sgd"));
    CHECK(rejoined_other.verdict()
          == "check_same_across_workers: the tasks differ: \"--optimizer\" is adam on chief:0, but sgd on worker:1. "
             "Start every task of the job (chief, workers and parameter servers) with the same settings.");
    TaskCall rejoined_same(system.sys, agreement, 0, "worker:1", settings("adam"));
    CHECK(rejoined_same.verdict().empty());
    caf::anon_send_exit(agreement, caf::exit_reason::user_shutdown);
  }
  SECTION("tasks that never send are named when the wait ends, and the others fail with them") {
    auto agreement = system.spawn(std::chrono::milliseconds(200));
    TaskCall w0(system.sys, agreement, 0, "worker:0", settings("adam"));
    auto chief = chief_call(agreement, 0, settings("adam"));
    const auto verdict = chief_verdict(chief);
    CHECK_THAT(verdict, Contains("check_same_across_workers: task(s) worker:1, ps:0 sent no settings for this check "
                                 "within 0.2 s of the chief's (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)"));
    CHECK(w0.verdict() == verdict);
    caf::anon_send_exit(agreement, caf::exit_reason::user_shutdown);
  }
  SECTION("a name that is no task of the cluster, or a round far beyond any job's, is refused") {
    auto agreement = system.spawn();
    TaskCall stranger(system.sys, agreement, 0, "worker:7", settings("adam"));
    CHECK_THAT(stranger.verdict(), Contains("\"worker:7\" is no task of this cluster"));
    TaskCall runaway(system.sys, agreement, 1u << 30, "worker:0", settings("adam"));
    CHECK_THAT(runaway.verdict(), Contains("a job makes at most"));
    caf::anon_send_exit(agreement, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("the settings agreement's wire messages survive serialisation and refuse oversized fields",
          "[actors][parameter_server]") {
  AgreementSystem system;
  PsSettingsMsg msg{3, "worker:1", settings("adam")};
  std::vector<char> bytes;
  {
    caf::binary_serializer sink(system.sys, bytes);
    REQUIRE_FALSE(sink(msg));
  }
  PsSettingsMsg read;
  {
    caf::binary_deserializer source(system.sys, bytes);
    REQUIRE_FALSE(source(read));
  }
  CHECK(read.round == 3);
  CHECK(read.task == "worker:1");
  CHECK(read.settings == msg.settings);
  PsSettingsMsg huge{0, std::string(PsSettingsMsg::max_task_bytes + 1, 'w'), ""};
  std::vector<char> ignored;
  caf::binary_serializer sink(system.sys, ignored);
  CHECK(sink(huge));
}

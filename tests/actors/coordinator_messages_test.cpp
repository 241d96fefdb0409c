// The coordinator's wire messages (coordinator_messages.hpp): each survives
// serialisation, every Runtime registers them, and a received message whose
// lengths or enum bytes are wrong is refused with Error(data_loss) before
// anything large is allocated.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/troupe.hpp>

#include "support/wire_system.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

namespace {

using troupe::testing::WireSystem;

template <class T>
std::vector<char> serialized(caf::actor_system& sys, T& x) {
  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  REQUIRE_FALSE(sink(x));
  return bytes;
}

template <class T>
caf::error deserialize(caf::actor_system& sys, const std::vector<char>& bytes, T& x) {
  caf::binary_deserializer source(sys, bytes);
  return source(x);
}

/// The error's troupe code and rendered text ("troupe(data_loss): ...").
struct Refusal {
  bool troupe_error = false;
  Errc code = Errc::internal;
  std::string text;
};

Refusal refusal(caf::actor_system& sys, const caf::error& err) {
  REQUIRE(err);
  const bool ours = err.category() == caf::atom("troupe");
  return {ours, ours ? static_cast<Errc>(err.code()) : Errc::internal, sys.render(err)};
}

std::vector<uint8_t> payload(std::size_t n) {
  std::vector<uint8_t> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<uint8_t>(i * 7 + 1);
  return out;
}

} // namespace

TEST_CASE("coordinator wire messages survive serialisation", "[actors][coordinator]") {
  WireSystem w;
  auto coordinator = w.sys.spawn([]() -> caf::behavior { return {[](int) {}}; });

  SECTION("RunClosureMsg with its spec and the coordinator's handle") {
    RunClosureMsg out{42, 3, 5, ClosureSpec{"train_step", payload(300)}, coordinator};
    RunClosureMsg in;
    REQUIRE_FALSE(deserialize(w.sys, serialized(w.sys, out), in));
    CHECK(in.id == 42);
    CHECK(in.attempt == 3);
    CHECK(in.worker_index == 5);
    CHECK(in.spec.function_name == "train_step");
    CHECK(in.spec.args == payload(300));
    CHECK(in.coordinator == coordinator);
  }
  SECTION("ClosureFinishedMsg with a value") {
    ClosureFinishedMsg out{7, 2, true, payload(1000), Errc::internal, {}, {}};
    ClosureFinishedMsg in;
    REQUIRE_FALSE(deserialize(w.sys, serialized(w.sys, out), in));
    CHECK(in.id == 7);
    CHECK(in.attempt == 2);
    CHECK(in.ok);
    CHECK(in.value == payload(1000));
  }
  SECTION("ClosureFinishedMsg with an error") {
    ClosureFinishedMsg out{8, 1, false, {}, Errc::shape_mismatch, "shapes (2) and (3) differ", {}};
    ClosureFinishedMsg in;
    REQUIRE_FALSE(deserialize(w.sys, serialized(w.sys, out), in));
    CHECK(in.id == 8);
    CHECK(in.attempt == 1);
    CHECK_FALSE(in.ok);
    CHECK(in.value.empty());
    CHECK(in.code == Errc::shape_mismatch);
    CHECK(in.error == "shapes (2) and (3) differ");
  }
  SECTION("ClosureFinishedMsg with the updates staged per parameter server") {
    ClosureFinishedMsg out{11, 3, true, payload(5), Errc::internal, {}, {0, 7, 0, 4000000000u}};
    ClosureFinishedMsg in;
    REQUIRE_FALSE(deserialize(w.sys, serialized(w.sys, out), in));
    CHECK(in.id == 11);
    CHECK(in.value == payload(5));
    CHECK(in.staged_per_server == std::vector<uint32_t>{0, 7, 0, 4000000000u});
  }
  SECTION("ClosureAttemptEndedMsg") {
    ClosureAttemptEndedMsg out{9, 4, AttemptOutcome::aborted,
                               "worker w1 was lost: missed heartbeats"};
    ClosureAttemptEndedMsg in;
    REQUIRE_FALSE(deserialize(w.sys, serialized(w.sys, out), in));
    CHECK(in.id == 9);
    CHECK(in.attempt == 4);
    CHECK(in.outcome == AttemptOutcome::aborted);
    CHECK(in.reason == "worker w1 was lost: missed heartbeats");
  }
  caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
}

TEST_CASE("every runtime registers the coordinator wire messages for remote sends",
          "[actors][coordinator]") {
  Runtime rt;
  auto& sys = rt.impl().system();
  // A message of an unregistered type serialises to nothing (CAF-NOTES, pitfall 2).
  auto out = caf::make_message(RunClosureMsg{1, 1, 0, ClosureSpec{"f", payload(3)}, caf::actor{}},
                               ClosureFinishedMsg{1, 1, true, payload(4), Errc::internal, {}, {3, 0, 2}},
                               ClosureAttemptEndedMsg{1, 1, AttemptOutcome::finished, {}});
  auto bytes = serialized(sys, out);
  REQUIRE_FALSE(bytes.empty());
  caf::message in;
  REQUIRE_FALSE(deserialize(sys, bytes, in));
  REQUIRE(in.match_elements<RunClosureMsg, ClosureFinishedMsg, ClosureAttemptEndedMsg>());
  CHECK(in.get_as<RunClosureMsg>(0).spec.function_name == "f");
  CHECK(in.get_as<RunClosureMsg>(0).spec.args == payload(3));
  CHECK(in.get_as<ClosureFinishedMsg>(1).value == payload(4));
  CHECK(in.get_as<ClosureFinishedMsg>(1).staged_per_server == std::vector<uint32_t>{3, 0, 2});
  CHECK(in.get_as<ClosureAttemptEndedMsg>(2).outcome == AttemptOutcome::finished);
}

TEST_CASE(
  "a truncated or oversized coordinator message is refused with data_loss before allocating",
  "[actors][coordinator]") {
  WireSystem w;

  SECTION("a value cut short names the bytes it lacks") {
    ClosureFinishedMsg out{7, 2, true, payload(1000), Errc::internal, {}, {}};
    auto bytes = serialized(w.sys, out);
    bytes.resize(bytes.size() - 600); // cut inside the value
    ClosureFinishedMsg in;
    const auto r = refusal(w.sys, deserialize(w.sys, bytes, in));
    CHECK(r.troupe_error);
    CHECK(r.code == Errc::data_loss);
    CHECK_THAT(r.text, Contains("a closure's value") && Contains("needs 1000 bytes"));
  }
  SECTION("a length over the limit is refused even when its bytes are all there") {
    // The wire layout of ClosureAttemptEndedMsg, written field by field, so
    // the reason can exceed what a sender would write.
    std::string reason(max_error_text_bytes + 1, 'r');
    std::vector<char> bytes;
    {
      caf::binary_serializer sink(w.sys, bytes);
      REQUIRE_FALSE(sink(uint64_t{9}, uint32_t{1}, uint8_t{2}, reason));
    }
    ClosureAttemptEndedMsg in;
    const auto r = refusal(w.sys, deserialize(w.sys, bytes, in));
    CHECK(r.code == Errc::data_loss);
    CHECK_THAT(r.text,
               Contains("an attempt's reason") && Contains("exceeds the limit of 65536 bytes"));
    CHECK(in.reason.empty());
  }
  SECTION("staged counts for more parameter servers than the limit are refused before allocating") {
    // The wire layout of ClosureFinishedMsg with a count list one entry too
    // long, its entries all present.
    std::vector<uint32_t> counts(max_parameter_servers + 1, 1);
    std::vector<char> bytes;
    {
      caf::binary_serializer sink(w.sys, bytes);
      REQUIRE_FALSE(sink(uint64_t{9}, uint32_t{1}, true, std::vector<uint8_t>{}, Errc::internal, std::string{}, counts));
    }
    ClosureFinishedMsg in;
    in.staged_per_server = {5};
    const auto r = refusal(w.sys, deserialize(w.sys, bytes, in));
    CHECK(r.code == Errc::data_loss);
    CHECK_THAT(r.text, Contains("staged_per_server") && Contains("exceed the limit of 65536 entries"));
    CHECK(in.staged_per_server == std::vector<uint32_t>{5}); // untouched
  }
  SECTION("a staged count list longer than its bytes is refused before allocating") {
    std::vector<char> bytes;
    {
      caf::binary_serializer sink(w.sys, bytes);
      REQUIRE_FALSE(sink(uint64_t{9}, uint32_t{1}, true, std::vector<uint8_t>{}, Errc::internal, std::string{},
                         std::vector<uint32_t>(1000, 1)));
    }
    bytes.resize(bytes.size() - 2000); // half the counts are missing
    ClosureFinishedMsg in;
    const auto r = refusal(w.sys, deserialize(w.sys, bytes, in));
    CHECK(r.code == Errc::data_loss);
    CHECK_THAT(r.text, Contains("staged_per_server") && Contains("1000 entries need more than the 2000 bytes"));
  }
  SECTION("a sender refuses to write more staged counts than the limit") {
    ClosureFinishedMsg out{9, 1, true, {}, Errc::internal, {}, std::vector<uint32_t>(max_parameter_servers + 1, 0)};
    std::vector<char> bytes;
    caf::binary_serializer sink(w.sys, bytes);
    const auto r = refusal(w.sys, sink(out));
    CHECK(r.code == Errc::data_loss);
    CHECK_THAT(r.text, Contains("staged_per_server") && Contains("exceeds the limit of 65536 entries"));
  }
  SECTION("a function name over the limit is refused") {
    std::string name(max_function_name_bytes + 1, 'f');
    std::vector<char> bytes;
    {
      caf::binary_serializer sink(w.sys, bytes);
      REQUIRE_FALSE(sink(name, std::string{}));
    }
    ClosureSpec in;
    const auto r = refusal(w.sys, deserialize(w.sys, bytes, in));
    CHECK(r.code == Errc::data_loss);
    CHECK_THAT(r.text, Contains("a closure's function name") && Contains("exceeds the limit"));
  }
  SECTION("a sender refuses to write an oversized field") {
    ClosureAttemptEndedMsg out{9, 1, AttemptOutcome::failed,
                               std::string(max_error_text_bytes + 1, 'r')};
    std::vector<char> bytes;
    caf::binary_serializer sink(w.sys, bytes);
    const auto r = refusal(w.sys, sink(out));
    CHECK(r.code == Errc::data_loss);
    CHECK_THAT(r.text, Contains("exceeds the limit"));
  }
  SECTION("an unknown attempt outcome or error code is refused") {
    ClosureAttemptEndedMsg outcome{9, 1, static_cast<AttemptOutcome>(7), {}};
    ClosureAttemptEndedMsg outcome_in;
    const auto r1 = refusal(w.sys, deserialize(w.sys, serialized(w.sys, outcome), outcome_in));
    CHECK(r1.code == Errc::data_loss);
    CHECK_THAT(r1.text, Contains("outcome") && Contains("unknown value 7"));
    ClosureFinishedMsg finished{9, 1, false, {}, static_cast<Errc>(200), "x", {}};
    ClosureFinishedMsg finished_in;
    const auto r2 = refusal(w.sys, deserialize(w.sys, serialized(w.sys, finished), finished_in));
    CHECK(r2.code == Errc::data_loss);
    CHECK_THAT(r2.text, Contains("error code") && Contains("unknown value 200"));
  }
}

TEST_CASE("the coordinator's in-process messages print, and its edge calls refuse to leave the process",
          "[actors][coordinator][messages]") {
  WireSystem w;
  auto slot = std::make_shared<CoordinatorCallSlot>();
  slot->spec.function_name = "train_step";
  CoordinatorScheduleMsg schedule{slot};
  CHECK(caf::deep_to_string(schedule) == R"(troupe::CoordinatorScheduleMsg("train_step"))");
  CoordinatorPsLostMsg ps_lost{1, "its control connection went down"};
  CHECK(caf::deep_to_string(ps_lost) == R"(troupe::CoordinatorPsLostMsg(1, "its control connection went down"))");
  CoordinatorNoWorkerDeadlineMsg deadline{3};
  CHECK(caf::deep_to_string(deadline) == "troupe::CoordinatorNoWorkerDeadlineMsg(3)");
  for (auto* name : {"schedule", "join", "done"}) {
    CAPTURE(name);
    std::vector<char> bytes;
    caf::binary_serializer sink(w.sys, bytes);
    caf::error error;
    if (std::string{name} == "schedule")
      error = sink(schedule);
    else if (std::string{name} == "join") {
      CoordinatorJoinMsg join{slot};
      error = sink(join);
    } else {
      CoordinatorDoneMsg done{slot};
      error = sink(done);
    }
    const auto r = refusal(w.sys, std::move(error));
    CHECK(r.code == Errc::not_supported);
    CHECK_THAT(r.text, Contains("holds pointers into its process"));
  }
}

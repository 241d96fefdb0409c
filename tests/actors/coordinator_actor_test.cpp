// The coordinator's closure queue (CoordinatorActor) with fake worker actors,
// in threaded mode and under 50 simulation seeds: results, the bounded queue,
// the first-error model, reruns after a lost worker, and no live worker.

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include <troupe/actors/ps/coordinator_handle.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/strategies/remote_value.hpp>

#include "support/error_code_of.hpp"
#include "support/runtime_modes.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace {

/// Test -> fake worker: answer the held closures, then stop holding; sets `sent` after.
struct ReleaseHeldMsg {
  std::shared_ptr<Completion> sent;
};

/// Test -> listener: sets `done` once every earlier event is recorded.
struct FlushMsg {
  std::shared_ptr<Completion> done;
};

} // namespace

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ReleaseHeldMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(FlushMsg)

namespace {

std::vector<uint8_t> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

std::string text(const std::vector<uint8_t>& b) {
  return {b.begin(), b.end()};
}

/// How a fake worker behaves.
struct FakeWorkerScript {
  std::string name;
  bool hold = false;  ///< keep closures unanswered until ReleaseHeldMsg
  int die_on_run = 0; ///< terminate on receiving this run (1-based); 0 = never
};

/// Runs "echo" closures as "<args>@<worker>#<attempt>" and fails "fail" closures.
ClosureFinishedMsg run_closure(const FakeWorkerScript& script, const RunClosureMsg& run) {
  ClosureFinishedMsg out{run.id, run.attempt, true, {}, Errc::internal, {}, {}};
  if (run.spec.function_name == "fail") {
    out.ok = false;
    out.code = Errc::invalid_argument;
    out.error = "boom from " + text(run.spec.args);
  } else {
    out.value = bytes(text(run.spec.args) + "@" + script.name + "#" + std::to_string(run.attempt));
  }
  return out;
}

struct FakeWorkerState {
  FakeWorkerScript script;
  std::vector<RunClosureMsg> held;
  int runs = 0;
};

caf::behavior fake_worker(caf::event_based_actor* self, FakeWorkerScript script) {
  auto state = std::make_shared<FakeWorkerState>(FakeWorkerState{std::move(script), {}, 0});
  return {
    [=](RunClosureMsg& run) {
      if (++state->runs == state->script.die_on_run) {
        self->quit(caf::exit_reason::user_shutdown); // killed mid-closure
        return;
      }
      if (state->script.hold) {
        state->held.push_back(std::move(run));
        return;
      }
      self->send(run.coordinator, run_closure(state->script, run));
    },
    [=](ReleaseHeldMsg& msg) {
      state->script.hold = false;
      for (const auto& run : state->held)
        self->send(run.coordinator, run_closure(state->script, run));
      state->held.clear();
      if (msg.sent)
        msg.sent->set();
    },
  };
}

/// What the attempt listener (a parameter server, later) was told.
struct AttemptLog {
  std::mutex mutex;
  std::vector<ClosureAttemptEndedMsg> events;
};

caf::behavior attempt_listener(caf::event_based_actor*, std::shared_ptr<AttemptLog> log) {
  return {
    [=](ClosureAttemptEndedMsg& msg) {
      std::lock_guard<std::mutex> lock(log->mutex);
      log->events.push_back(std::move(msg));
    },
    [=](FlushMsg& msg) { msg.done->set(); },
  };
}

/// Stops the test's helper actors before the coordinator and the runtime go.
struct ActorGuard {
  RuntimeImpl& runtime;
  std::vector<caf::actor> actors;
  ~ActorGuard() {
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    runtime.drain();
  }
  caf::actor add(caf::actor a) {
    actors.push_back(a);
    return a;
  }
};

// A listener actor that records every attempt notice into `log`, and
// coordinator options that send it those notices.
struct AttemptRecorder {
  std::shared_ptr<AttemptLog> log = std::make_shared<AttemptLog>();
  ActorGuard guard;
  caf::actor listener;

  explicit AttemptRecorder(RuntimeImpl& runtime)
    : guard{runtime, {}}, listener(guard.add(runtime.system().spawn(attempt_listener, log))) {}
  [[nodiscard]] CoordinatorOptions options() const {
    CoordinatorOptions options;
    options.attempt_listeners = {listener};
    return options;
  }
};

RemoteValue<std::string> schedule(CoordinatorHandle& coordinator, const std::string& fn, const std::string& arg) {
  auto closure = coordinator.schedule(ClosureSpec{fn, bytes(arg)});
  return RemoteValue<std::string>(coordinator.runtime(), coordinator.cluster(), closure.id, closure.outcome, text);
}

void release(RuntimeImpl& runtime, const caf::actor& worker) {
  auto sent = std::make_shared<Completion>();
  caf::anon_send(worker, ReleaseHeldMsg{sent});
  runtime.wait(*sent, "a fake worker's release");
}

std::vector<ClosureAttemptEndedMsg> flushed(RuntimeImpl& runtime, const caf::actor& listener,
                                            const std::shared_ptr<AttemptLog>& log) {
  auto done = std::make_shared<Completion>();
  caf::anon_send(listener, FlushMsg{done});
  runtime.wait(*done, "the attempt listener's flush");
  std::lock_guard<std::mutex> lock(log->mutex);
  return log->events;
}

/// Whether `settled()` holds within `deadline`, so that a result that never
/// comes fails the test instead of hanging it. Threaded: the coordinator
/// exits on a scheduler thread, so poll (yielding, never sleeping).
/// Simulation: the handle's destructor drained every runnable actor, so it
/// holds now or never.
bool settles_within(RuntimeImpl& runtime, std::chrono::seconds deadline, const std::function<bool()>& settled) {
  if (runtime.simulation())
    return settled();
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!settled()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::yield();
  }
  return true;
}

} // namespace

TEST_CASE("coordinator runs scheduled closures on its workers and fetch returns each result", "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  CoordinatorHandle coordinator(rt->executor(), nullptr, {});
  ActorGuard actors{runtime, {}};
  for (const char* name : {"w0", "w1"})
    coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{name})), name);
  std::vector<RemoteValue<std::string>> values;
  for (int i = 0; i < 10; ++i)
    values.push_back(schedule(coordinator, "echo", "v" + std::to_string(i)));
  coordinator.join();
  CHECK(coordinator.done());
  for (int i = 0; i < 10; ++i) {
    CHECK(values[i].closure_id() == static_cast<ClosureId>(i + 1));
    CHECK(values[i].status() == RemoteValueStatus::ready);
    const std::string got = values[i].fetch();
    CHECK_THAT(got, Catch::Matchers::StartsWith("v" + std::to_string(i) + "@w"));
    CHECK_THAT(got, Catch::Matchers::EndsWith("#1"));
  }
}

TEST_CASE("schedule refuses arguments over the wire's limit at the call and queues nothing", "[actors][coordinator]") {
  auto rt = troupe::testing::make_runtime(troupe::testing::RuntimeMode{}, 1);
  CoordinatorHandle coordinator(rt->executor(), nullptr, CoordinatorOptions{});
  ClosureSpec huge{"echo", std::vector<uint8_t>(max_closure_payload_bytes + 1)};
  CHECK(error_code_of([&] { (void)coordinator.schedule(huge); }) == troupe::Errc::invalid_argument);
  CHECK_THAT(error_message_of([&] { (void)coordinator.schedule(huge); }),
             Contains("over the limit of " + std::to_string(max_closure_payload_bytes)) && Contains("'echo'"));
  CHECK(coordinator.done()); // nothing was queued
}

TEST_CASE("a full closure queue blocks schedule until a worker finishes a closure", "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  CoordinatorOptions options;
  options.queue_capacity = 2;
  CoordinatorHandle coordinator(rt->executor(), nullptr, options);
  ActorGuard actors{runtime, {}};
  auto worker = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", true}));
  coordinator.add_worker(worker, "w0");
  auto a = schedule(coordinator, "echo", "a"); // runs (held) on w0
  auto b = schedule(coordinator, "echo", "b"); // queued
  auto c = schedule(coordinator, "echo", "c"); // queued: the queue is full
  auto blocked = std::make_shared<CoordinatorCallSlot>();
  blocked->spec = ClosureSpec{"echo", bytes("d")};
  caf::anon_send(coordinator.actor(), CoordinatorScheduleMsg{blocked});
  // done() is answered after the coordinator handled the blocked schedule.
  CHECK_FALSE(coordinator.done());
  CHECK_FALSE(blocked->answered.done());
  release(runtime, worker);
  runtime.wait(blocked->answered, "the blocked schedule");
  REQUIRE_FALSE(blocked->failed);
  CHECK(blocked->id == 4);
  coordinator.join();
  CHECK(a.fetch() == "a@w0#1");
  CHECK(c.fetch() == "c@w0#1");
  CHECK(text(troupe::internal::fetch_outcome(runtime, nullptr, *blocked->outcome, blocked->id)) == "d@w0#1");
}

TEST_CASE("the first closure error is raised by the next join once and queued closures are cancelled naming it",
          "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  CoordinatorHandle coordinator(rt->executor(), nullptr, {});
  ActorGuard actors{runtime, {}};
  auto worker = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", true}));
  coordinator.add_worker(worker, "w0");
  auto failing = schedule(coordinator, "fail", "a");
  auto queued1 = schedule(coordinator, "echo", "b");
  auto queued2 = schedule(coordinator, "fail", "c");
  release(runtime, worker);
  const auto joined = error_message_of([&] { coordinator.join(); });
  CHECK_THAT(joined, Contains("boom from a") && Contains("'fail'") && Contains("w0"));
  CHECK(error_code_of([&] { (void)failing.fetch(); }) == Errc::invalid_argument);
  CHECK(failing.status() == RemoteValueStatus::failed);
  for (auto* cancelled : {&queued1, &queued2}) {
    CHECK(cancelled->status() == RemoteValueStatus::cancelled);
    CHECK(error_code_of([&] { (void)cancelled->fetch(); }) == Errc::cancelled);
    CHECK_THAT(error_message_of([&] { (void)cancelled->fetch(); }), Contains("cancelled") && Contains("boom from a"));
  }
  coordinator.join(); // raised once, then cleared
  CHECK(coordinator.done());
  CHECK(schedule(coordinator, "echo", "d").fetch() == "d@w0#1");
}

TEST_CASE("the first closure error is raised by the next done once", "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  CoordinatorHandle coordinator(rt->executor(), nullptr, {});
  ActorGuard actors{runtime, {}};
  auto worker = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", true}));
  coordinator.add_worker(worker, "w0");
  (void)schedule(coordinator, "fail", "a");
  auto queued = schedule(coordinator, "echo", "b");
  release(runtime, worker);
  // The worker answered before release() returned, so done() comes after it.
  CHECK(error_code_of([&] { (void)coordinator.done(); }) == Errc::invalid_argument);
  CHECK(coordinator.done());
  CHECK(error_code_of([&] { (void)queued.fetch(); }) == Errc::cancelled);
}

TEST_CASE("schedule raises a pending closure error and does not queue its function", "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  CoordinatorHandle coordinator(rt->executor(), nullptr, {});
  ActorGuard actors{runtime, {}};
  auto worker = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", true}));
  coordinator.add_worker(worker, "w0");
  (void)schedule(coordinator, "fail", "a");
  release(runtime, worker);
  CHECK_THAT(error_message_of([&] { (void)schedule(coordinator, "echo", "b"); }), Contains("boom from a"));
  coordinator.join();
  CHECK(schedule(coordinator, "echo", "c").closure_id() == 2); // b was never queued
}

TEST_CASE("a closure whose worker is lost mid-run reruns first on another worker as attempt 2 and the stale result is "
          "ignored",
          "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  AttemptRecorder recorder(runtime);
  auto options = recorder.options();
  CoordinatorHandle coordinator(rt->executor(), nullptr, options);
  ActorGuard actors{runtime, {}};
  auto frozen = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", true}));
  auto healthy = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w1", true}));
  coordinator.add_worker(frozen, "w0");
  coordinator.add_worker(healthy, "w1");
  auto x = schedule(coordinator, "echo", "x"); // the first idle worker, w0, takes it
  auto y = schedule(coordinator, "echo", "y"); // w1
  auto z = schedule(coordinator, "echo", "z"); // queued
  coordinator.worker_lost(frozen, "missed heartbeats for 5 s");
  release(runtime, healthy); // w1 answers y, then runs x (put back in front of z), then z
  CHECK(x.fetch() == "x@w1#2");
  CHECK(z.fetch() == "z@w1#1");
  release(runtime, frozen); // w0 wakes up and answers attempt 1, too late
  CHECK(coordinator.done()); // handled after w0's stale answer
  CHECK(x.fetch() == "x@w1#2");
  const auto events = flushed(runtime, recorder.listener, recorder.log);
  REQUIRE(events.size() == 4);
  CHECK(events[0].id == x.closure_id());
  CHECK(events[0].attempt == 1);
  CHECK(events[0].outcome == AttemptOutcome::aborted);
  CHECK_THAT(events[0].reason, Contains("w0") && Contains("missed heartbeats"));
  CHECK(events[1].id == y.closure_id());
  CHECK(events[2].id == x.closure_id());
  CHECK(events[2].attempt == 2);
  CHECK(events[2].outcome == AttemptOutcome::finished);
  CHECK(events[3].id == z.closure_id());
}

TEST_CASE("a frozen worker that rejoins answers its old attempt too late and only the new attempt counts",
          "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  AttemptRecorder recorder(runtime);
  auto options = recorder.options();
  CoordinatorHandle coordinator(rt->executor(), nullptr, options);
  ActorGuard actors{runtime, {}};
  auto worker = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", true}));
  coordinator.add_worker(worker, "w0");
  auto x = schedule(coordinator, "echo", "x");
  coordinator.worker_lost(worker, "missed heartbeats for 5 s");
  coordinator.add_worker(worker, "w0"); // it recovers and rejoins: x runs on it again as attempt 2
  CHECK_FALSE(coordinator.done());
  release(runtime, worker); // answers attempt 1 (stale), then attempt 2
  CHECK(x.fetch() == "x@w0#2");
  coordinator.join();
  const auto events = flushed(runtime, recorder.listener, recorder.log);
  REQUIRE(events.size() == 2);
  CHECK(events[0].attempt == 1);
  CHECK(events[0].outcome == AttemptOutcome::aborted);
  CHECK(events[1].attempt == 2);
  CHECK(events[1].outcome == AttemptOutcome::finished);
}

TEST_CASE("closures in flight on a killed worker are rerun and every closure finishes exactly once",
          "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  AttemptRecorder recorder(runtime);
  auto options = recorder.options();
  options.queue_capacity = 4;
  CoordinatorHandle coordinator(rt->executor(), nullptr, options);
  ActorGuard actors{runtime, {}};
  // w0, the first idle worker, takes closure 1 and dies on it; w2 dies on its
  // 2nd closure if the interleaving gives it one.
  coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", false, 1})), "w0");
  coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w1"})), "w1");
  coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w2", false, 2})), "w2");
  constexpr int closures = 20;
  std::vector<RemoteValue<std::string>> values;
  for (int i = 0; i < closures; ++i)
    values.push_back(schedule(coordinator, "echo", "v" + std::to_string(i)));
  coordinator.join();
  CHECK(coordinator.done());
  const auto events = flushed(runtime, recorder.listener, recorder.log);
  std::map<ClosureId, std::vector<ClosureAttemptEndedMsg>> by_closure;
  for (const auto& e : events)
    by_closure[e.id].push_back(e);
  REQUIRE(by_closure.size() == closures);
  int aborted = 0;
  for (int i = 0; i < closures; ++i) {
    const auto& attempts = by_closure[values[i].closure_id()];
    REQUIRE_FALSE(attempts.empty());
    // Attempts 1..n-1 aborted, attempt n finished: the effects count once.
    for (std::size_t k = 0; k < attempts.size(); ++k) {
      CHECK(attempts[k].attempt == k + 1);
      CHECK(attempts[k].outcome == (k + 1 == attempts.size() ? AttemptOutcome::finished : AttemptOutcome::aborted));
    }
    aborted += static_cast<int>(attempts.size()) - 1;
    const std::string value = values[i].fetch();
    CHECK_THAT(value, Catch::Matchers::StartsWith("v" + std::to_string(i) + "@w"));
    CHECK_THAT(value, Catch::Matchers::EndsWith("#" + std::to_string(attempts.size())));
  }
  CHECK(aborted >= 1); // w0's closure 1
  CHECK(aborted <= 2);
}

TEST_CASE("a worker that joins after every worker was lost gets the queued closures", "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  CoordinatorHandle coordinator(rt->executor(), nullptr, {}); // the default no-worker timeout: a minute
  ActorGuard actors{runtime, {}};
  coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", false, 1})), "w0");
  auto x = schedule(coordinator, "echo", "x");
  auto y = schedule(coordinator, "echo", "y");
  coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0-restarted"})),
                         "w0-restarted");
  coordinator.join();
  CHECK(x.fetch() == "x@w0-restarted#2");
  CHECK(y.fetch() == "y@w0-restarted#1");
}

TEST_CASE("with no worker alive join schedule and fetch fail naming that instead of hanging", "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  CoordinatorOptions options;
  options.no_worker_timeout = std::chrono::milliseconds(100);
  CoordinatorHandle coordinator(rt->executor(), nullptr, options);
  ActorGuard actors{runtime, {}};

  SECTION("no worker ever joined") {
    auto x = schedule(coordinator, "echo", "x"); // room in the queue: queued
    const auto joined = error_message_of([&] { coordinator.join(); });
    CHECK_THAT(joined, Contains("no worker is alive") && Contains("no worker joined"));
    CHECK(error_code_of([&] { (void)x.fetch(); }) == Errc::peer_lost);
    CHECK_THAT(error_message_of([&] { (void)x.fetch(); }), Contains("could not run"));
    CHECK(error_code_of([&] { (void)schedule(coordinator, "echo", "y"); }) == Errc::peer_lost);
  }
  SECTION("every worker was lost") {
    coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", false, 1})), "w0");
    auto x = schedule(coordinator, "echo", "x");
    CHECK_THAT(error_message_of([&] { (void)x.fetch(); }), Contains("no worker is alive") && Contains("w0"));
    CHECK(error_code_of([&] { coordinator.join(); }) == Errc::peer_lost); // x's failure, raised once
    CHECK(error_code_of([&] { (void)schedule(coordinator, "echo", "y"); }) == Errc::peer_lost);
    // A restarted worker rejoins and gets work again.
    coordinator.add_worker(actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w1"})), "w1");
    CHECK(schedule(coordinator, "echo", "z").fetch() == "z@w1#1");
  }
}

TEST_CASE("destroying the coordinator cancels every unsettled closure so fetch never hangs", "[actors][coordinator]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = troupe::testing::make_runtime(mode, 1);
  auto& runtime = rt->impl();
  ActorGuard actors{runtime, {}};
  CoordinatorOptions options;
  options.queue_capacity = 1;
  auto coordinator = std::make_unique<CoordinatorHandle>(rt->executor(), nullptr, options);
  auto worker = actors.add(runtime.system().spawn(fake_worker, FakeWorkerScript{"w0", true}));
  coordinator->add_worker(worker, "w0");
  auto running = schedule(*coordinator, "echo", "a"); // held on w0
  auto queued = schedule(*coordinator, "echo", "b");  // fills the queue
  auto blocked = std::make_shared<CoordinatorCallSlot>();
  blocked->spec = ClosureSpec{"echo", bytes("c")};
  caf::anon_send(coordinator->actor(), CoordinatorScheduleMsg{blocked});
  CHECK_FALSE(coordinator->done()); // answered after the blocked schedule was handled
  REQUIRE(running.status() == RemoteValueStatus::not_ready);
  REQUIRE(queued.status() == RemoteValueStatus::not_ready);
  REQUIRE_FALSE(blocked->answered.done());

  coordinator.reset();

  constexpr auto deadline = std::chrono::seconds(10);
  for (auto* value : {&running, &queued}) {
    CAPTURE(value->closure_id());
    REQUIRE(settles_within(runtime, deadline, [&] { return value->status() != RemoteValueStatus::not_ready; }));
    CHECK(value->status() == RemoteValueStatus::cancelled);
    CHECK(error_code_of([&] { (void)value->fetch(); }) == Errc::cancelled);
    CHECK_THAT(error_message_of([&] { (void)value->fetch(); }), Contains("ClusterCoordinator was destroyed"));
  }
  REQUIRE(settles_within(runtime, deadline, [&] { return blocked->answered.done(); }));
  CHECK(blocked->failed);
  CHECK(blocked->code == Errc::cancelled);
  // The worker's late answer goes to a coordinator that is gone: harmless.
  release(runtime, worker);
  CHECK(running.status() == RemoteValueStatus::cancelled);
}

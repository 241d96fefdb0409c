// The coordinator's two-phase commit of scheduled functions' updates on real
// parameter-server actors, with fake workers that play the worker's side of
// the protocol (stage each update, then report the counts in
// ClosureFinishedMsg), threaded and under 50 simulation seeds: exactly once
// across a lost worker, nothing of a function that raised, no server message
// for functions without updates, a lost or silent server, a refused commit,
// and bounded server records.

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include <troupe/actors/ps/coordinator_handle.hpp>
#include <troupe/actors/ps/parameter_server_actor.hpp>
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

/// Test -> fake worker: send the frozen attempt's (now stale) result.
struct ThawMsg {
  std::shared_ptr<Completion> sent;
};

} // namespace

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ThawMsg)

namespace {

// Every request in these tests has this deadline, so every wait ends.
constexpr auto request_deadline = std::chrono::seconds(60);
// How long a test waits for something that must happen without a timer.
constexpr auto settle_deadline = std::chrono::seconds(30);

const ShardKey var_key{1, 0};
const std::vector<std::string> server_names{"/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1"};

std::vector<uint8_t> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

std::string text(const std::vector<uint8_t>& b) {
  return {b.begin(), b.end()};
}

/// From the test thread: requests `msg` from `target` and waits for the
/// answer (stepping the simulation in simulation mode).
template <class T, class Msg>
caf::expected<T> ask(RuntimeImpl& runtime, const caf::actor& target, Msg msg) {
  struct Slot {
    std::optional<T> value;
    caf::error error;
    Completion done;
  };
  auto slot = std::make_shared<Slot>();
  runtime.system().spawn([slot, target, msg](caf::event_based_actor* self) {
    auto failed = [slot](caf::error& err) {
      slot->error = std::move(err);
      slot->done.set();
    };
    if constexpr (std::is_same_v<T, caf::unit_t>)
      self->request(target, request_deadline, msg)
        .then(
          [slot] {
            slot->value = caf::unit;
            slot->done.set();
          },
          failed);
    else
      self->request(target, request_deadline, msg)
        .then(
          [slot](T& value) {
            slot->value = std::move(value);
            slot->done.set();
          },
          failed);
  });
  runtime.wait(slot->done, "a request from the test");
  if (slot->error)
    return std::move(slot->error);
  return std::move(*slot->value);
}

int64_t value_of(RuntimeImpl& runtime, const caf::actor& ps) {
  auto read = ask<PsReadReply>(runtime, ps, PsReadMsg{var_key, {}});
  REQUIRE(read);
  return read->value.to_vector<int64_t>().at(0);
}

PsStats stats_of(RuntimeImpl& runtime, const caf::actor& ps) {
  auto stats = ask<PsStats>(runtime, ps, PsStatsMsg{});
  REQUIRE(stats);
  return *stats;
}

// -- the fake worker --------------------------------------------------------------

/// How a fake worker misbehaves on its `on_run`-th closure (1-based; 0 = never).
struct WorkerFault {
  int freeze_on_run = 0; ///< stage, then keep the result until ThawMsg
  int die_on_run = 0;    ///< stage, then terminate without answering
};

/// One update of a closure: `delta` added to var_key at server `server`.
struct Stage {
  std::size_t server = 0;
  int64_t delta = 0;
};

/// What closure `id` of function `name` stages, by the function's name:
/// "update": +id at server 0 and +100*id at server 1; "raise": the same, then
/// the function raises; "miscount": +id at server 1 but reports 2 staged
/// there; "elsewhere": nothing staged, 1 reported at server 2; anything
/// else ("noop"): nothing.
std::vector<Stage> stages_of(const std::string& name, ClosureId id) {
  const auto delta = static_cast<int64_t>(id);
  if (name == "update" || name == "raise")
    return {{0, delta}, {1, 100 * delta}};
  if (name == "miscount")
    return {{1, delta}};
  return {};
}

/// Stand-in servers (plain actors answering the same messages) as the
/// coordinator holds them.
std::vector<ParameterServerActorHandle> as_parameter_servers(const std::vector<caf::actor>& servers) {
  std::vector<ParameterServerActorHandle> typed;
  for (const auto& server : servers)
    typed.push_back(caf::actor_cast<ParameterServerActorHandle>(server));
  return typed;
}

struct FakeWorkerState {
  std::string name;
  std::vector<caf::actor> servers;
  WorkerFault fault;
  int runs = 0;
  std::shared_ptr<Completion> frozen =
    std::make_shared<Completion>(); ///< set once the frozen attempt staged
  std::optional<ClosureFinishedMsg> held;
  caf::actor held_for;
};

/// One attempt in progress on a fake worker.
struct AttemptRun {
  RunClosureMsg run;
  int run_number = 0;
  std::vector<Stage> stages;
  std::vector<uint32_t> staged; ///< acknowledged stages per server: the counts reported
};

void finish_attempt(caf::event_based_actor* self, const std::shared_ptr<FakeWorkerState>& state,
                    const std::shared_ptr<AttemptRun>& attempt) {
  const std::string& function = attempt->run.spec.function_name;
  ClosureFinishedMsg out{
    attempt->run.id,
    attempt->run.attempt,
    true,
    bytes(function + "@" + state->name + "#" + std::to_string(attempt->run.attempt)),
    Errc::internal,
    {},
    attempt->staged};
  if (function == "raise") {
    out.ok = false;
    out.value.clear();
    out.code = Errc::invalid_argument;
    out.error = "boom in closure " + std::to_string(attempt->run.id);
  } else if (function == "miscount") {
    out.staged_per_server.at(1) = 2;
  } else if (function == "elsewhere") {
    out.staged_per_server = {0, 0, 1};
  }
  if (attempt->run_number == state->fault.die_on_run) {
    self->quit(caf::exit_reason::user_shutdown); // killed after staging, before answering
    return;
  }
  if (attempt->run_number == state->fault.freeze_on_run) {
    state->held = std::move(out);
    state->held_for = attempt->run.coordinator;
    state->frozen->set();
    return;
  }
  self->send(attempt->run.coordinator, std::move(out));
}

/// Stages attempt->stages[next...] one after the other, each once the
/// previous one is acknowledged (the worker's side of the protocol).
void stage_from(caf::event_based_actor* self, const std::shared_ptr<FakeWorkerState>& state,
                const std::shared_ptr<AttemptRun>& attempt, std::size_t next) {
  if (next == attempt->stages.size()) {
    finish_attempt(self, state, attempt);
    return;
  }
  const Stage stage = attempt->stages[next];
  const AttemptId id{attempt->run.id, attempt->run.attempt};
  PsStageMsg msg{
    id, attempt->staged.at(stage.server),
    ShardUpdate{var_key, UpdateOp::ASSIGN_ADD, Tensor::from_vector<int64_t>({stage.delta}), {}}};
  self->request(state->servers.at(stage.server), request_deadline, std::move(msg))
    .then(
      [=] {
        ++attempt->staged[stage.server];
        stage_from(self, state, attempt, next + 1);
      },
      [=](caf::error& err) {
        self->send(attempt->run.coordinator,
                   ClosureFinishedMsg{id.function,
                                      id.attempt,
                                      false,
                                      {},
                                      Errc::internal,
                                      "staging failed: " + self->system().render(err),
                                      attempt->staged});
      });
}

caf::behavior fake_worker(caf::event_based_actor* self, std::shared_ptr<FakeWorkerState> state) {
  return {
    [=](RunClosureMsg& run) {
      auto attempt = std::make_shared<AttemptRun>();
      attempt->run_number = ++state->runs;
      attempt->stages = stages_of(run.spec.function_name, run.id);
      attempt->staged.assign(state->servers.size(), 0);
      attempt->run = std::move(run);
      stage_from(self, state, attempt, 0);
    },
    [=](ThawMsg& msg) {
      if (state->held)
        self->send(state->held_for, std::move(*state->held));
      state->held.reset();
      msg.sent->set();
    },
  };
}

/// A stand-in server that acknowledges stages and aborts but never answers a
/// commit (a frozen server process).
caf::behavior silent_server(caf::event_based_actor* self) {
  auto promises = std::make_shared<std::vector<caf::response_promise>>();
  return {
    [](const PsStageMsg&) {},
    [](const PsAbortMsg&) { return uint32_t{0}; },
    [=](const PsCommitMsg&) { promises->push_back(self->make_response_promise()); },
  };
}

/// A stand-in server that terminates by itself (self->quit()) when told.
caf::behavior self_quitting_server(caf::event_based_actor* self) {
  return {
    [=](int) { self->quit(); },
  };
}

/// Two parameter servers holding var_key = [0], fake workers and a coordinator
/// that commits on the servers. Destroyed in the right order: the
/// coordinator, then the helper actors, then the runtime.
struct Cluster {
  std::unique_ptr<Runtime> rt;
  RuntimeImpl& runtime;
  std::vector<caf::actor> servers;
  std::vector<caf::actor> workers;
  std::vector<std::shared_ptr<FakeWorkerState>> worker_states;
  std::unique_ptr<CoordinatorHandle> coordinator;

  /// `servers` replaces the real servers (stand-ins); `tweak` edits the options.
  Cluster(const testing::RuntimeMode& mode,
          std::vector<caf::actor> (*make_servers)(RuntimeImpl&) = nullptr,
          const std::function<void(CoordinatorOptions&)>& tweak = {})
    : rt(testing::make_runtime(mode, 1)), runtime(rt->impl()) {
    servers = make_servers != nullptr ? make_servers(runtime) : real_servers(runtime);
    CoordinatorOptions options;
    options.parameter_servers = as_parameter_servers(servers);
    options.parameter_server_names = server_names;
    options.commit_timeout = request_deadline;
    if (tweak)
      tweak(options);
    coordinator = std::make_unique<CoordinatorHandle>(rt->executor(), nullptr, options);
  }

  ~Cluster() {
    coordinator.reset();
    for (auto& actor : workers)
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    for (auto& actor : servers)
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    runtime.drain();
  }

  /// A parameter server named server_names[index] holding var_key = [0].
  static caf::actor real_server(RuntimeImpl& runtime, std::size_t index) {
    auto server = caf::actor_cast<caf::actor>(
      runtime.system().spawn<ParameterServerActor>(ParameterServerOptions{server_names.at(index)}));
    REQUIRE(ask<caf::unit_t>(runtime, server,
                             PsCreateMsg{var_key, "v", Tensor::from_vector<int64_t>({0})}));
    return server;
  }

  static std::vector<caf::actor> real_servers(RuntimeImpl& runtime) {
    return {real_server(runtime, 0), real_server(runtime, 1)};
  }

  FakeWorkerState& add_worker(const std::string& name, WorkerFault fault = {}) {
    auto state = std::make_shared<FakeWorkerState>();
    state->name = name;
    state->servers = servers;
    state->fault = fault;
    workers.push_back(runtime.system().spawn(fake_worker, state));
    worker_states.push_back(state);
    coordinator->add_worker(workers.back(), name);
    return *state;
  }

  RemoteValue<std::string> schedule(const std::string& function) {
    auto closure = coordinator->schedule(ClosureSpec{function, {}});
    return RemoteValue<std::string>(runtime, nullptr, closure.id, closure.outcome, text);
  }

  void thaw(std::size_t worker) {
    auto sent = std::make_shared<Completion>();
    caf::anon_send(workers.at(worker), ThawMsg{sent});
    runtime.wait(*sent, "a fake worker's thaw");
  }
};

/// Whether `done` is set within `deadline`, so that something that never
/// comes fails the test instead of hanging it. Simulation: the runtime's wait
/// fires timers and raises Error(deadlock) when nothing can run any more.
bool set_within(RuntimeImpl& runtime, const Completion& done, std::chrono::seconds deadline) {
  if (runtime.simulation()) {
    runtime.wait(done, "a completion the test expects");
    return true;
  }
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!done.done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::yield();
  }
  return true;
}

int64_t sum_of_ids(int closures) {
  return static_cast<int64_t>(closures) * (closures + 1) / 2;
}

} // namespace

TEST_CASE("an attempt whose worker is lost after staging at two servers reruns elsewhere and "
          "commits exactly once",
          "[actors][coordinator][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Cluster cluster(mode);
  constexpr int closures = 4;

  SECTION("a frozen worker declared lost, whose stale result arrives later") {
    auto& frozen = cluster.add_worker("w0", WorkerFault{.freeze_on_run = 1});
    std::vector<RemoteValue<std::string>> values;
    for (int i = 0; i < closures; ++i)
      values.push_back(cluster.schedule("update"));
    cluster.runtime.wait(*frozen.frozen, "w0 staging closure 1");
    cluster.coordinator->worker_lost(cluster.workers[0], "missed heartbeats for 5 s");
    // done() is answered after the loss was handled, whose aborts were then
    // already in the servers' mailboxes, ahead of these reads.
    CHECK_FALSE(cluster.coordinator->done());
    for (const auto& server : cluster.servers) {
      CHECK(stats_of(cluster.runtime, server).staged_updates
            == 0); // dropped at once, not at the rerun's commit
      CHECK(value_of(cluster.runtime, server) == 0);
    }
    cluster.add_worker("w1"); // the rerun's worker
    cluster.coordinator->join();
    CHECK(values[0].fetch() == "update@w1#2");
    cluster.thaw(0); // attempt 1's result, after attempt 2 committed: ignored
    CHECK(cluster.coordinator->done());
  }
  SECTION("a worker killed after staging") {
    cluster.add_worker("w0", WorkerFault{.die_on_run = 1});
    cluster.add_worker("w1");
    std::vector<RemoteValue<std::string>> values;
    for (int i = 0; i < closures; ++i)
      values.push_back(cluster.schedule("update"));
    cluster.coordinator->join();
    CHECK(values[0].fetch() == "update@w1#2");
  }
  // Every function's deltas exactly once; attempt 1's staged updates dropped.
  CHECK(value_of(cluster.runtime, cluster.servers[0]) == sum_of_ids(closures));
  CHECK(value_of(cluster.runtime, cluster.servers[1]) == 100 * sum_of_ids(closures));
  for (const auto& server : cluster.servers)
    CHECK(stats_of(cluster.runtime, server).staged_updates == 0);
}

TEST_CASE("a function that raises after staging at two servers applies none of its updates",
          "[actors][coordinator][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Cluster cluster(mode);
  cluster.add_worker("w0");
  auto first = cluster.schedule("update"); // closure 1: +1 and +100
  cluster.coordinator->join();
  auto raising = cluster.schedule("raise"); // closure 2 stages +2 and +200, then raises
  CHECK_THAT(error_message_of([&] { cluster.coordinator->join(); }),
             Contains("boom in closure 2") && Contains("w0"));
  CHECK(error_code_of([&] { (void)raising.fetch(); }) == Errc::invalid_argument);
  CHECK(first.fetch() == "update@w0#1");
  CHECK(value_of(cluster.runtime, cluster.servers[0]) == 1);
  CHECK(value_of(cluster.runtime, cluster.servers[1]) == 100);
  for (const auto& server : cluster.servers)
    CHECK(stats_of(cluster.runtime, server).staged_updates == 0); // discarded, not left waiting
}

TEST_CASE("functions that update no variable settle without any parameter-server message",
          "[actors][coordinator][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Cluster cluster(mode);
  cluster.add_worker("w0");
  cluster.add_worker("w1");
  std::vector<RemoteValue<std::string>> values;
  for (int i = 0; i < 20; ++i)
    values.push_back(cluster.schedule("noop"));
  cluster.coordinator->join();
  for (auto& value : values)
    CHECK_THAT(value.fetch(), Catch::Matchers::StartsWith("noop@w"));
  // A commit or an abort would leave a function record or move the watermark.
  for (const auto& server : cluster.servers) {
    const auto stats = stats_of(cluster.runtime, server);
    CHECK(stats.function_records == 0);
    CHECK(stats.resolved_below == 0);
  }
}

TEST_CASE("a commit a server refuses fails the closure naming the server",
          "[actors][coordinator][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  SECTION("a staged count that does not match what the server holds") {
    Cluster cluster(mode);
    cluster.add_worker("w0");
    auto miscounted = cluster.schedule("miscount"); // stages 1 at task 1, reports 2
    const auto joined = error_message_of([&] { cluster.coordinator->join(); });
    CHECK_THAT(joined, Contains("/job:ps/replica:0/task:1") && Contains("expects 2 staged updates")
                         && Contains("'miscount'") && Contains("w0"));
    CHECK(error_code_of([&] { (void)miscounted.fetch(); }) == Errc::data_loss);
    CHECK(value_of(cluster.runtime, cluster.servers[1]) == 0); // nothing applied
    CHECK(cluster.coordinator->done());                        // raised once
  }
  SECTION("a server that never answers fails the closure at the commit timeout") {
    Cluster cluster(
      mode,
      [](RuntimeImpl& runtime) {
        return std::vector<caf::actor>{Cluster::real_server(runtime, 0),
                                       runtime.system().spawn(silent_server)};
      },
      [](CoordinatorOptions& options) { options.commit_timeout = std::chrono::milliseconds(200); });
    cluster.add_worker("w0");
    auto stuck = cluster.schedule("update");
    const auto joined = error_message_of([&] { cluster.coordinator->join(); });
    CHECK_THAT(joined, Contains("/job:ps/replica:0/task:1") && Contains("200 ms"));
    CHECK(error_code_of([&] { (void)stuck.fetch(); }) == Errc::timeout);
  }
  SECTION("updates reported at a server the coordinator does not know") {
    Cluster cluster(mode);
    cluster.add_worker("w0");
    auto stray = cluster.schedule("elsewhere");
    CHECK_THAT(error_message_of([&] { cluster.coordinator->join(); }),
               Contains("parameter server task 2") && Contains("knows 2 parameter servers"));
    CHECK(error_code_of([&] { (void)stray.fetch(); }) == Errc::data_loss);
  }
}

TEST_CASE("a lost parameter server fails waiting and later calls and unsettled fetches naming it",
          "[actors][coordinator][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  // Server 1 is a stand-in that quits by itself on request; its closures are
  // held by the frozen worker, so nothing needs it to answer.
  Cluster cluster(mode, [](RuntimeImpl& runtime) {
    return std::vector<caf::actor>{Cluster::real_server(runtime, 0),
                                   runtime.system().spawn(self_quitting_server)};
  });
  auto& worker = cluster.add_worker("w0", WorkerFault{.freeze_on_run = 1});
  auto running = cluster.schedule("noop");
  auto queued = cluster.schedule("noop");
  cluster.runtime.wait(*worker.frozen, "w0 running closure 1");
  auto waiting_join = std::make_shared<CoordinatorCallSlot>();
  caf::anon_send(cluster.coordinator->actor(), CoordinatorJoinMsg{waiting_join});
  std::string reason;

  SECTION("its actor is stopped with an exit message") {
    caf::anon_send_exit(cluster.servers[1], caf::exit_reason::user_shutdown);
    reason = "user_shutdown";
  }
  SECTION("its actor quits by itself") {
    caf::anon_send(cluster.servers[1], 1);
    reason = "its actor terminated";
  }
  SECTION("the failure detector reports it") {
    cluster.coordinator->parameter_server_lost(1, "missed heartbeats for 5 s");
    reason = "missed heartbeats for 5 s";
  }

  REQUIRE(set_within(cluster.runtime, waiting_join->answered, settle_deadline));
  CHECK(waiting_join->failed);
  CHECK(waiting_join->code == Errc::peer_lost);
  CHECK_THAT(waiting_join->error, Contains("parameter server /job:ps/replica:0/task:1 was lost")
                                    && Contains(reason)
                                    && Contains("restore the variables from a checkpoint"));
  for (auto* value : {&running, &queued}) {
    CHECK(error_code_of([&] { (void)value->fetch(); }) == Errc::peer_lost);
    CHECK_THAT(error_message_of([&] { (void)value->fetch(); }),
               Contains("/job:ps/replica:0/task:1 was lost"));
  }
  for (int i = 0; i < 2; ++i) { // every later call, not only the first
    CHECK(error_code_of([&] { cluster.coordinator->join(); }) == Errc::peer_lost);
    CHECK(error_code_of([&] { (void)cluster.coordinator->done(); }) == Errc::peer_lost);
    CHECK_THAT(error_message_of([&] { (void)cluster.schedule("noop"); }),
               Contains("/job:ps/replica:0/task:1 was lost"));
  }
  cluster.thaw(0); // the frozen attempt's late result changes nothing
  CHECK(error_code_of([&] { cluster.coordinator->join(); }) == Errc::peer_lost);
}

TEST_CASE(
  "a parameter server that is gone before the coordinator starts fails the first call naming it",
  "[actors][coordinator][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Cluster cluster(mode, [](RuntimeImpl& runtime) {
    auto servers = Cluster::real_servers(runtime);
    auto gone = servers[0];
    // CAF ignores an exit message with reason `normal`: user_shutdown it is.
    caf::anon_send_exit(gone, caf::exit_reason::user_shutdown);
    auto stopped = std::make_shared<Completion>();
    // The handle is kept: a monitor holds only a weak reference to its
    // observer, and an idle actor nobody holds is terminated (unreachable)
    // before the down message can reach it, which makes this wait hang.
    auto watcher =
      runtime.system().spawn([gone, stopped](caf::event_based_actor* self) -> caf::behavior {
        self->monitor(gone);
        self->set_down_handler([self, stopped](caf::down_msg&) {
          stopped->set();
          self->quit();
        });
        return {[](int) {}};
      });
    runtime.wait(*stopped, "server 0 stopping");
    return servers;
  });
  cluster.add_worker("w0");
  CHECK_THAT(error_message_of([&] { cluster.coordinator->join(); }),
             Contains("parameter server /job:ps/replica:0/task:0 was lost"));
}

TEST_CASE("the watermark keeps a parameter server's function records bounded over many closures",
          "[actors][coordinator][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  Cluster cluster(mode, nullptr, [](CoordinatorOptions& options) { options.queue_capacity = 8; });
  cluster.add_worker("w0");
  cluster.add_worker("w1");
  constexpr int closures = 120;
  for (int i = 0; i < closures; ++i)
    (void)cluster.schedule("update");
  cluster.coordinator->join();
  // One more function, alone: its commit says every earlier one is resolved.
  (void)cluster.schedule("update");
  cluster.coordinator->join();
  CHECK(value_of(cluster.runtime, cluster.servers[0]) == sum_of_ids(closures + 1));
  CHECK(value_of(cluster.runtime, cluster.servers[1]) == 100 * sum_of_ids(closures + 1));
  for (const auto& server : cluster.servers) {
    const auto stats = stats_of(cluster.runtime, server);
    // The last function only, not the 121 that committed.
    CHECK(stats.function_records == 1);
    CHECK(stats.resolved_below == closures + 1);
    CHECK(stats.staged_updates == 0);
  }
}

TEST_CASE(
  "coordinator options that do not match their parameter servers are refused at construction",
  "[actors][coordinator][parameter_server]") {
  auto rt = testing::make_runtime(testing::RuntimeMode{}, 1);
  auto& runtime = rt->impl();
  auto server = runtime.system().spawn<ParameterServerActor>(ParameterServerOptions{"ps"});
  CoordinatorOptions names_mismatch;
  names_mismatch.parameter_servers = {server};
  names_mismatch.parameter_server_names = server_names;
  CHECK_THAT(error_message_of([&] { CoordinatorHandle coordinator(rt->executor(), nullptr, names_mismatch); }),
             Contains("2 parameter server names for 1 parameter servers"));
  CoordinatorOptions null_server;
  null_server.parameter_servers = {server, ParameterServerActorHandle{}};
  CHECK(error_code_of([&] { CoordinatorHandle coordinator(rt->executor(), nullptr, null_server); })
        == Errc::invalid_argument);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  runtime.drain();
}

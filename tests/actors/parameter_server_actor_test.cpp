#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/ps/parameter_server_actor.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/troupe.hpp>

#include "support/runtime_modes.hpp"

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

namespace {

// Every request in these tests has this deadline, so every wait ends.
constexpr auto request_deadline = std::chrono::seconds(60);

/// The reply of a request without a value.
struct Void {};

/// A parameter server's answer: the value or the error (code and rendered text).
template <class T>
struct Answer {
  std::optional<T> value;
  std::optional<Errc> code;
  std::string text;

  [[nodiscard]] bool ok() const { return value.has_value(); }
};

template <class T>
Answer<T> ok_answer(T value) {
  Answer<T> out;
  out.value = std::move(value);
  return out;
}

template <class T>
Answer<T> failed_answer(caf::actor_system& sys, const caf::error& err) {
  Answer<T> out;
  out.code = err.category() == caf::atom("troupe") ? static_cast<Errc>(err.code()) : Errc::internal;
  out.text = sys.render(err);
  return out;
}

/// From inside an actor: requests `msg` from `ps` and calls `done` with the answer.
template <class T, class Msg, class Done>
void call(caf::event_based_actor* self, const caf::actor& ps, Msg msg, Done done) {
  auto on_error = [self, done](caf::error& err) mutable { done(failed_answer<T>(self->system(), err)); };
  if constexpr (std::is_same_v<T, Void>)
    self->request(ps, request_deadline, std::move(msg)).then([done]() mutable { done(ok_answer<T>(Void{})); },
                                                             on_error);
  else if constexpr (std::is_same_v<Msg, PsReadMsg>) // a read answers its value inside a PsReadReply
    self->request(ps, request_deadline, std::move(msg))
      .then([done](PsReadReply& reply) mutable { done(ok_answer<T>(std::move(reply.value))); }, on_error);
  else
    self->request(ps, request_deadline, std::move(msg))
      .then([done](T& value) mutable { done(ok_answer<T>(std::move(value))); }, on_error);
}

/// From the test thread: requests `msg` from `ps` and waits for the answer
/// (stepping the simulation in simulation mode).
template <class T, class Msg>
Answer<T> ask(Runtime& rt, const caf::actor& ps, Msg msg) {
  struct Slot {
    Answer<T> answer;
    Completion done;
  };
  auto slot = std::make_shared<Slot>();
  rt.impl().system().spawn([slot, ps, msg](caf::event_based_actor* self) {
    call<T>(self, ps, msg, [slot](Answer<T> answer) {
      slot->answer = std::move(answer);
      slot->done.set();
    });
  });
  rt.impl().wait(slot->done, "a parameter-server request");
  return std::move(slot->answer);
}

caf::actor spawn_ps(Runtime& rt, std::string name) {
  return caf::actor_cast<caf::actor>(rt.impl().system().spawn<ParameterServerActor>(ParameterServerOptions{std::move(name)}));
}

Tensor ints(std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>(values);
}

std::vector<int64_t> read_committed(Runtime& rt, const caf::actor& ps, ShardKey key) {
  auto answer = ask<Tensor>(rt, ps, PsReadMsg{key, {}});
  REQUIRE(answer.ok());
  return answer.value->template to_vector<int64_t>();
}

ShardUpdate add_update(ShardKey key, std::vector<int64_t> delta) {
  return ShardUpdate{key, UpdateOp::ASSIGN_ADD, ints(std::move(delta)), {}};
}

PsStats stats_of(Runtime& rt, const caf::actor& ps) {
  auto answer = ask<PsStats>(rt, ps, PsStatsMsg{});
  REQUIRE(answer.ok());
  return *answer.value;
}

const ShardKey w0{1, 0};

/// A runtime with one parameter server "ps:0" holding w0 = [10, 20] (int64).
struct OneServer {
  explicit OneServer(const testing::RuntimeMode& mode) : rt(testing::make_runtime(mode, 1)) {
    ps = spawn_ps(*rt, "ps:0");
    REQUIRE(ask<Void>(*rt, ps, PsCreateMsg{w0, "w", ints({10, 20})}).ok());
  }

  Answer<Void> stage(AttemptId id, uint32_t sequence, std::vector<int64_t> delta) {
    return ask<Void>(*rt, ps, PsStageMsg{id, sequence, add_update(w0, std::move(delta))});
  }
  Answer<PsCommitReply> commit(AttemptId id, uint32_t staged, uint64_t resolved_below = 0) {
    return ask<PsCommitReply>(*rt, ps, PsCommitMsg{id, staged, resolved_below});
  }
  Answer<uint32_t> abort(AttemptId id, uint64_t resolved_below = 0) {
    return ask<uint32_t>(*rt, ps, PsAbortMsg{id, resolved_below});
  }
  std::vector<int64_t> value() { return read_committed(*rt, ps, w0); }

  std::unique_ptr<Runtime> rt; // declared first: the actor handle goes before its runtime
  caf::actor ps;
};

} // namespace

// -- plain shards -------------------------------------------------------------------

TEST_CASE("a parameter server creates, reads and updates shards immediately", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  CHECK(s.value() == std::vector<int64_t>{10, 20});
  CHECK(ask<Void>(*s.rt, s.ps, PsApplyMsg{add_update(w0, {1, 2})}).ok());
  CHECK(s.value() == std::vector<int64_t>{11, 22});
  CHECK(ask<Void>(*s.rt, s.ps, PsApplyMsg{{w0, UpdateOp::ASSIGN_SUB, ints({1, 1}), {}}}).ok());
  CHECK(s.value() == std::vector<int64_t>{10, 21});
  CHECK(ask<Void>(*s.rt, s.ps, PsApplyMsg{{w0, UpdateOp::ASSIGN, ints({-5, 7}), {}}}).ok());
  CHECK(s.value() == std::vector<int64_t>{-5, 7});

  // SGD on the server: var -= lr * grad, with exactly representable numbers.
  const ShardKey b{2, 0};
  REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{b, "bias", Tensor::from_vector<float>({1.0f, 2.0f})}).ok());
  CHECK(ask<Void>(*s.rt, s.ps,
                  PsApplyMsg{{b, UpdateOp::APPLY_SGD, Tensor::from_vector<float>({4.0f, -8.0f}), {0.25}}})
          .ok());
  auto bias = ask<Tensor>(*s.rt, s.ps, PsReadMsg{b, {}});
  REQUIRE(bias.ok());
  CHECK(bias.value->to_vector<float>() == std::vector<float>{0.0f, 4.0f});
  CHECK(stats_of(*s.rt, s.ps).shards == 2);
}

TEST_CASE("parameter server errors name the server, the variable and the fix", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  auto twice = ask<Void>(*s.rt, s.ps, PsCreateMsg{w0, "w", ints({0, 0})});
  CHECK(twice.code == Errc::invalid_argument);
  CHECK_THAT(twice.text, Contains("parameter server ps:0") && Contains("variable 'w' (shard 0 of variable 1)")
                           && Contains("twice"));

  auto wrong_dtype = ask<Void>(*s.rt, s.ps, PsApplyMsg{{w0, UpdateOp::ASSIGN_ADD, Tensor::from_vector<int32_t>({1, 2}), {}}});
  CHECK(wrong_dtype.code == Errc::dtype_mismatch);
  CHECK_THAT(wrong_dtype.text, Contains("variable 'w'") && Contains("int32") && Contains("int64")
                                 && Contains("cast it to int64"));

  auto wrong_shape = s.stage({3, 1}, 0, {1, 2, 3});
  CHECK(wrong_shape.code == Errc::shape_mismatch);
  CHECK_THAT(wrong_shape.text, Contains("staged assign_add on variable 'w'") && Contains("the update is int64 with shape (3,) but the shard is int64 with shape (2,)"));

  auto missing = ask<Tensor>(*s.rt, s.ps, PsReadMsg{{9, 4}, {}});
  CHECK(missing.code == Errc::not_found);
  CHECK_THAT(missing.text, Contains("shard 4 of variable 9"));

  auto sgd_on_ints = ask<Void>(*s.rt, s.ps, PsApplyMsg{{w0, UpdateOp::APPLY_SGD, ints({1, 1}), {0.5}}});
  CHECK(sgd_on_ints.code == Errc::invalid_argument);
  CHECK_THAT(sgd_on_ints.text, Contains("SGD needs a floating-point variable"));

  auto unknown_op = ask<Void>(*s.rt, s.ps, PsApplyMsg{{w0, static_cast<UpdateOp>(77), ints({1, 1}), {}}});
  CHECK(unknown_op.code == Errc::invalid_argument);
  CHECK_THAT(unknown_op.text, Contains("unknown update op 77"));
  CHECK(s.value() == std::vector<int64_t>{10, 20}); // no failed update changed anything
}

// -- exactly-once --------------------------------------------------------------------

TEST_CASE("staged updates are invisible to others until their attempt commits", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  REQUIRE(s.stage({1, 1}, 0, {1, 1}).ok());
  REQUIRE(s.stage({1, 1}, 1, {2, 2}).ok());
  REQUIRE(s.stage({2, 1}, 0, {100, 100}).ok());
  CHECK(s.value() == std::vector<int64_t>{10, 20});

  // Read-your-writes: an attempt sees its own staged updates, not another's.
  auto own = ask<Tensor>(*s.rt, s.ps, PsReadMsg{w0, {1, 1}});
  REQUIRE(own.ok());
  CHECK(own.value->to_vector<int64_t>() == std::vector<int64_t>{13, 23});
  auto other = ask<Tensor>(*s.rt, s.ps, PsReadMsg{w0, {2, 1}});
  REQUIRE(other.ok());
  CHECK(other.value->to_vector<int64_t>() == std::vector<int64_t>{110, 120});

  auto commit = s.commit({1, 1}, 2);
  REQUIRE(commit.ok());
  CHECK_FALSE(commit.value->already_committed);
  CHECK(commit.value->applied == 2);
  CHECK(s.value() == std::vector<int64_t>{13, 23});
}

TEST_CASE("an aborted attempt leaves no trace and its late updates are refused", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  REQUIRE(s.stage({1, 1}, 0, {5, 5}).ok());
  auto aborted = s.abort({1, 1});
  REQUIRE(aborted.ok());
  CHECK(*aborted.value == 1);
  CHECK(stats_of(*s.rt, s.ps).staged_updates == 0);

  auto late = s.stage({1, 1}, 1, {7, 7}); // a worker that was declared dead but still runs
  CHECK(late.code == Errc::failed_precondition);
  CHECK_THAT(late.text, Contains("attempt 1 of function 1 is refused: that attempt was aborted"));
  auto late_commit = s.commit({1, 1}, 1);
  CHECK(late_commit.code == Errc::failed_precondition);

  // The function's next attempt commits its own updates only.
  REQUIRE(s.stage({1, 2}, 0, {1, 2}).ok());
  REQUIRE(s.commit({1, 2}, 1).ok());
  CHECK(s.value() == std::vector<int64_t>{11, 22});
}

TEST_CASE("a repeated commit applies once and answers already committed", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  REQUIRE(s.stage({4, 1}, 0, {3, 4}).ok());
  REQUIRE(s.stage({4, 1}, 0, {3, 4}).ok()); // a duplicated stage message is held once
  auto first = s.commit({4, 1}, 1);
  REQUIRE(first.ok());
  CHECK_FALSE(first.value->already_committed);
  auto again = s.commit({4, 1}, 1);
  REQUIRE(again.ok());
  CHECK(again.value->already_committed);
  CHECK(again.value->applied == 0);
  CHECK(s.value() == std::vector<int64_t>{13, 24});
  auto after = s.stage({4, 1}, 1, {1, 1});
  CHECK(after.code == Errc::failed_precondition);
  CHECK_THAT(after.text, Contains("already committed"));
}

TEST_CASE("only one attempt of a function can commit", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  // Attempt 1 was presumed dead and rescheduled as attempt 2, but both run on.
  REQUIRE(s.stage({6, 1}, 0, {1, 1}).ok());
  REQUIRE(s.stage({6, 2}, 0, {2, 2}).ok());
  REQUIRE(s.commit({6, 2}, 1).ok());
  auto second = s.commit({6, 1}, 1);
  CHECK(second.code == Errc::failed_precondition);
  CHECK_THAT(second.text, Contains("commit for attempt 1 of function 6 is refused: function 6 was committed by "
                                   "attempt 2"));
  auto stage = s.stage({6, 3}, 0, {4, 4});
  CHECK(stage.code == Errc::failed_precondition);
  CHECK(s.value() == std::vector<int64_t>{12, 22});
  auto abort_committed = s.abort({6, 2});
  CHECK(abort_committed.code == Errc::failed_precondition);
  CHECK(s.value() == std::vector<int64_t>{12, 22});
}

TEST_CASE("a commit whose staged count differs applies nothing", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  REQUIRE(s.stage({2, 1}, 0, {1, 1}).ok());
  auto gap = s.stage({2, 1}, 2, {9, 9});
  CHECK(gap.code == Errc::data_loss);
  auto short_commit = s.commit({2, 1}, 2);
  CHECK(short_commit.code == Errc::data_loss);
  CHECK_THAT(short_commit.text, Contains("expects 2 staged updates here but 1 arrived; nothing was applied"));
  CHECK(s.value() == std::vector<int64_t>{10, 20});
  REQUIRE(s.commit({2, 1}, 1).ok());
  CHECK(s.value() == std::vector<int64_t>{11, 21});
}

TEST_CASE("the resolved watermark bounds what a parameter server remembers", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  for (uint64_t f = 1; f <= 20; ++f) {
    REQUIRE(s.stage({f, 1}, 0, {1, 0}).ok());
    if (f % 2 == 0)
      REQUIRE(s.commit({f, 1}, 1).ok());
    else
      REQUIRE(s.abort({f, 1}).ok());
  }
  REQUIRE(s.stage({21, 1}, 0, {0, 1}).ok()); // in flight
  CHECK(stats_of(*s.rt, s.ps).function_records == 21);
  REQUIRE(s.commit({21, 1}, 1, 21).ok());
  auto stats = stats_of(*s.rt, s.ps);
  CHECK(stats.function_records == 1);
  CHECK(stats.resolved_below == 21);
  CHECK(s.value() == std::vector<int64_t>{20, 21});
  // A forgotten function can no longer stage or commit.
  auto old = s.commit({4, 1}, 1);
  CHECK(old.code == Errc::failed_precondition);
  CHECK_THAT(old.text, Contains("every function below 21 is already resolved"));
  CHECK(s.value() == std::vector<int64_t>{20, 21});
}

TEST_CASE("parameter-server messages survive serialisation", "[actors][parameter_server]") {
  caf::actor_system_config cfg;
  add_cluster_types(cfg);
  add_parameter_server_types(cfg);
  caf::actor_system sys(cfg);
  PsStageMsg out{{7, 3}, 5, {{11, 2, 1}, UpdateOp::APPLY_SGD, Tensor::from_vector<float>({1.5f, -2.0f}), {0.125}}};
  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  REQUIRE_FALSE(sink(out));
  PsStageMsg in;
  caf::binary_deserializer source(sys, bytes);
  REQUIRE_FALSE(source(in));
  CHECK(in.attempt == out.attempt);
  CHECK(in.sequence == 5);
  CHECK(in.update.key == out.update.key);
  CHECK(in.update.op == UpdateOp::APPLY_SGD);
  CHECK(in.update.value.to_vector<float>() == std::vector<float>{1.5f, -2.0f});
  CHECK(in.update.hyper == std::vector<double>{0.125});
}

TEST_CASE("every runtime registers the parameter-server messages for remote sends", "[actors][parameter_server]") {
  Runtime rt;
  auto& sys = rt.impl().system();
  // A message of an unregistered type serialises to nothing (CAF-NOTES, pitfall 2).
  auto out = caf::make_message(PsCommitMsg{{7, 3}, 2, 5}, PsCommitReply{true, 4});
  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  REQUIRE_FALSE(sink(out));
  REQUIRE_FALSE(bytes.empty());
  caf::message in;
  caf::binary_deserializer source(sys, bytes);
  REQUIRE_FALSE(source(in));
  REQUIRE(in.match_elements<PsCommitMsg, PsCommitReply>());
  CHECK(in.get_as<PsCommitMsg>(0).attempt == AttemptId{7, 3});
  CHECK(in.get_as<PsCommitMsg>(0).resolved_below == 5);
  CHECK(in.get_as<PsCommitReply>(1).applied == 4);
}

// -- interleavings --------------------------------------------------------------------

namespace {

/// What one request of a scripted function expects: drivers' own stages and
/// aborts succeed; zombies' stages may land before their abort (then the
/// abort discards them) or after it (refused); strays' commits are refused.
enum class Role { DRIVER, ZOMBIE, STRAY };

struct Script;

/// One request (or the start of another script) within a step.
struct Item {
  int server = 0;
  Role role = Role::DRIVER;
  std::variant<PsStageMsg, PsCommitMsg, PsAbortMsg, PsStatsMsg, std::shared_ptr<Script>> what;
};

/// Steps run one after the other; the items of a step run concurrently.
struct Script {
  std::vector<std::vector<Item>> steps;
};

/// What the scripts observed, shared by every actor of one run.
struct Observations {
  std::mutex mutex;
  int zombie_stages_held = 0; ///< zombie stages that arrived before their abort
  int pending = 0;
  Completion done;
  std::vector<std::string> violations;
  /// Per server, per function: how many commits applied and how many answered already_committed.
  std::map<uint64_t, int> applied[2];
  std::map<uint64_t, int> repeated[2];

  void violation(std::string text) {
    std::lock_guard guard(mutex);
    violations.push_back(std::move(text));
  }
  void finish_one() {
    std::lock_guard guard(mutex);
    if (--pending == 0)
      done.set();
  }
};

void run_script(caf::actor_system& sys, std::shared_ptr<Script> script, std::vector<caf::actor> servers,
                std::shared_ptr<Observations> seen);

/// Runs step `index` of `script` inside `self`, then the next one.
void run_step(caf::event_based_actor* self, std::shared_ptr<Script> script, size_t index,
              std::vector<caf::actor> servers, std::shared_ptr<Observations> seen) {
  if (index == script->steps.size()) {
    seen->finish_one();
    return;
  }
  auto left = std::make_shared<size_t>(script->steps[index].size());
  auto next = [self, script, index, servers, seen, left] {
    if (--*left == 0)
      run_step(self, script, index + 1, servers, seen);
  };
  if (*left == 0) {
    run_step(self, script, index + 1, servers, seen);
    return;
  }
  for (const Item& item : script->steps[index]) {
    const caf::actor& ps = servers[item.server];
    const int server = item.server;
    const Role role = item.role;
    if (auto* stage = std::get_if<PsStageMsg>(&item.what)) {
      const auto id = stage->attempt;
      call<Void>(self, ps, *stage, [=](Answer<Void> answer) {
        if (role == Role::DRIVER && !answer.ok())
          seen->violation("stage of " + to_string(id) + " failed: " + answer.text);
        if (role == Role::ZOMBIE && answer.ok()) {
          std::lock_guard guard(seen->mutex);
          ++seen->zombie_stages_held;
        }
        if (role == Role::ZOMBIE && !answer.ok() && answer.code != Errc::failed_precondition)
          seen->violation("zombie stage of " + to_string(id) + " failed oddly: " + answer.text);
        next();
      });
    } else if (auto* commit = std::get_if<PsCommitMsg>(&item.what)) {
      const auto msg = *commit;
      call<PsCommitReply>(self, ps, msg, [=](Answer<PsCommitReply> answer) {
        if (role == Role::STRAY) {
          if (answer.ok() || answer.code != Errc::failed_precondition)
            seen->violation("stray commit of " + to_string(msg.attempt) + " was not refused: " + answer.text);
        } else if (!answer.ok()) {
          seen->violation("commit of " + to_string(msg.attempt) + " failed: " + answer.text);
        } else {
          std::lock_guard guard(seen->mutex);
          if (answer.value->already_committed)
            ++seen->repeated[server][msg.attempt.function];
          else if (answer.value->applied != msg.staged_updates)
            seen->violations.push_back("commit of " + to_string(msg.attempt) + " applied "
                                       + std::to_string(answer.value->applied));
          else
            ++seen->applied[server][msg.attempt.function];
        }
        next();
      });
    } else if (auto* abort = std::get_if<PsAbortMsg>(&item.what)) {
      const auto id = abort->attempt;
      call<uint32_t>(self, ps, *abort, [=](Answer<uint32_t> answer) {
        if (!answer.ok())
          seen->violation("abort of " + to_string(id) + " failed: " + answer.text);
        next();
      });
    } else if (std::holds_alternative<PsStatsMsg>(item.what)) {
      // A round trip that only lets time pass, so that a zombie's stages race with the abort.
      call<PsStats>(self, ps, PsStatsMsg{}, [=](Answer<PsStats>) { next(); });
    } else {
      {
        std::lock_guard guard(seen->mutex);
        ++seen->pending;
      }
      run_script(self->system(), std::get<std::shared_ptr<Script>>(item.what), servers, seen);
      next();
    }
  }
}

void run_script(caf::actor_system& sys, std::shared_ptr<Script> script, std::vector<caf::actor> servers,
                std::shared_ptr<Observations> seen) {
  sys.spawn([script, servers, seen](caf::event_based_actor* self) { run_step(self, script, 0, servers, seen); });
}

const ShardKey v_on[2] = {{1, 0}, {1, 1}}; // variable 1's two shards, one per server

/// What a run must end with.
struct Expectation {
  std::vector<int64_t> value[2] = {{0, 0}, {0, 0}};
  std::map<uint64_t, int> applied;  ///< functions that commit (once at each server)
  std::map<uint64_t, int> repeated; ///< functions whose commit is sent twice
};

/// A random life of function `f`: attempts that die part-way (some living on
/// as zombies, some with a stray late commit), then a last attempt that
/// commits (sometimes twice) or is abandoned. Function 1 always has every
/// kind of trouble and commits twice; function 2 is always abandoned.
std::shared_ptr<Script> random_function(uint64_t f, std::mt19937_64& rng, Expectation& expected) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto script = std::make_shared<Script>();
  const uint32_t attempts = f == 1 ? 3 : f == 2 ? 2 : 1 + static_cast<uint32_t>(pick(3));
  for (uint32_t a = 1; a <= attempts; ++a) {
    const AttemptId id{f, a};
    const bool last = a == attempts;
    int stages[2] = {pick(3), pick(3)};
    int sent[2] = {stages[0], stages[1]};
    if (!last)
      sent[0] = pick(stages[0] + 1), sent[1] = pick(stages[1] + 1); // dies part-way
    auto delta = [&](int s, int j) {
      return std::vector<int64_t>{static_cast<int64_t>(f * 1000 + a * 100 + s * 10 + j),
                                  -static_cast<int64_t>(f * 7 + a * 3 + j)};
    };
    for (int j = 0; j < std::max(sent[0], sent[1]); ++j) {
      std::vector<Item> step;
      for (int s = 0; s < 2; ++s)
        if (j < sent[s])
          step.push_back({s, Role::DRIVER, PsStageMsg{id, static_cast<uint32_t>(j), add_update(v_on[s], delta(s, j))}});
      script->steps.push_back(std::move(step));
    }
    std::vector<Item> end;
    if (!last) {
      if (pick(2) == 0 || f == 1) { // presumed dead, but runs on: its remaining stages race with the abort
        auto zombie = std::make_shared<Script>();
        for (int s = 0; s < 2; ++s)
          for (int j = sent[s]; j < stages[s]; ++j)
            zombie->steps.push_back(
              {{s, Role::ZOMBIE, PsStageMsg{id, static_cast<uint32_t>(j), add_update(v_on[s], delta(s, j))}}});
        script->steps.push_back({{0, Role::DRIVER, zombie}});
        for (int wait = pick(4); wait > 0; --wait)
          script->steps.push_back({{pick(2), Role::DRIVER, PsStatsMsg{}}});
      }
      for (int s = 0; s < 2; ++s)
        end.push_back({s, Role::DRIVER, PsAbortMsg{id, 0}});
      script->steps.push_back(std::move(end));
      if (pick(2) == 0 || f == 1) { // a late duplicate of a commit nobody should have sent
        auto stray = std::make_shared<Script>();
        stray->steps.push_back({{0, Role::STRAY, PsCommitMsg{id, static_cast<uint32_t>(sent[0]), 0}},
                                {1, Role::STRAY, PsCommitMsg{id, static_cast<uint32_t>(sent[1]), 0}}});
        script->steps.push_back({{0, Role::DRIVER, stray}});
      }
      continue;
    }
    const int ending = f == 1 ? 1 : f == 2 ? 2 : pick(3); // 0: commit, 1: commit twice, 2: abandon
    if (ending != 2)
      expected.applied[f] = 1;
    if (ending == 1)
      expected.repeated[f] = 1;
    for (int s = 0; s < 2; ++s) {
      if (ending == 2) {
        end.push_back({s, Role::DRIVER, PsAbortMsg{id, 0}});
        continue;
      }
      for (int times = 0; times < (ending == 1 ? 2 : 1); ++times)
        end.push_back({s, Role::DRIVER, PsCommitMsg{id, static_cast<uint32_t>(sent[s]), 0}});
      for (int j = 0; j < sent[s]; ++j)
        for (size_t e = 0; e < 2; ++e)
          expected.value[s][e] += delta(s, j)[e];
    }
    script->steps.push_back(std::move(end));
  }
  return script;
}

} // namespace

TEST_CASE("interleaved attempts, aborts and duplicate commits on two servers apply each committed function once",
          "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = testing::make_runtime(mode, 1);
  std::vector<caf::actor> servers{spawn_ps(*rt, "ps:0"), spawn_ps(*rt, "ps:1")};
  for (int s = 0; s < 2; ++s)
    REQUIRE(ask<Void>(*rt, servers[s], PsCreateMsg{v_on[s], "v", ints({0, 0})}).ok());

  std::mt19937_64 rng(mode.seed * 7919 + (mode.simulate ? 1 : 2));
  Expectation expected;
  constexpr uint64_t functions = 8;
  std::vector<std::shared_ptr<Script>> scripts;
  for (uint64_t f = 1; f <= functions; ++f)
    scripts.push_back(random_function(f, rng, expected));

  auto seen = std::make_shared<Observations>();
  seen->pending = static_cast<int>(functions);
  for (auto& script : scripts)
    run_script(rt->impl().system(), script, servers, seen);
  rt->impl().wait(seen->done, "the scripted functions");

  CHECK(seen->violations == std::vector<std::string>{});
  for (int s = 0; s < 2; ++s) {
    CAPTURE(s);
    CHECK(read_committed(*rt, servers[s], v_on[s]) == expected.value[s]);
    CHECK(seen->applied[s] == expected.applied);   // each committed function once, no other
    CHECK(seen->repeated[s] == expected.repeated); // a repeated commit is answered, not applied
    CHECK(stats_of(*rt, servers[s]).staged_updates == 0); // aborts and commits left nothing behind
  }
}

// -- gather -------------------------------------------------------------------------

TEST_CASE("a parameter server gathers rows of a shard in the order asked", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  const ShardKey table{5, 0};
  REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{table, "table", ints({0, 1, 10, 11, 20, 21}).reshape(Shape{3, 2})}).ok());
  auto rows = ask<Tensor>(*s.rt, s.ps, PsGatherMsg{table, ints({2, 0, 2}), {}});
  REQUIRE(rows.ok());
  CHECK(rows.value->shape() == Shape{3, 2});
  CHECK(rows.value->to_vector<int64_t>() == std::vector<int64_t>{20, 21, 0, 1, 20, 21});

  // Read-your-writes: an attempt's gather sees its own staged update.
  REQUIRE(ask<Void>(*s.rt, s.ps,
                    PsStageMsg{{4, 1}, 0, {table, UpdateOp::ASSIGN_ADD, Tensor::full(Shape{3, 2}, 1.0, DType::int64), {}}})
            .ok());
  auto staged = ask<Tensor>(*s.rt, s.ps, PsGatherMsg{table, ints({1}), {4, 1}});
  REQUIRE(staged.ok());
  CHECK(staged.value->to_vector<int64_t>() == std::vector<int64_t>{11, 12});
  auto committed = ask<Tensor>(*s.rt, s.ps, PsGatherMsg{table, ints({1}), {}});
  REQUIRE(committed.ok());
  CHECK(committed.value->to_vector<int64_t>() == std::vector<int64_t>{10, 11});

  auto outside = ask<Tensor>(*s.rt, s.ps, PsGatherMsg{table, ints({1, 3}), {}});
  CHECK(outside.code == Errc::out_of_range);
  CHECK_THAT(outside.text, Contains("variable 'table'") && Contains("row 3") && Contains("3 rows"));
  auto wrong_ids = ask<Tensor>(*s.rt, s.ps, PsGatherMsg{table, Tensor::from_vector<int32_t>({1}), {}});
  CHECK(wrong_ids.code == Errc::invalid_argument);
  CHECK_THAT(wrong_ids.text, Contains("int64 vector"));
  auto missing = ask<Tensor>(*s.rt, s.ps, PsGatherMsg{{9, 0}, ints({0}), {}});
  CHECK(missing.code == Errc::not_found);
}

TEST_CASE("the gather message survives serialisation in a message", "[actors][parameter_server]") {
  Runtime rt;
  auto& sys = rt.impl().system();
  // Through caf::message: an unregistered type would serialise to nothing.
  auto out = caf::make_message(PsGatherMsg{{7, 2, 0}, ints({4, 1, 4}), {9, 3}});
  std::vector<char> bytes;
  caf::binary_serializer sink(sys, bytes);
  REQUIRE_FALSE(sink(out));
  caf::message in;
  caf::binary_deserializer source(sys, bytes);
  REQUIRE_FALSE(source(in));
  REQUIRE(in.match_elements<PsGatherMsg>());
  const auto& msg = in.get_as<PsGatherMsg>(0);
  CHECK(msg.key == ShardKey{7, 2, 0});
  CHECK(msg.attempt == AttemptId{9, 3});
  CHECK(msg.rows.to_vector<int64_t>() == std::vector<int64_t>{4, 1, 4});
}

// -- optimizer updates on the server ------------------------------------------------------

namespace {

/// The Fashion-MNIST sample's optimizer state for one variable, applied
/// locally. The sample (samples/train_fashion_mnist/optimizer.cpp) is an
/// executable, so this repeats its Optimizer::apply: the same troupe
/// apply_momentum / apply_adam calls, with Keras' Adam defaults and a step
/// that counts updates from 1.
struct LocalOptimizer {
  Tensor var, first, second;
  int64_t iterations = 0;

  void momentum(const Tensor& grad, double learning_rate, double momentum) {
    apply_momentum(var, first, grad, {.learning_rate = learning_rate, .momentum = momentum});
  }
  void adam(const Tensor& grad, double learning_rate) {
    const int64_t step = iterations + 1;
    apply_adam(var, first, second, grad, step, {.learning_rate = learning_rate});
    iterations = step;
  }
};

/// The hyperparameters the sample's Adam runs with (AdamOptions' defaults), as the worker sends them.
std::vector<double> adam_hyper(double learning_rate) {
  const AdamOptions defaults;
  return {learning_rate, defaults.beta_1, defaults.beta_2, defaults.epsilon};
}

Tensor read_key(Runtime& rt, const caf::actor& ps, ShardKey key, AttemptId attempt = {}) {
  auto answer = ask<Tensor>(rt, ps, PsReadMsg{key, attempt});
  REQUIRE(answer.ok());
  return *answer.value;
}

/// Bit for bit: the same dtype, shape and bytes.
void check_same_bits(const Tensor& got, const Tensor& want) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  CHECK(got.to_vector<double>() == want.to_vector<double>());
}

} // namespace

TEST_CASE("momentum and Adam applied on the server match the sample's optimizer bit for bit",
          "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  for (const DType dtype : {DType::float32, DType::float64}) {
    CAPTURE(name(dtype));
    RandomGenerator rng{dtype == DType::float32 ? 17u : 18u};
    const uint64_t base = dtype == DType::float32 ? 10 : 20;
    const ShardKey mkey{base, 0}, akey{base + 1, 1};
    const Tensor initial = rng.uniform(Shape{5, 7}, -1, 1, dtype);
    REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{mkey, "dense/kernel", initial}).ok());
    REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{akey, "dense/bias", initial}).ok());
    LocalOptimizer m{initial, Tensor::zeros(initial.shape(), dtype), {}};
    LocalOptimizer a{initial, Tensor::zeros(initial.shape(), dtype), Tensor::zeros(initial.shape(), dtype)};
    for (int step = 1; step <= 6; ++step) {
      CAPTURE(step);
      const Tensor grad = rng.normal(initial.shape(), 0, 1, dtype);
      const double lr = 0.1 / step; // a decaying schedule: the worker sends each step's rate
      m.momentum(grad, lr, 0.9);
      a.adam(grad, lr);
      const ShardUpdate mu{mkey, UpdateOp::APPLY_MOMENTUM, grad, {lr, 0.9}};
      const ShardUpdate au{akey, UpdateOp::APPLY_ADAM, grad, adam_hyper(lr)};
      if (step % 2 == 1) { // immediate, and staged in a committed attempt: the same arithmetic
        REQUIRE(ask<Void>(*s.rt, s.ps, PsApplyMsg{mu}).ok());
        REQUIRE(ask<Void>(*s.rt, s.ps, PsApplyMsg{au}).ok());
      } else {
        const AttemptId id{base + static_cast<uint64_t>(step), 1};
        REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{id, 0, mu}).ok());
        REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{id, 1, au}).ok());
        REQUIRE(s.commit(id, 2).ok());
      }
      check_same_bits(read_key(*s.rt, s.ps, mkey), m.var);
      check_same_bits(read_key(*s.rt, s.ps, {mkey.variable, 0, momentum_slot}), m.first);
      check_same_bits(read_key(*s.rt, s.ps, akey), a.var);
      check_same_bits(read_key(*s.rt, s.ps, {akey.variable, 1, adam_m_slot}), a.first);
      check_same_bits(read_key(*s.rt, s.ps, {akey.variable, 1, adam_v_slot}), a.second);
      CHECK(read_key(*s.rt, s.ps, {akey.variable, 1, adam_iterations_slot}).item<int64_t>() == step);
    }
    CHECK_FALSE(m.var.to_vector<double>() == initial.to_vector<double>()); // the steps did move it
  }
}

TEST_CASE("staged optimizer updates change the variable and its slots only when their attempt commits",
          "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  const ShardKey mkey{30, 0}, akey{31, 0};
  const ShardKey accum_key{30, 0, momentum_slot};
  const ShardKey m_key{31, 0, adam_m_slot}, v_key{31, 0, adam_v_slot}, count_key{31, 0, adam_iterations_slot};
  const Tensor initial = Tensor::from_vector<float>({0.5f, -1.0f, 2.0f});
  const Tensor grad = Tensor::from_vector<float>({1.0f, 0.25f, -3.0f});
  REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{mkey, "w", initial}).ok());
  REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{akey, "b", initial}).ok());
  // Momentum's slot exists (one applied update); Adam's do not yet.
  LocalOptimizer m{initial, Tensor::zeros(Shape{3}, DType::float32), {}};
  m.momentum(grad, 0.5, 0.5);
  REQUIRE(ask<Void>(*s.rt, s.ps, PsApplyMsg{{mkey, UpdateOp::APPLY_MOMENTUM, grad, {0.5, 0.5}}}).ok());
  const Tensor var_before = read_key(*s.rt, s.ps, mkey);
  const Tensor accum_before = read_key(*s.rt, s.ps, accum_key);

  // Attempt 1 stages two momentum steps and an Adam step, reads its own
  // writes (slots included), then is aborted: nothing of it remains.
  const AttemptId dead{1, 1};
  REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{dead, 0, {mkey, UpdateOp::APPLY_MOMENTUM, grad, {0.5, 0.5}}}).ok());
  REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{dead, 1, {mkey, UpdateOp::APPLY_MOMENTUM, grad, {0.5, 0.5}}}).ok());
  REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{dead, 2, {akey, UpdateOp::APPLY_ADAM, grad, adam_hyper(0.01)}}).ok());
  LocalOptimizer own = m;
  own.momentum(grad, 0.5, 0.5);
  own.momentum(grad, 0.5, 0.5);
  check_same_bits(read_key(*s.rt, s.ps, accum_key, dead), own.first);
  check_same_bits(read_key(*s.rt, s.ps, mkey, dead), own.var);
  CHECK(read_key(*s.rt, s.ps, count_key, dead).item<int64_t>() == 1);
  auto aborted = s.abort(dead);
  REQUIRE(aborted.ok());
  CHECK(*aborted.value == 3);
  check_same_bits(read_key(*s.rt, s.ps, mkey), var_before);
  check_same_bits(read_key(*s.rt, s.ps, accum_key), accum_before);
  check_same_bits(read_key(*s.rt, s.ps, akey), initial);
  for (const ShardKey& key : {m_key, v_key, count_key}) {
    auto slot = ask<Tensor>(*s.rt, s.ps, PsReadMsg{key, {}});
    CHECK(slot.code == Errc::not_found); // an aborted attempt creates no slot either
  }

  // Attempt 2 stages the same and commits: applied once, in order, even when
  // the commit is repeated.
  const AttemptId live{1, 2};
  REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{live, 0, {mkey, UpdateOp::APPLY_MOMENTUM, grad, {0.5, 0.5}}}).ok());
  REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{live, 1, {mkey, UpdateOp::APPLY_MOMENTUM, grad, {0.5, 0.5}}}).ok());
  REQUIRE(ask<Void>(*s.rt, s.ps, PsStageMsg{live, 2, {akey, UpdateOp::APPLY_ADAM, grad, adam_hyper(0.01)}}).ok());
  REQUIRE(s.commit(live, 3).ok());
  auto again = s.commit(live, 3);
  REQUIRE(again.ok());
  CHECK(again.value->already_committed);
  LocalOptimizer a{initial, Tensor::zeros(Shape{3}, DType::float32), Tensor::zeros(Shape{3}, DType::float32)};
  a.adam(grad, 0.01);
  check_same_bits(read_key(*s.rt, s.ps, mkey), own.var);
  check_same_bits(read_key(*s.rt, s.ps, accum_key), own.first);
  check_same_bits(read_key(*s.rt, s.ps, akey), a.var);
  check_same_bits(read_key(*s.rt, s.ps, m_key), a.first);
  check_same_bits(read_key(*s.rt, s.ps, v_key), a.second);
  CHECK(read_key(*s.rt, s.ps, count_key).item<int64_t>() == 1);
}

TEST_CASE("optimizer updates name the variable, the dtype and the shape they refuse", "[actors][parameter_server]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  OneServer s(mode);
  const ShardKey half{40, 0}, f{41, 0};
  REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{half, "emb", Tensor::zeros(Shape{2}, DType::float16)}).ok());
  REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{f, "dense/kernel", Tensor::zeros(Shape{2, 2}, DType::float32)}).ok());

  auto on_half = ask<Void>(*s.rt, s.ps,
                           PsApplyMsg{{half, UpdateOp::APPLY_ADAM, Tensor::zeros(Shape{2}, DType::float16),
                                       adam_hyper(0.1)}});
  CHECK(on_half.code == Errc::invalid_argument);
  CHECK_THAT(on_half.text, Contains("variable 'emb'") && Contains("float16") && Contains("apply_adam"));
  auto on_ints = s.stage({1, 1}, 0, {1, 1}); // w0 is int64: staged momentum on it
  REQUIRE(on_ints.ok());
  auto momentum_on_ints =
    ask<Void>(*s.rt, s.ps, PsStageMsg{{1, 1}, 1, {w0, UpdateOp::APPLY_MOMENTUM, ints({1, 1}), {0.1, 0.9}}});
  CHECK(momentum_on_ints.code == Errc::invalid_argument);
  CHECK_THAT(momentum_on_ints.text, Contains("variable 'w'") && Contains("int64") && Contains("apply_momentum"));

  auto wrong_shape = ask<Void>(*s.rt, s.ps,
                               PsApplyMsg{{f, UpdateOp::APPLY_MOMENTUM, Tensor::zeros(Shape{4}, DType::float32),
                                           {0.1, 0.9}}});
  CHECK(wrong_shape.code == Errc::shape_mismatch);
  CHECK_THAT(wrong_shape.text, Contains("variable 'dense/kernel'") && Contains("(4,)") && Contains("(2, 2)"));
  auto wrong_dtype = ask<Void>(*s.rt, s.ps,
                               PsApplyMsg{{f, UpdateOp::APPLY_ADAM, Tensor::zeros(Shape{2, 2}, DType::float64),
                                           adam_hyper(0.1)}});
  CHECK(wrong_dtype.code == Errc::dtype_mismatch);
  CHECK_THAT(wrong_dtype.text, Contains("variable 'dense/kernel'") && Contains("float64"));

  const Tensor grad = Tensor::ones(Shape{2, 2}, DType::float32);
  auto few = ask<Void>(*s.rt, s.ps, PsApplyMsg{{f, UpdateOp::APPLY_ADAM, grad, {0.1}}});
  CHECK(few.code == Errc::invalid_argument);
  CHECK_THAT(few.text, Contains("exactly 4 hyperparameters"));
  auto bad_beta = ask<Void>(*s.rt, s.ps, PsApplyMsg{{f, UpdateOp::APPLY_ADAM, grad, {0.1, 1.0, 0.999, 1e-7}}});
  CHECK(bad_beta.code == Errc::invalid_argument);
  auto on_slot = ask<Void>(*s.rt, s.ps, PsApplyMsg{{{41, 0, 1}, UpdateOp::APPLY_MOMENTUM, grad, {0.1, 0.9}}});
  CHECK(on_slot.code == Errc::not_found); // slots are not addressed directly before they exist

  // A slot created explicitly (a checkpoint restore) must fit its variable.
  const Tensor three = Tensor::zeros(Shape{3}, DType::float32);
  REQUIRE(ask<Void>(*s.rt, s.ps, PsCreateMsg{{41, 0, momentum_slot}, "dense/kernel", three}).ok());
  auto misfit = ask<Void>(*s.rt, s.ps, PsApplyMsg{{f, UpdateOp::APPLY_MOMENTUM, grad, {0.1, 0.9}}});
  CHECK(misfit.code == Errc::invalid_argument);
  CHECK_THAT(misfit.text, Contains("variable 'dense/kernel'") && Contains("slot 1 is float32 with shape (3,)"));
  auto on_created_slot =
    ask<Void>(*s.rt, s.ps, PsApplyMsg{{{41, 0, 1}, UpdateOp::APPLY_ADAM, three, adam_hyper(0.1)}});
  CHECK(on_created_slot.code == Errc::invalid_argument);
  CHECK_THAT(on_created_slot.text, Contains("targets the variable (slot 0)"));

  CHECK(read_key(*s.rt, s.ps, f).to_vector<float>() == std::vector<float>(4, 0.0f)); // nothing applied
  CHECK(s.value() == std::vector<int64_t>{10, 20});
}

TEST_CASE("a ShardUpdate with too many hyperparameters is refused on load", "[actors][parameter_server]") {
  caf::actor_system_config cfg;
  add_cluster_types(cfg);
  add_parameter_server_types(cfg);
  caf::actor_system sys(cfg);
  ShardUpdate out{{1, 0, 0}, UpdateOp::APPLY_ADAM, Tensor::from_vector<float>({1.0f}), {0.1, 0.9, 0.999, 1e-7}};
  for (const std::size_t count : {max_update_hyper, max_update_hyper + 1}) {
    CAPTURE(count);
    out.hyper.resize(count, 0.5);
    std::vector<char> bytes;
    caf::binary_serializer sink(sys, bytes);
    REQUIRE_FALSE(sink(out));
    ShardUpdate in;
    caf::binary_deserializer source(sys, bytes);
    auto err = source(in);
    if (count <= max_update_hyper) {
      CHECK_FALSE(err);
      CHECK(in.op == UpdateOp::APPLY_ADAM);
      CHECK(in.hyper.size() == count);
    } else {
      CHECK(err);
      CHECK_THAT(sys.render(err), Contains("17 hyperparameters"));
    }
  }
}

TEST_CASE("a ShardUpdate whose bytes load an infinite hyperparameter is refused, not sent on to hang",
          "[actors][parameter_server]") {
  // fuzz/corpus/messages/regression-infinite-hyper without its type byte:
  // CAF 0.17's pack754 never returns for an infinite double, so whoever
  // serialized this update again would spin forever.
  const unsigned char loaded[] = {
    0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00};
  caf::actor_system_config cfg;
  add_cluster_types(cfg);
  add_parameter_server_types(cfg);
  caf::actor_system sys(cfg);
  ShardUpdate update;
  caf::binary_deserializer source(sys, reinterpret_cast<const char*>(loaded), sizeof loaded);
  const auto error = source(update);
  REQUIRE(error);
  CHECK_THAT(sys.render(error), Catch::Contains("a ShardUpdate carries an infinite hyperparameter"));
}

TEST_CASE("an update with a hyperparameter that is not finite fails where it is made, naming it",
          "[actors][parameter_server]") {
  CHECK_THAT(check_update_hyper("ShardedVariable 'w': assign_sub", {0.5, std::numeric_limits<double>::infinity()}),
             Catch::Contains("ShardedVariable 'w': assign_sub: hyperparameter 1 is inf"));
  CHECK(check_update_hyper("ShardedVariable 'w': assign_sub", {0.5}).empty());
}

#include "scenarios.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include <unistd.h>

#include <troupe/troupe.hpp>

namespace troupe_sim {

namespace {

using namespace troupe;
using namespace std::chrono_literals;
using Sums = std::vector<float>;

bool broken_notices = false;
bool show_tasks = false;

/// Frames take 50-500 µs: a run spreads over milliseconds of virtual time,
/// where the timed faults land.
void spread(SimulatedCluster& sim) {
  sim.faults().delay(50us, 500us);
  if (broken_notices)
    sim.faults().lose_failure_notices();
}

std::chrono::nanoseconds draw_time(std::mt19937_64& rng, std::chrono::nanoseconds max) {
  return std::chrono::nanoseconds{std::uniform_int_distribution<int64_t>(0, max.count())(rng)};
}

int draw(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

[[noreturn]] void broken(uint64_t seed, const std::string& invariant, const std::string& detail) {
  fail(Errc::internal, "seed " + std::to_string(seed) + ": invariant \"" + invariant + "\" broken: " + detail);
}

/// How many floats each step all-reduces: small (direct exchange), mid
/// (halving-doubling) or large (ring, in pieces) by seed, so that every
/// algorithm meets the faults.
int elements_for(uint64_t seed) {
  static constexpr int sizes[] = {3, 3000, 90'000};
  return sizes[seed % 3];
}

/// A user's training-style program: `steps` all-reduces of `elements`
/// values that depend on the replica and the step; every task returns the
/// sums' bits.
Sums all_reduce_steps(Runtime& rt, int steps, int elements) {
  MultiWorkerMirroredStrategy strategy(rt);
  Sums out;
  for (int step = 0; step < steps; ++step) {
    auto values = strategy.experimental_distribute_values_from_function([=](const ValueContext& ctx) {
      const auto id = static_cast<float>(ctx.replica_id_in_sync_group);
      std::vector<float> v(static_cast<size_t>(elements));
      for (int i = 0; i < elements; ++i)
        v[static_cast<size_t>(i)] = 0.1f * (id + 1) + 1.0f / (id + 3 + static_cast<float>(step + i % 7));
      return Tensor::from_vector<float>(v);
    });
    auto sums = strategy.run([](const Tensor& v) { return get_replica_context().all_reduce(ReduceOp::SUM, v); },
                             values);
    for (const auto& t : strategy.experimental_local_results(sums)) {
      // Two values of each replica's result: every bit of it would make the
      // comparison the slow part.
      const auto all = t.to_vector<float>();
      out.push_back(all.front());
      out.push_back(all.back());
      float sum = 0;
      for (float x : all)
        sum += x;
      out.push_back(sum);
    }
  }
  return out;
}

bool same_bits(const Sums& a, const Sums& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// The fault-free result of `program` on a cluster of `shape` (its seed
/// and faults aside), computed once per key.
template <class Program>
const Sums& reference(const std::string& key, SimulatedClusterOptions shape, Program program) {
  static std::map<std::string, Sums> cache;
  auto i = cache.find(key);
  if (i != cache.end())
    return i->second;
  shape.seed = 0;
  SimulatedCluster sim(shape);
  auto results = sim.run(program);
  if (!results.at(0).ok())
    fail(Errc::internal, "the fault-free run of " + key + " failed: " + results[0].error->what());
  return cache.emplace(key, *results[0].value).first->second;
}

/// With --show: what a task's function gave.
template <class Result>
void show(uint64_t seed, const Result& r) {
  if (show_tasks)
    std::printf("  seed %llu %s: %s\n", static_cast<unsigned long long>(seed), r.task.c_str(),
                r.killed ? "killed" : r.ok() ? "returned" : r.error->what());
}

/// The invariants of a run with faults: every task that was not killed
/// returned the fault-free bits, or (where faults may end the job, `may_fail`)
/// a named troupe Error of an expected kind. A wrong value is never allowed.
template <class Results>
std::string check_outcome(uint64_t seed, const Results& results, const Sums& expected, bool may_fail,
                          const std::set<Errc>& allowed = {Errc::peer_lost, Errc::cancelled}) {
  std::set<std::string> failures;
  for (const auto& r : results) {
    show(seed, r);
    if (r.killed)
      continue;
    if (r.ok()) {
      if (!same_bits(*r.value, expected))
        broken(seed, "results equal the fault-free run's", r.task + " returned other bits");
      continue;
    }
    const std::string why = r.error->what();
    if (!may_fail)
      broken(seed, "no fault here may fail the job", r.task + " failed: " + why);
    if (allowed.count(r.error->code()) == 0)
      broken(seed, "a survivor gets a named error of the fault", r.task + " failed with "
                                                                   + std::string(name(r.error->code())) + ": " + why);
    failures.insert(std::string(name(r.error->code())));
  }
  if (failures.empty())
    return "every task returned the fault-free bits";
  std::string label = "tasks failed with";
  for (const auto& f : failures)
    label += " " + f;
  return label;
}

Outcome outcome(const SimulatedCluster& sim, std::string label) {
  return {std::move(label), sim.steps(), std::chrono::duration<double>(sim.virtual_time()).count(),
          sim.network_counts().frames, sim.network_counts().messages};
}

// -- the scenarios ------------------------------------------------------------

Outcome mwms_kill(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .workers = 3, .devices_per_worker = 1 + static_cast<int>(seed / 3 % 2),
                        .deadline = 10s});
  spread(sim);
  const int victim = draw(sim.random(), 0, 2);
  sim.faults().kill("worker:" + std::to_string(victim), draw_time(sim.random(), 4ms));
  const int devices = 1 + static_cast<int>(seed / 3 % 2);
  const int n = elements_for(seed);
  auto program = [n](Runtime& rt) { return all_reduce_steps(rt, 3, n); };
  const auto& expected = reference("3x" + std::to_string(devices) + "x" + std::to_string(n),
                                   {.workers = 3, .devices_per_worker = devices}, program);
  auto label = check_outcome(seed, sim.run(program), expected, true);
  return outcome(sim, label);
}

Outcome mwms_freeze(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .workers = 3, .peer_timeout = 4s, .deadline = 30s});
  spread(sim);
  const auto length = draw_time(sim.random(), 8s);
  sim.faults().freeze("worker:" + std::to_string(draw(sim.random(), 0, 2)), draw_time(sim.random(), 4ms), length);
  const int n = elements_for(seed);
  auto program = [n](Runtime& rt) { return all_reduce_steps(rt, 3, n); };
  const auto& expected = reference("3x1x" + std::to_string(n), {.workers = 3, .devices_per_worker = 1}, program);
  // A freeze within the peer timeout only delays; past it the others count
  // the frozen task lost (and it them).
  auto label = check_outcome(seed, sim.run(program), expected, length > 4s);
  return outcome(sim, (length > 4s ? "past the peer timeout: " : "within the peer timeout: ") + label);
}

Outcome mwms_partition_heals(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .workers = 4, .peer_timeout = 4s, .deadline = 30s});
  spread(sim);
  std::vector<std::string> a, b;
  const int mask = draw(sim.random(), 1, 14); // a proper, nonempty side
  for (int w = 0; w < 4; ++w)
    ((mask >> w) & 1 ? a : b).push_back("worker:" + std::to_string(w));
  const auto at = draw_time(sim.random(), 4ms);
  sim.faults().partition(a, b, at, at + draw_time(sim.random(), 4s));
  const int n = elements_for(seed);
  auto program = [n](Runtime& rt) { return all_reduce_steps(rt, 3, n); };
  const auto& expected = reference("4x1x" + std::to_string(n), {.workers = 4, .devices_per_worker = 1}, program);
  auto label = check_outcome(seed, sim.run(program), expected, false);
  return outcome(sim, label);
}

Outcome mwms_duplicate_reorder(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .workers = 3, .devices_per_worker = 2, .deadline = 90s});
  spread(sim);
  sim.faults().duplicate(0.05).reorder(0.1);
  const int n = elements_for(seed);
  auto program = [n](Runtime& rt) { return all_reduce_steps(rt, 3, n); };
  const auto& expected = reference("3x2x" + std::to_string(n), {.workers = 3, .devices_per_worker = 2}, program);
  // Beyond what the data plane does: a protocol may refuse such frames
  // (with a named error), never sum them wrong or hang.
  auto label = check_outcome(seed, sim.run(program), expected, true,
                             {Errc::data_loss, Errc::internal, Errc::key_mismatch, Errc::timeout, Errc::cancelled,
                 Errc::peer_lost});
  return outcome(sim, label);
}

/// A replica of one worker throws in one step, before or after its
/// all-reduce: every task fails within a second of virtual time, far below
/// the collective timeout, and names that failure (the abort frames carry
/// it ahead of the failed task's exit). A protocol that lost the aborts
/// would leave the others with "it shut down", or waiting.
Outcome mwms_replica_error(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .workers = 3, .devices_per_worker = 2, .deadline = 1s});
  spread(sim);
  const int bad_worker = draw(sim.random(), 0, 2);
  const int bad_step = draw(sim.random(), 0, 2);
  const int bad_replica = draw(sim.random(), 0, 1);
  const bool after_collective = draw(sim.random(), 0, 1) == 1; // once the others have what they need of it
  auto results = sim.run([=](Runtime& rt) {
    MultiWorkerMirroredStrategy strategy(rt);
    for (int step = 0; step < 3; ++step)
      strategy.run([&] {
        auto& ctx = get_replica_context();
        const bool bad =
          rt.task_index() == bad_worker && step == bad_step && ctx.replica_id_in_sync_group() % 2 == bad_replica;
        if (bad && !after_collective)
          fail(Errc::invalid_argument, "the user's step failed");
        auto sum = ctx.all_reduce(ReduceOp::SUM, Tensor(1.0f));
        if (bad)
          fail(Errc::invalid_argument, "the user's step failed after its all-reduce");
        return sum;
      });
    return Sums{};
  });
  // Failing after the last collective, it leaves the others nothing to wait for.
  const bool others_may_finish = after_collective && bad_step == 2;
  for (const auto& r : results) {
    show(seed, r);
    if (r.ok()) {
      if (!others_may_finish || r.task == "worker:" + std::to_string(bad_worker))
        broken(seed, "a failed step fails every task that has a collective after it", r.task + " returned");
      continue;
    }
    // The cause travels in the abort frames, ahead of the failed task's exit.
    if (std::string(r.error->what()).find("the user's step failed") == std::string::npos)
      broken(seed, "every task's error names the step that failed", r.task + " failed with: " + r.error->what());
  }
  return outcome(sim, others_may_finish ? "the last step failed after its collective" : "every task failed");
}

/// Workers whose inputs differ in length end the pass together, every one
/// having summed the same batches, under frame delays.
Sums uneven_pass(Runtime& rt) {
  MultiWorkerMirroredStrategy strategy(rt);
  auto dist = strategy.distribute_datasets_from_function([](const InputContext& ic) {
    const int64_t n = 5 + 3 * ic.input_pipeline_id();
    return Dataset::range(n).map([](const Element& e) { return Element(e.tensor().cast(DType::float32)); })
      .batch(2);
  });
  Sums out;
  for (const auto& x : dist) {
    auto sums = strategy.run([](const Element& batch) {
      return get_replica_context().all_reduce(ReduceOp::SUM, reduce_sum(batch.tensor()));
    }, x);
    out.push_back(strategy.experimental_local_results(sums).at(0).item<float>());
  }
  return out;
}

Outcome uneven_dataset(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .workers = 3, .deadline = 30s});
  spread(sim);
  const auto& expected = reference("uneven", {.workers = 3, .devices_per_worker = 1}, uneven_pass);
  auto label = check_outcome(seed, sim.run(uneven_pass), expected, false);
  return outcome(sim, label);
}

/// A training loop that saves a checkpoint every other step into `dir`
/// (the chief's file), resuming from it when it exists.
Sums train(Runtime& rt, const std::string& path, int steps) {
  MultiWorkerMirroredStrategy strategy(rt);
  Variable w, step;
  {
    auto scope = strategy.scope();
    w = strategy.create_variable(Tensor::from_vector<float>({1.0f, -2.0f}),
                                 {.name = "w", .aggregation = VariableAggregation::MEAN});
    step = strategy.create_variable(Tensor(int64_t{0}),
                                    {.name = "step", .aggregation = VariableAggregation::ONLY_FIRST_REPLICA});
  }
  Checkpoint checkpoint({w, step});
  (void)checkpoint.restore_if_exists(path);
  while (step.read_value().item<int64_t>() < steps) {
    strategy.run([&] {
      auto& ctx = get_replica_context();
      const auto id = static_cast<float>(ctx.replica_id_in_sync_group());
      auto grad = w.read_value() * 0.5f + Tensor::from_vector<float>({0.25f * id, -0.125f});
      w.assign_sub(ctx.all_reduce(ReduceOp::MEAN, grad) * 0.1f);
      step.assign_add(Tensor(int64_t{1}));
      return Tensor(0.0f);
    });
    if (step.read_value().item<int64_t>() % 2 == 0)
      checkpoint.save(path);
  }
  return w.read_value().to_vector<float>();
}

/// A fresh folder for one run's checkpoints, removed with it.
class ScratchDir {
public:
  explicit ScratchDir(const std::string& name)
    : path_(std::filesystem::temp_directory_path() / ("troupe-sim-" + std::to_string(::getpid()) + "-" + name)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

/// A job of 6 steps is killed somewhere (a worker or the chief) and run
/// again from its last checkpoint: the model ends bit for bit as an
/// uninterrupted job's.
Outcome checkpoint_resume(uint64_t seed) {
  static const Sums expected = [] {
    ScratchDir scratch("reference");
    const auto path = scratch.file("ckpt");
    return reference("train", {.workers = 2}, [&](Runtime& rt) { return train(rt, path, 6); });
  }();
  ScratchDir scratch(std::to_string(seed));
  const auto path = scratch.file("ckpt");
  std::string killed;
  {
    SimulatedCluster sim({.seed = seed, .workers = 2, .deadline = 10s});
    spread(sim);
    sim.faults().kill("worker:" + std::to_string(draw(sim.random(), 0, 1)), draw_time(sim.random(), 6ms));
    killed = check_outcome(seed, sim.run([&](Runtime& rt) { return train(rt, path, 6); }), expected, true);
  }
  SimulatedCluster resumed({.seed = seed + 1, .workers = 2, .deadline = 10s});
  spread(resumed);
  check_outcome(seed, resumed.run([&](Runtime& rt) { return train(rt, path, 6); }), expected, false);
  return outcome(resumed, "first run: " + killed + "; the resumed run matched");
}

/// A TPU slice of 8 cores over two hosts, each host's program as a real
/// host runs it: 3 steps of a cross-host all-reduce.
Sums tpu_steps(Runtime& rt) {
  TPUClusterResolver resolver("", *rt.cluster_resolver());
  (void)initialize_tpu_system(rt, resolver);
  TPUStrategy tpu(rt, resolver);
  Sums out;
  for (int step = 0; step < 3; ++step) {
    auto sums = tpu.run([step] {
      auto& ctx = get_replica_context();
      const auto id = static_cast<float>(ctx.replica_id_in_sync_group());
      return ctx.all_reduce(ReduceOp::SUM, Tensor::from_vector<float>({id / 3.0f, 1.0f / (id + 1 + step)}));
    });
    for (const auto& t : tpu.experimental_local_results(sums))
      for (float x : t.to_vector<float>())
        out.push_back(x);
  }
  return out;
}

Outcome tpu_two_hosts(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .workers = 2, .logical_tpu_cores = 8, .deadline = 10s});
  spread(sim);
  // Half the seeds kill a host somewhere in the run.
  if (seed % 2 == 1)
    sim.faults().kill("worker:" + std::to_string(draw(sim.random(), 0, 1)), draw_time(sim.random(), 3ms));
  const auto& expected = reference("tpu", {.workers = 2, .logical_tpu_cores = 8}, tpu_steps);
  auto label = check_outcome(seed, sim.run(tpu_steps), expected, seed % 2 == 1);
  return outcome(sim, label);
}

} // namespace

// -- parameter-server scenarios --------------------------------------------------

/// A user's parameter-server program, the same on every task: the strategy,
/// the coordinator, a variable and a function; the chief schedules
/// `functions` functions, each adding 1 then 10 to the variable (a worker
/// lost between the two leaves a half-done attempt, which must not count)
/// and returning its id; the workers and ps tasks serve. The chief returns
/// the variable and the sum of the ids; the others what serve() returned.
/// `on_function` (when set) is told of every function this task runs.
std::vector<int64_t> ps_program(Runtime& rt, int functions, std::function<void()> on_function = {}) {
  ParameterServerStrategy strategy(rt);
  ClusterCoordinator coordinator(strategy);
  ShardedVariable w{nullptr};
  {
    auto scope = strategy.scope();
    w = strategy.create_variable(Tensor::zeros({2}, DType::int64), {.name = "w"});
  }
  auto step = remote_function("sim_ps_step", [&](int64_t id) {
    w.assign_add(Tensor::full({2}, 1.0, DType::int64));
    w.assign_add(Tensor::full({2}, 10.0, DType::int64));
    if (on_function)
      on_function();
    return id;
  });
  if (rt.task_type() != "chief")
    return {rt.serve()};
  std::vector<RemoteValue<int64_t>> results;
  for (int64_t id = 0; id < functions; ++id)
    results.push_back(coordinator.schedule(step, id));
  coordinator.join();
  int64_t ids = 0;
  for (auto& r : results)
    ids += r.fetch();
  const auto value = w.read_value().to_vector<int64_t>();
  return {value.at(0), value.at(1), ids};
}

constexpr int ps_functions = 12;

/// The chief's values when every function took effect exactly once.
std::vector<int64_t> ps_expected() {
  return {11 * ps_functions, 11 * ps_functions, ps_functions * (ps_functions - 1) / 2};
}

template <class Results>
void show_ps(uint64_t seed, const Results& results) {
  for (const auto& r : results)
    show(seed, r);
}

/// The chief's values say each function took effect exactly once.
template <class Result>
void check_once(uint64_t seed, const Result& chief) {
  if (*chief.value != ps_expected())
    broken(seed, "each function's effect exactly once",
           "w = " + std::to_string(chief.value->at(0)) + ", ids " + std::to_string(chief.value->at(2)) + ", expected "
             + std::to_string(ps_expected()[0]) + " and " + std::to_string(ps_expected()[2]));
}

/// Every task but the chief (and the killed ones, unless `killed_too`)
/// returned `status` from serve().
template <class Results>
void check_serve(uint64_t seed, const Results& results, int64_t status, const std::string& invariant,
                 bool killed_too = false) {
  for (std::size_t i = 1; i < results.size(); ++i) {
    const auto& r = results[i];
    if ((killed_too || !r.killed) && !(r.ok() && r.value->at(0) == status))
      broken(seed, invariant,
             r.task + (r.killed ? " was killed"
                       : r.ok() ? " returned " + std::to_string(r.value->at(0))
                                : " failed: " + std::string(r.error->what())));
  }
}

/// A worker killed at a random time, its functions run again elsewhere:
/// the variable counts each function once, and every other task ends well.
Outcome ps_kill_worker(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .chief = 1, .workers = 2, .ps = 1 + static_cast<int>(seed % 2),
                        .deadline = 10s});
  spread(sim);
  const auto victim = "worker:" + std::to_string(draw(sim.random(), 0, 1));
  sim.faults().kill(victim, draw_time(sim.random(), 6ms));
  auto results = sim.run([](Runtime& rt) { return ps_program(rt, ps_functions); });
  show_ps(seed, results);
  const auto& chief = results.at(0);
  if (!chief.ok())
    broken(seed, "the chief survives a worker's loss", std::string(chief.error->what()));
  check_once(seed, chief);
  check_serve(seed, results, 0, "every surviving task's serve() ends well");
  return outcome(sim, results[1].killed || results[2].killed ? "a worker killed mid-run; each function once"
                                                             : "the kill came after the run");
}

/// A parameter server killed at a random time: the variables it held are
/// gone, so every surviving task ends with a named error (the chief's
/// peer_lost, the others' serve() 1), or the run ended before the kill.
Outcome ps_kill_ps(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .chief = 1, .workers = 2, .ps = 2, .deadline = 10s});
  spread(sim);
  const auto victim = "ps:" + std::to_string(draw(sim.random(), 0, 1));
  // A run takes about 20 ms of virtual time: some kills come after it.
  sim.faults().kill(victim, draw_time(sim.random(), 30ms));
  auto results = sim.run([](Runtime& rt) { return ps_program(rt, ps_functions); });
  show_ps(seed, results);
  const auto& chief = results.at(0);
  if (chief.ok()) {
    check_once(seed, chief);
    // A server killed as the job ends, before the chief's farewell reached a
    // task, ends that task's serve() with 1 (the job cannot go on), as in a
    // real cluster: a false alarm at worst, never a wrong value.
    bool late = false;
    for (std::size_t i = 1; i < results.size(); ++i)
      late = late || (!results[i].killed && results[i].ok() && results[i].value->at(0) == 1);
    for (std::size_t i = 1; i < results.size(); ++i) {
      const auto& r = results[i];
      if (!r.killed && !(r.ok() && (r.value->at(0) == 0 || (late && r.value->at(0) == 1))))
        broken(seed, "a task's serve() ends well, or says the server went first", r.task + " did not");
    }
    return outcome(sim, late ? "the kill came as the job ended; the others' serve() said 1"
                             : "the job ended before the kill");
  }
  if (chief.error->code() != Errc::peer_lost)
    broken(seed, "a survivor gets a named error of the fault",
           "the chief failed with " + std::string(name(chief.error->code())) + ": " + chief.error->what());
  check_serve(seed, results, 1, "every surviving task learns the job failed");
  return outcome(sim, std::string("the chief failed with ") + std::string(name(chief.error->code())));
}

/// A worker killed, then restarted: the coordinator takes the new process
/// back, and each function still counts once.
Outcome ps_restart_worker(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .chief = 1, .workers = 2, .ps = 1, .deadline = 10s});
  spread(sim);
  const auto victim = "worker:" + std::to_string(draw(sim.random(), 0, 1));
  const auto killed_at = draw_time(sim.random(), 4ms);
  sim.faults().kill(victim, killed_at);
  sim.faults().restart(victim, killed_at + draw_time(sim.random(), 2ms));
  // How many functions each run of the victim ran: its first, then its restarted one.
  std::vector<int> ran_by_run;
  auto results = sim.run([&](Runtime& rt) {
    std::function<void()> count;
    if (rt.task_type() + ":" + std::to_string(rt.task_index()) == victim) {
      ran_by_run.push_back(0);
      count = [&ran_by_run, run = ran_by_run.size() - 1] { ++ran_by_run[run]; };
    }
    return ps_program(rt, ps_functions, count);
  });
  show_ps(seed, results);
  const auto& chief = results.at(0);
  if (!chief.ok())
    broken(seed, "the chief survives a worker's loss", std::string(chief.error->what()));
  check_once(seed, chief);
  check_serve(seed, results, 0, "every task, the restarted one too, ends well", true);
  const auto& restarted = results.at(victim == "worker:0" ? 1 : 2);
  if (!restarted.restarted || ran_by_run.size() != 2)
    broken(seed, "the killed worker runs again", victim + " was not restarted");
  return outcome(sim, ran_by_run[1] > 0 ? "restarted and taken back, ran functions again; each function once"
                                        : "restarted and taken back after the last function; each function once");
}

/// A worker frozen for a drawn time, within or past the peer timeout: held
/// messages arrive at the thaw, or the others count it lost and run its
/// functions elsewhere; each function counts once either way.
Outcome ps_freeze_worker(uint64_t seed) {
  SimulatedCluster sim({.seed = seed, .chief = 1, .workers = 2, .ps = 1, .peer_timeout = 20ms, .deadline = 10s});
  spread(sim);
  const int victim = draw(sim.random(), 0, 1);
  const auto at = draw_time(sim.random(), 6ms);
  const auto length = draw_time(sim.random(), 40ms);
  sim.faults().freeze("worker:" + std::to_string(victim), at, length);
  auto results = sim.run([](Runtime& rt) { return ps_program(rt, ps_functions); });
  show_ps(seed, results);
  const auto& chief = results.at(0);
  if (!chief.ok())
    broken(seed, "the chief survives a worker's freeze", std::string(chief.error->what()));
  check_once(seed, chief);
  const auto& frozen = results.at(static_cast<std::size_t>(1 + victim));
  const auto& other = results.at(static_cast<std::size_t>(2 - victim));
  if (!(other.ok() && other.value->at(0) == 0))
    broken(seed, "the other worker's serve() ends well", other.task + " did not");
  if (!(results.at(3).ok() && results[3].value->at(0) == 0))
    broken(seed, "the parameter server's serve() ends well", "ps:0 did not");
  // Past the timeout the frozen worker counts the chief lost too (1), unless
  // the job ended first (0).
  if (!frozen.ok() || (frozen.value->at(0) != 0 && frozen.value->at(0) != 1))
    broken(seed, "the frozen worker's serve() ends with a status", frozen.task + " did not");
  if (length <= 20ms && frozen.value->at(0) != 0)
    broken(seed, "a freeze within the peer timeout changes nothing", frozen.task + "'s serve() returned 1");
  return outcome(sim, frozen.value->at(0) == 0 ? "each function once; the frozen worker ended well"
                                              : "each function once; the frozen worker counted the chief lost");
}

void lose_failure_notices(bool on) {
  broken_notices = on;
}

void show_task_results(bool on) {
  show_tasks = on;
}

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all{
    {"mwms-kill", "MultiWorkerMirroredStrategy, 3 workers: one is killed at a random time; the others return "
                  "the fault-free bits or fail with peer_lost", mwms_kill},
    {"mwms-freeze", "a worker frozen for up to twice the peer timeout: within it nothing changes, past it "
                    "everyone fails with peer_lost", mwms_freeze},
    {"mwms-partition-heals", "4 workers split in two for less than the peer timeout: the run only takes longer",
     mwms_partition_heals},
    {"mwms-duplicate-reorder", "frames duplicated (5%) and held back (10%): the fault-free bits or a named error, "
                               "never a wrong sum or a hang", mwms_duplicate_reorder},
    {"mwms-replica-error", "a replica's step throws: every task fails within a second of virtual time",
     mwms_replica_error},
    {"checkpoint-resume", "2 workers training 6 steps with a checkpoint every 2: one is killed, the job runs "
                          "again from the checkpoint and ends with the uninterrupted job's bits", checkpoint_resume},
    {"tpu-two-hosts", "TPUStrategy over a slice of 8 cores on two hosts; every other seed kills a host: the "
                      "fault-free bits or peer_lost", tpu_two_hosts},
    {"uneven-dataset", "workers with 5, 8 and 11 elements end their pass together, with the fault-free sums",
     uneven_dataset},
    {"ps-kill-worker", "ParameterServerStrategy, chief + 2 workers + 1-2 ps: a worker is killed at a random time; "
                       "its functions run again elsewhere and each counts exactly once", ps_kill_worker},
    {"ps-kill-ps", "a parameter server is killed at a random time: every surviving task ends with a named error, "
                   "or the job had ended well", ps_kill_ps},
    {"ps-freeze-worker", "a worker frozen for up to twice the peer timeout: held messages arrive at the thaw, or "
                         "its functions run elsewhere; each counts exactly once", ps_freeze_worker},
    {"ps-restart-worker", "a worker is killed and restarted: the coordinator takes it back, each function counts "
                          "exactly once and every task ends well", ps_restart_worker},
  };
  return all;
}

} // namespace troupe_sim

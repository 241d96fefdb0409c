#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <troupe/actors/runtime.hpp>
#include <troupe/core/errors.hpp>

namespace troupe {

/// The shape of a SimulatedCluster: its tasks, their devices and the bounds
/// of a run. Times are virtual: they pass only in the simulation.
struct SimulatedClusterOptions {
  /// Names the whole run: the order in which actors are stepped and every
  /// fault the network draws. The same seed gives the same run, bit for bit.
  uint64_t seed = 0;
  /// 1: a task "chief:0" before the workers (rank 0 of collectives).
  int chief = 0;
  /// Tasks "worker:0".."worker:n-1".
  int workers = 2;
  /// Tasks "ps:0".."ps:n-1" after the workers: a parameter-server cluster
  /// (ParameterServerStrategy with a ClusterCoordinator on the chief, which
  /// it then needs; the workers and ps tasks serve()).
  int ps = 0;
  /// Logical CPU devices "CPU:0".. of each task.
  int devices_per_worker = 1;
  /// An emulated TPU slice of this many cores over the worker tasks (0: none),
  /// as RuntimeOptions::logical_tpu_cores on each host of a real slice.
  int logical_tpu_cores = 0;
  /// After this long without a frame from a task, the others count it lost
  /// (TROUPE_PEER_TIMEOUT_SECONDS of a real cluster); 0: that knob.
  std::chrono::nanoseconds peer_timeout{0};
  /// A task that has not returned by then hangs: run() fails naming it.
  std::chrono::nanoseconds deadline = std::chrono::minutes(10);
  /// A run that takes more actor steps than this livelocks: run() fails.
  uint64_t max_steps = 50'000'000;
  /// A file for the run's timeline (Chrome trace events, in virtual time;
  /// every task a process). Empty: none, or TROUPE_TRACE's, which the run's
  /// events then go to. While it runs, the run has the process's timeline.
  std::string trace_path{};
};

/// The faults of a SimulatedCluster's run, set before run(). Every frame
/// between two tasks draws its own delay, drop, duplicate and reorder from
/// the cluster's seed; the timed faults happen at virtual times counted from
/// the start of run(). Between tasks the data plane of a real cluster keeps
/// each link's frames in order and loses none while the link lives; drops,
/// duplicates and reordering go beyond it on purpose, to show that the
/// protocols fail with a named error rather than a wrong value or a hang.
class SimulatedFaults {
public:
  using Duration = std::chrono::nanoseconds;

  /// Every frame takes a latency drawn uniformly from [min, max].
  SimulatedFaults& delay(Duration min, Duration max);
  /// Each frame is lost with probability `p`.
  SimulatedFaults& drop(double p);
  /// Each frame arrives twice with probability `p`.
  SimulatedFaults& duplicate(double p);
  /// Each frame is held back with probability `p`, so that later frames of
  /// its link pass it.
  SimulatedFaults& reorder(double p);
  /// No frame crosses between `side_a` and `side_b` from `at` until `heal`
  /// (never, without one). Frames sent meanwhile arrive at the heal; a
  /// partition longer than the peer timeout makes each side count the other
  /// lost instead, at `at` + the peer timeout, as a real cluster's failure
  /// detector does.
  SimulatedFaults& partition(std::vector<std::string> side_a, std::vector<std::string> side_b, Duration at,
                             std::optional<Duration> heal = std::nullopt);
  /// A deliberately broken protocol, to check that a scenario's invariants
  /// catch one: none of the frames by which a worker tells the others that
  /// its collective failed (abort), that its step ended and how (run_done)
  /// or that it exits (bye) arrives, so they learn it only at their timeout.
  /// (Any one of them alone is covered by the other two.)
  SimulatedFaults& lose_failure_notices();
  /// Task `task` ("worker:1") dies at `at`: the others count it lost at once,
  /// and it runs no further step of its function (its result is `killed`).
  SimulatedFaults& kill(std::string task, Duration at);
  /// Task `task` neither sends nor receives from `at` for `length` (a stopped
  /// process); past the peer timeout the others count it lost.
  SimulatedFaults& freeze(std::string task, Duration at, Duration length);
  /// Task `task`, killed before `at`, runs again from `at` as a new process:
  /// the function starts afresh with a new Runtime, and a worker of a
  /// parameter-server cluster is taken back by the coordinator (its result
  /// is then the new run's; a kill at or after `at` kills the new run). Only
  /// workers of a cluster with ps tasks rejoin a formed cluster, as in a real
  /// one; once per task. When the task had returned before its kill, there
  /// is nothing to restart: it does not run again.
  SimulatedFaults& restart(std::string task, Duration at);

  struct Rates {
    Duration min_delay{0};
    Duration max_delay{0};
    double drop = 0;
    double duplicate = 0;
    double reorder = 0;
    bool lose_notices = false;
  };
  struct Partition {
    std::vector<std::string> side_a;
    std::vector<std::string> side_b;
    Duration at{0};
    std::optional<Duration> heal;
    std::string what;
  };
  struct Kill {
    std::string task;
    Duration at{0};
  };
  [[nodiscard]] const Rates& rates() const noexcept { return rates_; }
  [[nodiscard]] const std::vector<Partition>& partitions() const noexcept { return partitions_; }
  [[nodiscard]] const std::vector<Kill>& kills() const noexcept { return kills_; }
  [[nodiscard]] const std::vector<Kill>& restarts() const noexcept { return restarts_; }

private:
  Rates rates_;
  std::vector<Partition> partitions_;
  std::vector<Kill> kills_;
  std::vector<Kill> restarts_; ///< a restart is a "kill" entry's task and time
};

/// What one task's function gave: its value, or the Error it threw.
template <class T>
struct SimulatedTaskResult {
  std::string task;        ///< "chief:0", "worker:1"
  std::optional<T> value;  ///< set when the function returned
  std::optional<Error> error; ///< set when it threw (or was killed)
  bool killed = false;     ///< a kill fault ended it; its value or error is not its own
  bool restarted = false;  ///< a restart fault ran it again: value, error and killed are the new run's

  [[nodiscard]] bool ok() const noexcept { return value.has_value(); }
};

/// What a run's network did to its frames.
struct SimulatedNetworkCounts {
  uint64_t frames = 0;
  uint64_t delayed = 0;
  uint64_t held = 0;
  uint64_t dropped = 0;
  uint64_t duplicated = 0;
  uint64_t reordered = 0;
  /// Messages between tasks' actors (a parameter-server cluster's protocols).
  uint64_t messages = 0;
};

/// A whole cluster in one process, under the seeded simulation: each task
/// (chief, workers, ps) runs the user's function with a Runtime of its own,
/// whose task_type(), task_index() and cluster_resolver() are that task's,
/// and whose data plane is a simulated network with the faults of
/// faults(). Strategy code is the same as in a real cluster:
///
///     troupe::SimulatedCluster sim({.seed = 7, .workers = 3, .devices_per_worker = 2});
///     sim.faults().partition({"worker:0"}, {"worker:1", "worker:2"}, 2s, 5s);
///     auto results = sim.run([](troupe::Runtime& rt) {
///       troupe::MultiWorkerMirroredStrategy strategy(rt);
///       ...
///       return loss;            // each task's value, or the Error it threw
///     });
///
/// run() steps every task's actors on the calling thread in an order drawn
/// from the seed, in virtual time (a timeout of minutes passes at once when
/// nothing else can run). It checks the invariants no fault may break and
/// throws Error naming the seed when one is: every task that was not killed
/// returns or throws before the deadline (no hang: Errc::deadlock), and no
/// actor of the run is left once it ended (Errc::internal). Comparing the
/// values with a fault-free run is the caller's (troupe/actors/seed_runner.hpp
/// has helpers). One run per SimulatedCluster.
class SimulatedCluster {
public:
  explicit SimulatedCluster(SimulatedClusterOptions options);
  ~SimulatedCluster();
  SimulatedCluster(const SimulatedCluster&) = delete;
  SimulatedCluster& operator=(const SimulatedCluster&) = delete;

  [[nodiscard]] SimulatedFaults& faults() noexcept { return faults_; }
  [[nodiscard]] const SimulatedClusterOptions& options() const noexcept { return options_; }
  /// The tasks, in member order: "chief:0" (with a chief), "worker:0", ..., "ps:0", ...
  [[nodiscard]] const std::vector<std::string>& tasks() const noexcept { return tasks_; }

  /// A generator seeded from the seed (apart from the scheduler's and the
  /// network's draws), for scenarios that draw their faults: the same seed
  /// draws the same faults.
  [[nodiscard]] std::mt19937_64& random() noexcept { return random_; }

  /// Runs `body(runtime)` as every task; returns each task's result, in
  /// rank order. `body` may return void.
  template <class F>
  auto run(F&& body) {
    using R = std::invoke_result_t<F&, Runtime&>;
    using V = std::conditional_t<std::is_void_v<R>, std::monostate, R>;
    std::vector<std::optional<V>> values(tasks_.size());
    run_tasks([&](Runtime& runtime, std::size_t task) {
      values[task].reset(); // a restarted task's value is its new run's
      if constexpr (std::is_void_v<R>) {
        body(runtime);
        values[task].emplace();
      } else {
        values[task].emplace(body(runtime));
      }
    });
    std::vector<SimulatedTaskResult<V>> out;
    for (std::size_t i = 0; i < tasks_.size(); ++i)
      out.push_back({tasks_[i], std::move(values[i]), error_of(i), killed(i), restarted(i)});
    return out;
  }

  // -- after run() ------------------------------------------------------------

  /// A hash of the order in which actors were stepped (same seed and
  /// program: same hash) and the number of steps.
  [[nodiscard]] uint64_t trace_hash() const noexcept;
  [[nodiscard]] uint64_t steps() const noexcept;
  /// Virtual time the run took.
  [[nodiscard]] std::chrono::nanoseconds virtual_time() const noexcept;
  [[nodiscard]] SimulatedNetworkCounts network_counts() const noexcept;

private:
  struct Impl;
  void run_tasks(const std::function<void(Runtime&, std::size_t)>& body);
  [[nodiscard]] std::optional<Error> error_of(std::size_t task) const;
  [[nodiscard]] bool killed(std::size_t task) const;
  [[nodiscard]] bool restarted(std::size_t task) const;

  SimulatedClusterOptions options_;
  std::vector<std::string> tasks_;
  SimulatedFaults faults_;
  std::mt19937_64 random_;
  std::unique_ptr<Impl> impl_;
};

} // namespace troupe

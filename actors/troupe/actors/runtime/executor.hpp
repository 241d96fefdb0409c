#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_clock.hpp>
#include <caf/actor_system_config.hpp>

#include <troupe/actors/fibers/completion.hpp>

namespace caf::scheduler {
class test_coordinator;
} // namespace caf::scheduler

namespace troupe::internal {

class FunctionRegistry;

/// Where troupe's actors run and how a caller waits for them: the actor
/// system (owned or embedded) and, in simulation mode, the seeded stepping of
/// CAF's test coordinator. Everything below the runtime modes (replica groups,
/// parameter-server tasks, GPU devices, input pipelines) needs only this; the
/// modes (RuntimeImpl) add the devices and the cluster on top.
class Executor {
public:
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  [[nodiscard]] caf::actor_system& system() noexcept { return *system_; }
  [[nodiscard]] bool simulation() const noexcept { return coordinator_ != nullptr; }

  /// Blocks the calling (non-actor) thread until `done` is set. On an actor's
  /// fiber it suspends the fiber instead. In simulation mode this thread steps
  /// the actors, in seeded order, firing the next timer whenever nothing can
  /// run; when neither is possible the program is stuck, which is
  /// Error(deadlock) naming `what`.
  void wait(const Completion& done, const char* what);

  /// Simulation, on a plain thread: steps until `done` is set (true), or
  /// until the next thing to do lies past the virtual time `deadline`, or
  /// after `max_steps` more steps (false: the program hangs or livelocks).
  /// Error(deadlock) when nothing can run and no timer is pending.
  bool simulate_until(const Completion& done, caf::actor_clock::time_point deadline, uint64_t max_steps,
                      const char* what);
  /// The actor clock's time: a simulation's virtual time, else real time.
  [[nodiscard]] caf::actor_clock::time_point now() const;

  /// This runtime's process in the timeline (TROUPE_TRACE): its task's
  /// member index in a cluster or a SimulatedCluster, else 0.
  [[nodiscard]] int trace_pid() const noexcept { return trace_pid_; }
  /// Names this runtime's task in the timeline ("worker:1").
  void set_trace_task(int pid, const std::string& task);

  /// Simulation: runs every runnable actor until none is left (used when
  /// tearing down actors). No-op in threaded mode, and on a fiber (the
  /// simulation steps on once the fiber yields).
  void drain();

  /// Strategies and distributed-dataset iterators register while they hold
  /// actors of this runtime: destroying the runtime before them would wait
  /// for those actors forever, so the runtime stops the program with a
  /// message naming the fix instead.
  void add_user() noexcept { ++users_; }
  void release_user() noexcept { --users_; }

  /// A new id for a group of replicas that stays in this process (a
  /// collective key's first part). Counted apart from cluster groups, above
  /// them, since it depends on every strategy this process created.
  [[nodiscard]] uint64_t next_group_id() noexcept { return local_group_ids_start + ++group_ids_; }

  /// What this runtime's program made for its workers (its functions and
  /// per-worker resources): a simulated task's own, else the process's.
  [[nodiscard]] FunctionRegistry& functions() const noexcept;
  /// A simulated task's own registry (it must outlive this runtime's workers).
  void set_functions(FunctionRegistry* functions) noexcept { functions_ = functions; }

  [[nodiscard]] uint64_t trace_hash() const noexcept { return stepper_->trace_hash_; }
  [[nodiscard]] uint64_t steps() const noexcept { return stepper_->steps_; }

protected:
  Executor() = default;
  ~Executor();

  /// Starts an actor system of its own from `config`.
  void start(std::unique_ptr<caf::actor_system_config> config);
  /// Starts an actor system of its own on CAF's test coordinator, stepped in
  /// the order `seed` draws (`config` sets scheduler.policy to testing).
  void start_simulated(std::unique_ptr<caf::actor_system_config> config, uint64_t seed);
  /// Runs on the caller's actor system; a simulation when that system runs on
  /// CAF's test coordinator (stepped in seed 0's order).
  void attach(caf::actor_system& system);
  /// Runs on `host`'s simulated actor system, which steps it: one task of a
  /// SimulatedCluster. Waits and drains are the host's.
  void attach_to(Executor& host);

  [[nodiscard]] int users() const noexcept { return users_.load(); }

private:
  /// Simulation: runs one actor, picked by the seeded generator.
  void step_once();
  /// Simulation: steps until `done`, or fails with Errc::deadlock.
  void simulate_until(const Completion& done, const char* what);

  std::unique_ptr<caf::actor_system_config> config_;
  std::unique_ptr<caf::actor_system> owned_system_;
  caf::actor_system* system_ = nullptr;
  caf::scheduler::test_coordinator* coordinator_ = nullptr;
  Executor* stepper_ = this; ///< who steps the simulation: this, or a SimulatedCluster's host
  std::mt19937_64 rng_;
  static constexpr uint64_t local_group_ids_start = uint64_t{1} << 32;
  uint64_t group_ids_ = 0;
  std::atomic<int> users_{0};
  int trace_pid_ = 0;
  FunctionRegistry* functions_ = nullptr;
  uint64_t trace_hash_ = 1469598103934665603ull; // FNV-1a offset basis
  uint64_t steps_ = 0;
};

} // namespace troupe::internal

#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <vector>

#include <caf/actor.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/fibers/fiber_local.hpp>
#include <troupe/actors/fwd.hpp>
#include <troupe/actors/ps/function_recorder.hpp>
#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>

namespace troupe::internal {

struct StageUpdatesMsg;
/// What a worker's update stager accepts (update_stager.hpp): declared here,
/// where the stager is held, since its message needs WorkerContext.
using UpdateStagerHandle = caf::typed_actor<caf::reacts_to<StageUpdatesMsg>>;

/// What a worker of a parameter-server cluster knows while it runs a
/// scheduled function: which worker it is, which attempt of which function
/// runs, how many updates that attempt staged at each parameter server, and
/// the worker's per-worker resources (its datasets' iterators).
///
/// One per worker actor (a restarted worker gets a new one, so its
/// resources are rebuilt). Code finds it through current(): the worker actor
/// installs it around each resume of the function's fiber, and the replicas
/// of strategy.run inside the function find it through their context frame.
/// The staging counters are shared by those replicas, hence the mutex.
class WorkerContext {
public:
  WorkerContext(Executor& runtime, int worker_index, std::string name, int num_ps);
  /// Stops the stager actor.
  ~WorkerContext();
  WorkerContext(const WorkerContext&) = delete;
  WorkerContext& operator=(const WorkerContext&) = delete;

  /// The context of the scheduled function the calling code runs in, or
  /// null outside one (the coordinator, a plain program).
  [[nodiscard]] static WorkerContext* current() noexcept { return FiberLocal<WorkerContext>::current(); }

  /// Makes a context the current one while it lives (around each fiber resume).
  using Installer = FiberLocal<WorkerContext>::Installer;

  [[nodiscard]] Executor& runtime() const noexcept { return *runtime_; }
  [[nodiscard]] int worker_index() const noexcept { return worker_index_; }
  /// "/job:worker/replica:0/task:1".
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  /// Set once this worker's program has made its functions: at once in one
  /// process, by Runtime::serve() in a worker task across processes (the
  /// chief may send closures before that process registered them).
  [[nodiscard]] const Completion& program_ready() const noexcept { return program_ready_; }
  void mark_program_ready() noexcept {
    if (!program_ready_.done())
      program_ready_.set();
  }

  // -- the running attempt --------------------------------------------------------

  /// Starts attempt `attempt`: its staging counters start at zero.
  void begin_attempt(AttemptId attempt);
  [[nodiscard]] AttemptId attempt() const;
  /// Counts one update of `attempt` that ps task `ps` acknowledged as staged
  /// (ignored once another attempt runs).
  void count_staged(AttemptId attempt, int ps);
  /// Per ps task, the updates staged and acknowledged by this attempt.
  [[nodiscard]] std::vector<uint32_t> staged_per_server() const;

  /// Stages `updates` (ShardUpdate for ps task, at that task's server) under
  /// the running attempt and waits until every server acknowledged them;
  /// throws Error naming the server that refused or was lost. All of this
  /// worker's stages go through one actor, so each server receives them in
  /// the order of their sequence numbers.
  struct StageTarget {
    int ps = 0;
    ParameterServerActorHandle server;
    std::string what; ///< "ShardedVariable 'w': assign_add of shard 1", for errors
    ShardUpdate update;
  };
  void stage(std::vector<StageTarget> updates);

  // -- per-worker resources ---------------------------------------------------------

  /// Builds a per-worker resource on the worker that first needs it.
  using ResourceBuilder = internal::ResourceBuilder;

  /// Registers a builder of resources of type `type` in this process
  /// (ClusterCoordinator does, for each per-worker dataset and iterator) and
  /// returns its id: ids count up in creation order, so every process of a
  /// cluster that runs the same program agrees on them.
  [[nodiscard]] static uint64_t register_resource(std::type_index type, ResourceBuilder builder);

  /// This worker's resource `id`, built here on first use; `type` must be the
  /// registered one (else Error(invalid_argument) naming both).
  [[nodiscard]] std::shared_ptr<void> resource(uint64_t id, std::type_index type, const char* type_name);

  /// The cluster is shutting down: drops every resource and stops the update
  /// stager now, not when the last holder of this context lets go (a
  /// published worker actor may outlive the cluster's shutdown, and the actor
  /// system waits for every running actor).
  void shut_down() noexcept;

  // -- flight recorder ------------------------------------------------------------

  /// The worker actor started or ended an attempt (FunctionRecorder's calls,
  /// under this context's lock: serve() renders from another thread).
  void record_start(uint64_t id, uint32_t attempt, const std::string& function, int64_t now_ns);
  void record_end(uint64_t id, uint32_t attempt, std::string how, int64_t now_ns);
  /// This worker's block of its last functions (empty when it ran none).
  [[nodiscard]] std::string flight_record(const std::string& why, int64_t now_ns, const std::string& task) const;

private:
  Completion program_ready_;
  Executor* runtime_;
  int worker_index_;
  std::string name_;
  mutable std::mutex mutex_;
  AttemptId attempt_;
  std::vector<uint32_t> staged_;
  UpdateStagerHandle stager_; ///< made on first use
  std::map<uint64_t, std::shared_ptr<void>> resources_;
  FunctionRecorder recorder_;
};

} // namespace troupe::internal

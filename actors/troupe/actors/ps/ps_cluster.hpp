#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include <troupe/actors/fwd.hpp>
#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/ps/ps_settings_messages.hpp>

namespace troupe::internal {

class ClusterDirectory;
class WorkerContext;

/// The tasks of a parameter-server cluster, counted as TF_CONFIG counts them.
struct PsClusterShape {
  int workers = 0;
  int ps = 0;
  int devices_per_worker = 1;
};

/// "/job:worker/replica:0/task:1", "/job:ps/replica:0/task:0".
[[nodiscard]] std::string task_name(const char* job, int index);

/// The tasks of a parameter-server cluster as this runtime sees them.
///
/// In one process (LocalCluster, Simulation with workers and ps) every worker
/// and parameter server is an actor of this actor system, and they talk the
/// messages they would talk across processes; the calling thread is the
/// coordinator (the chief). Here it also plays the cluster's failure detector
/// for the faults its hooks inject: kill_worker tells the attached
/// coordinator that the worker is lost, as a peer timeout would across
/// processes.
///
/// Across processes (TF_CONFIG with chief, worker and ps jobs) each task
/// hosts its own part: a ps task its ParameterServerActor, a worker task its
/// WorkerActor, both published on the task's node; the chief and the workers
/// look up the servers, and the chief the workers. The node's failure
/// detector tells the attached coordinator of lost workers and servers, and
/// ends serve() on the other tasks when the chief is gone.
class PsCluster {
public:
  /// Spawns `shape.ps` parameter servers and `shape.workers` workers.
  PsCluster(Executor& runtime, PsClusterShape shape);
  /// This task's part of a cluster across processes (`directory` is its
  /// ClusterNode) or of a SimulatedCluster (the simulation's control plane):
  /// waits (up to TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS) for the actors it must reach.
  PsCluster(Executor& runtime, ClusterDirectory& directory, int devices_per_worker);
  /// Stops every task actor.
  ~PsCluster();
  PsCluster(const PsCluster&) = delete;
  PsCluster& operator=(const PsCluster&) = delete;

  [[nodiscard]] const PsClusterShape& shape() const noexcept { return shape_; }
  /// Whether every task lives in this process (LocalCluster, Simulation).
  [[nodiscard]] bool local() const noexcept { return node_ == nullptr; }
  /// "chief" (also for a cluster in this process), "worker" or "ps".
  [[nodiscard]] const std::string& task_type() const noexcept { return task_type_; }
  [[nodiscard]] int task_index() const noexcept { return task_index_; }
  [[nodiscard]] bool is_coordinator() const noexcept { return task_type_ == "chief"; }

  /// A worker or ps task across processes: runs until the chief ends the
  /// cluster (0), or until the job cannot go on (1, after saying why on
  /// stderr): the chief ended it with an error (its farewell), the chief was
  /// lost, or a parameter server was lost. A loss is known within
  /// TROUPE_PEER_TIMEOUT_SECONDS (a frozen process), at once for a dead one.
  [[nodiscard]] int serve();
  /// check_same_across_workers of a ParameterServerStrategy: this task's
  /// settings (encode_settings) for its next call, compared at the chief
  /// with those of every task (PsSettingsAgreement). Returns the verdict:
  /// empty when all agree, else the error every task raises. Blocks the
  /// calling thread up to about the init timeout; a cluster in one process
  /// has nothing to compare.
  [[nodiscard]] std::string agree_on_settings(const std::string& settings);
  /// The coordinator's error the program was just given (a failed
  /// function's fetch, a join, a settings check): when this task's program
  /// then ends by that exception, its farewell names it to the other tasks.
  void note_raised_error(const std::string& error);
  /// Runtime::report_job_failure: the farewell names `error` whatever the
  /// way the program ends.
  void note_job_failure(const std::string& error);
  /// This task's program ended, by an exception or not: says the farewell
  /// (once; the destructor does when nobody called it, taking an exception
  /// that unwinds it as the end). A simulated task calls it itself, since
  /// std::uncaught_exceptions() counts the thread's exceptions and every
  /// simulated task shares one thread.
  void end_program(bool by_exception);
  /// The parameter servers, by ps task index.
  [[nodiscard]] const std::vector<ParameterServerActorHandle>& parameter_servers() const noexcept { return servers_; }
  [[nodiscard]] std::vector<std::string> parameter_server_names() const;

  /// The coordinator actor that gets CoordinatorAddWorkerMsg for every live
  /// worker now and every restarted one later, and CoordinatorWorkerLostMsg
  /// for every killed one. One at a time: a second is Error(failed_precondition).
  void attach_coordinator(CoordinatorActorHandle coordinator);
  void detach_coordinator() noexcept;

  // -- fault injection (tests, the fault sample) -----------------------------------

  /// Worker `index` is cut off: it stops reporting (the function it runs goes
  /// on and its late updates are refused), and the coordinator learns that it
  /// is lost, with `reason`.
  void kill_worker(int index, const std::string& reason);
  /// A new process for worker `index` (after kill_worker): a fresh actor with
  /// fresh per-worker resources, given work again.
  void restart_worker(int index);
  /// Parameter server `index` exits with `reason`.
  void kill_parameter_server(int index, const std::string& reason);

private:
  struct Worker {
    caf::actor actor;
    std::string name;
    std::shared_ptr<WorkerContext> context;
    bool alive = true;
  };

  struct LossRouting;

  [[nodiscard]] Worker spawn_worker(int index);
  /// Across processes: finds the servers (and, on the chief, the workers)
  /// that the other tasks published, waiting up to the cluster init timeout.
  void look_up_peers(ClusterDirectory& directory);
  void check_worker_index(int index, const char* method) const;
  void check_local(const char* method) const;

  Executor& runtime_;
  ClusterDirectory* node_ = nullptr;
  std::string task_type_ = "chief";
  int task_index_ = 0;
  PsClusterShape shape_;
  /// Across processes: routes the node's TaskLostMsg to the coordinator (chief) or to serve().
  std::shared_ptr<LossRouting> routing_;
  /// What the node tells about other tasks: which left or were lost, and
  /// which were taken back after a restart.
  using LossListenerHandle = caf::typed_actor<caf::reacts_to<TaskLostMsg>, caf::reacts_to<TaskJoinedMsg>>;
  LossListenerHandle loss_listener_;
  ParameterServerActorHandle own_server_; ///< a ps task's own server
  PsSettingsAgreementHandle settings_agreement_; ///< the chief's PsSettingsAgreement (elsewhere: found at the first call)
  uint32_t settings_round_ = 0;  ///< this task's calls of agree_on_settings so far
  std::vector<ParameterServerActorHandle> servers_;
  std::mutex mutex_;
  std::vector<Worker> workers_;
  CoordinatorActorHandle coordinator_;
  std::string raised_error_; ///< note_raised_error's latest
  bool job_failed_ = false;  ///< note_job_failure was called
  bool program_ended_ = false; ///< end_program said the farewell
};

} // namespace troupe::internal

#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/net/bootstrap/collective_membership.hpp>

namespace troupe {
class ClusterResolver;
} // namespace troupe

namespace troupe::internal {

class AgreementGroup;
class ClusterDirectory;
class ClusterNode;
class GpuDevices;

/// The Runtime's modes (threaded, simulation, embedded, local and remote
/// clusters): each starts the Executor its way and adds the devices, the
/// cluster node, the parameter-server tasks and the GPUs that mode has.
/// One task of a SimulatedCluster: it runs on the cluster's simulated actor
/// system (`host` steps it), with devices, a resolver and a simulated link of its own.
struct SimulatedTask {
  Executor* host = nullptr;
  std::shared_ptr<const ClusterResolver> resolver;
  /// Its place among the members ("chief:0", "worker:0", ..., "ps:0", ...).
  int member = 0;
  std::string name;
  /// Rank -1 and no link on a ps task, and on a restarted worker (no data plane).
  CollectiveMembership membership;
  /// The simulation's control plane, in a cluster with ps tasks (else null):
  /// join_ps_cluster() makes this task's part of it.
  ClusterDirectory* directory = nullptr;
  int logical_cpu_devices = 1;
  /// The emulated TPU slice over the cluster's workers (0: none).
  int tpu_slice_cores = 0;
};

class RuntimeImpl : public Executor {
public:
  RuntimeImpl(const RuntimeOptions& options);
  RuntimeImpl(const Simulation& simulation);
  /// A parameter-server cluster in this process (LocalCluster).
  RuntimeImpl(const LocalCluster& cluster);
  RuntimeImpl(caf::actor_system& system, const RuntimeOptions& options);
  /// A task of a SimulatedCluster.
  explicit RuntimeImpl(const SimulatedTask& task);
  /// Cluster mode: joins the cluster `resolver` describes (blocking until
  /// every task is there); an empty cluster is a single process.
  RuntimeImpl(std::shared_ptr<const ClusterResolver> resolver, const RuntimeOptions& options);
  ~RuntimeImpl();

  [[nodiscard]] const std::vector<DeviceSpec>& devices() const noexcept { return devices_; }
  /// The emulated TPU slice's cores over all hosts (0: none); this host has
  /// tpu_slice_cores() / tpu_hosts() of them.
  [[nodiscard]] int tpu_slice_cores() const noexcept { return tpu_slice_cores_; }
  [[nodiscard]] int tpu_hosts() const noexcept { return tpu_hosts_; }
  /// The serialized Topology that initialize_tpu_system recorded (TensorFlow's
  /// TopologyProto bytes); unset until the TPU system is initialized.
  [[nodiscard]] const std::optional<std::string>& tpu_topology() const noexcept { return tpu_topology_; }
  void set_tpu_topology(std::optional<std::string> serialized) { tpu_topology_ = std::move(serialized); }

  /// Cluster mode: the resolver this process was started with (null otherwise).
  [[nodiscard]] const std::shared_ptr<const ClusterResolver>& resolver() const noexcept { return resolver_; }
  /// Cluster mode with more than one task: this task's node (null otherwise).
  [[nodiscard]] ClusterNode* cluster() const noexcept { return cluster_.get(); }
  /// What multi-worker strategies need of this task's cluster (rank, task
  /// names, data plane): its ClusterNode's, or a simulated task's; none in a
  /// single process.
  [[nodiscard]] std::optional<CollectiveMembership> membership() const;

  /// The logical GPUs and their device actors (threaded and cluster modes on
  /// a machine with GPUs; null otherwise).
  [[nodiscard]] GpuDevices* gpus() const noexcept { return gpus_.get(); }

  /// The parameter-server cluster this runtime hosts (LocalCluster, or a
  /// Simulation with workers and ps); null otherwise.
  [[nodiscard]] PsCluster* ps_cluster() const noexcept { return ps_cluster_.get(); }
  /// A SimulatedCluster's task with ps tasks: makes this task's part of the
  /// parameter-server cluster, as a ClusterNode's runtime does when it is
  /// made. Called on the task's fiber, since it waits for the other tasks'
  /// actors. Nothing for a task of a cluster without ps tasks.
  void join_ps_cluster();
  /// Ends this task's part of it (a task's program ended, by an exception or
  /// not): its farewell and its actors, as when a process's Runtime goes.
  void leave_ps_cluster(bool by_exception);

  /// The id of the next cluster strategy's group, which its frames carry:
  /// its position among this process's cluster strategies (1, 2, ...).
  /// Single-worker strategies do not count, so a chief that creates a
  /// OneDeviceStrategy for evaluation first still gives its
  /// MultiWorkerMirroredStrategy the id the other workers give theirs.
  [[nodiscard]] uint64_t next_cluster_group_id() noexcept { return ++cluster_group_ids_; }

  /// Cluster mode with more than one task: the one-replica group through
  /// which the workers agree on each cluster strategy's settings when it is
  /// created (made on first use, with group id 0). Error(internal) otherwise.
  [[nodiscard]] AgreementGroup& agreement_group();

private:
  static void check_devices(int logical_cpu_devices, int logical_tpu_cores = 0);
  static void check_ps_cluster_shape(int workers, int ps, int devices_per_worker, const char* mode);
  /// Checks a parameter-server cluster's shape and spawns its tasks.
  void start_ps_cluster(int workers, int ps, int devices_per_worker, const char* mode);
  void init_devices(int logical_cpu_devices);
  /// Starts a device actor per logical GPU and adds their devices (none in
  /// simulation or without GPUs).
  void init_gpus(const RuntimeOptions& options);
  /// Adds this host's share of a slice of `slice_cores` emulated TPU cores,
  /// split evenly over `hosts` (the worker tasks of a TF_CONFIG cluster).
  void init_tpu_cores(int slice_cores, int hosts);

  std::vector<DeviceSpec> devices_;
  int tpu_slice_cores_ = 0;
  int tpu_hosts_ = 1;
  std::optional<std::string> tpu_topology_;
  uint64_t cluster_group_ids_ = 0;
  std::shared_ptr<const ClusterResolver> resolver_;
  std::optional<CollectiveMembership> simulated_membership_;
  ClusterDirectory* simulated_directory_ = nullptr;
  /// A simulated task's program's functions and resources (its workers use them).
  std::unique_ptr<FunctionRegistry> simulated_functions_;
  // A member, so destroyed before the Executor's actor system: it says bye first.
  std::unique_ptr<ClusterNode> cluster_;
  // Its actors use the cluster's link: destroyed first (in the destructor).
  std::unique_ptr<AgreementGroup> agreement_;
  // Stopped in the destructor, before the actor system.
  std::unique_ptr<PsCluster> ps_cluster_;
  // Destroyed first: stops the device actors before the actor system waits for them.
  std::unique_ptr<GpuDevices> gpus_;
};

} // namespace troupe::internal

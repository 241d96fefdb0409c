#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/net/fwd.hpp>
#include <troupe/core/device_spec.hpp>

namespace caf {
class actor_system;
} // namespace caf

namespace troupe {

/// Options of a threaded Runtime.
struct RuntimeOptions {
  /// Number of logical CPU devices "CPU:0".."CPU:n-1" (like
  /// tf.config.set_logical_device_configuration); replicas on them share host memory.
  int logical_cpu_devices = 1;
  /// Emulated TPU cores of the slice (0: none; 1, 2, 4, 8, 16 or 32, the TPU
  /// v2/v3 slice shapes with 2 cores per chip): devices "TPU:0".."TPU:k-1",
  /// backed by CPU threads, where k is this host's share (all of them in one
  /// process; cores / worker tasks in a TF_CONFIG cluster). See TPUStrategy.
  int logical_tpu_cores = 0;
  /// Scheduler threads; 0 = one per hardware core.
  int threads = 0;
  /// Logical GPUs per physical GPU, as tf.config.set_logical_device_configuration
  /// with that many virtual devices: GPU g's logical devices are
  /// "GPU:g*k".."GPU:g*k+k-1", each with its own device actor, CUDA stream
  /// and caching allocator, so multi-replica GPU code runs on one card.
  /// 1 or more; without a GPU (or a CUDA build) there are no GPU devices.
  int logical_gpu_devices_per_gpu = 1;
  /// Device memory each logical GPU may hold (its allocator's limit, as
  /// memory_limit in TensorFlow's LogicalDeviceConfiguration); 0: an equal
  /// share of the card's free memory when the Runtime starts, less 5%.
  std::size_t gpu_memory_limit_bytes = 0;
};

/// A parameter-server cluster in this process: the calling thread is the
/// coordinator (the chief), and each worker and parameter server is a group
/// of actors of this actor system that talk the messages they would talk
/// across processes. `devices_per_worker` logical CPU devices serve each
/// worker's replicas (and the coordinator's).
struct LocalCluster {
  int workers = 1;
  int ps = 1;
  int devices_per_worker = 1;
  /// Scheduler threads; 0 = one per hardware core.
  int threads = 0;
};

/// Options of a deterministic simulation Runtime: a single thread steps the
/// actors in an order drawn from `seed`, and time is virtual (timeouts fire
/// when nothing else can run). The same seed gives the same message order.
/// With `workers` and `ps` it simulates a parameter-server cluster, as
/// LocalCluster runs one (`Simulation{.seed = 7, .workers = 2, .ps = 2}`).
struct Simulation {
  uint64_t seed = 0;
  int workers = 0;
  int ps = 0;
  /// A parameter-server cluster's devices per worker (as LocalCluster's).
  int devices_per_worker = 1;
  int logical_cpu_devices = 1;
  /// Emulated TPU cores, as RuntimeOptions::logical_tpu_cores.
  int logical_tpu_cores = 0;
};

/// The actor system that strategies run on, and the devices it offers.
///
/// Threaded mode (default) runs actors on CAF's work-stealing scheduler;
/// simulation mode runs them on CAF's test coordinator under a seeded choice
/// of the next actor, with virtual time. A Runtime may also wrap an
/// application's existing `caf::actor_system`. Strategies keep a reference to
/// their Runtime: it must outlive them. Blocking calls (strategy.run and the
/// like) may be made from one application thread at a time.
class Runtime {
public:
  explicit Runtime(RuntimeOptions options = {});

  /// A deterministic simulation runtime: `Runtime rt(troupe::Simulation{.seed = 7})`.
  template <std::same_as<Simulation> S>
  explicit Runtime(const S& simulation) : Runtime(simulation, 0) {}

  /// A parameter-server cluster in this process: `Runtime rt(troupe::LocalCluster{.workers = 2, .ps = 1})`.
  explicit Runtime(const LocalCluster& cluster);

  /// Embeds troupe in an application's running actor system (which must outlive
  /// the Runtime). If that system runs CAF's test coordinator, the Runtime steps
  /// it deterministically (seed 0).
  explicit Runtime(caf::actor_system& system, RuntimeOptions options = {});

  /// Makes this process one task of the cluster `resolver` describes
  /// (`Runtime rt(troupe::ClusterResolver::from_env())` reads TF_CONFIG).
  /// Blocks until every chief and worker task of the cluster has started and
  /// passed the handshake (same cluster spec, same TROUPE_CLUSTER_TOKEN), or
  /// throws Error naming the tasks that never came after
  /// TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS. An empty cluster (no TF_CONFIG) is a
  /// single process. A lost or frozen task is detected after
  /// TROUPE_PEER_TIMEOUT_SECONDS and fails every collective that needs it.
  explicit Runtime(std::shared_ptr<const ClusterResolver> resolver, RuntimeOptions options = {});

  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // -- properties -----------------------------------------------------------------

  [[nodiscard]] bool is_simulation() const noexcept;

  /// This process's task in its cluster: "chief", "worker" or "ps" (TF_CONFIG's
  /// task type; "chief" for LocalCluster and a simulated parameter-server
  /// cluster, whose coordinator is the calling thread), "" for a single process.
  [[nodiscard]] std::string task_type() const;
  /// This process's index among its task type's tasks (0 when alone).
  [[nodiscard]] int task_index() const;
  /// The cluster this task belongs to (TF_CONFIG's, or a SimulatedCluster
  /// task's); null for a single process, a LocalCluster and a Simulation.
  [[nodiscard]] std::shared_ptr<const ClusterResolver> cluster_resolver() const;
  /// The tasks of `job` ("chief", "worker", "ps") in this runtime's cluster:
  /// LocalCluster's and a simulated cluster's counts (one chief), TF_CONFIG's
  /// otherwise; 0 for a job the cluster lacks or a single process.
  [[nodiscard]] int num_tasks(std::string_view job) const;

  /// Worker and ps tasks of a parameter-server cluster across processes: runs
  /// this task's actors (the closures the coordinator schedules, the variable
  /// shards it holds), like tf.distribute.Server.join(), and returns the
  /// process's exit status: 0 once the coordinator ended the job, 1 (after a
  /// line on stderr saying why) once the job cannot go on: the coordinator
  /// ended it with an error, the coordinator or a parameter server was lost.
  /// Register the scheduled functions (remote_function) and create the
  /// strategy, its variables and per-worker datasets before, as the
  /// coordinator does. Error(failed_precondition) on the coordinator or
  /// outside such a cluster.
  int serve();

  /// Marks this task's job as failed with `error`: when this Runtime ends,
  /// the other tasks of its parameter-server cluster are told, and their
  /// serve() returns 1 naming it. A program that ends by an exception (the
  /// Runtime destroyed while it unwinds) does this by itself, with the last
  /// error troupe raised there; call it where the program catches a failure
  /// and returns a failing status instead. Nothing happens in other runtimes.
  void report_job_failure(const std::string& error);

  /// The local devices: "CPU:0".."CPU:n-1", then the emulated "TPU:0".."TPU:k-1",
  /// then the logical GPUs "GPU:0".. (threaded and cluster modes; a simulation has none).
  [[nodiscard]] const std::vector<DeviceSpec>& devices() const noexcept;

  /// Parses `device` and checks that this runtime has it; the error names the
  /// device, the devices that exist and how to get more.
  [[nodiscard]] DeviceSpec resolve_device(std::string_view device) const;

  /// Simulation only: a hash of the order in which actors were stepped so far,
  /// and the number of steps (same seed and program => same values).
  [[nodiscard]] uint64_t simulation_trace_hash() const noexcept;
  [[nodiscard]] uint64_t simulation_steps() const noexcept;

  /// Runtime internals for troupe's own components.
  [[nodiscard]] internal::RuntimeImpl& impl() noexcept { return *impl_; }
  /// Where this runtime's actors run, for the components below its modes.
  [[nodiscard]] internal::Executor& executor() noexcept;

private:
  friend class SimulatedCluster;
  Runtime(const Simulation& simulation, int tag);
  /// A task of a SimulatedCluster.
  explicit Runtime(std::unique_ptr<internal::RuntimeImpl> impl);

  std::unique_ptr<internal::RuntimeImpl> impl_;
};

} // namespace troupe

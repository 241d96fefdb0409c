#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/fwd.hpp>

namespace troupe {

/// One job of a Slurm cluster and how many of the step's tasks it takes.
struct SlurmJob {
  std::string name{};
  int num_tasks = 0;
};

/// Arguments of a SlurmClusterResolver (TensorFlow's constructor arguments).
struct SlurmClusterResolverOptions {
  /// Jobs in the order they take the step's tasks; empty: {"worker", every task}.
  /// Jobs of 0 tasks are left out of the cluster.
  std::vector<SlurmJob> jobs{};
  /// Port of the first task on each node; the k-th task of a node gets port_base + k.
  int port_base = 8888;
  /// GPUs per node; unset: the entries of CUDA_VISIBLE_DEVICES, else of
  /// SLURM_STEP_GPUS, else 0.
  std::optional<int> gpus_per_node{};
  /// GPUs per task; unset: gpus_per_node divided by the most tasks on one node.
  std::optional<int> gpus_per_task{};
  /// Tasks on every node; unset: SLURM_STEP_TASKS_PER_NODE, else SLURM_TASKS_PER_NODE.
  std::optional<int> tasks_per_node{};
  /// Whether the environment-reading constructor sets CUDA_VISIBLE_DEVICES to
  /// this task's GPUs (when it has any), as TensorFlow's auto_set_gpu.
  bool auto_set_gpu = true;
  std::string rpc_layer = "grpc";
};

/// A ClusterResolver for processes started by Slurm's srun, one task per
/// process, as tf.distribute.cluster_resolver.SlurmClusterResolver.
///
/// Reads SLURM_PROCID (this task's rank in the step), SLURM_STEP_NODELIST (or
/// SLURM_JOB_NODELIST; see expand_hostlist), SLURM_STEP_TASKS_PER_NODE (or
/// SLURM_TASKS_PER_NODE, e.g. "2(x3),1"; see expand_tasks_per_node) and, when
/// set, SLURM_STEP_NUM_TASKS (or SLURM_NTASKS), which must match the sum of
/// tasks per node. Tasks are laid out node by node in nodelist order (Slurm's
/// block distribution); the k-th task on a node listens on port_base + k and
/// uses GPUs k * gpus_per_task .. (k + 1) * gpus_per_task - 1 of its node. Jobs
/// then take consecutive ranks in the order given: with jobs {worker: 3, ps: 1}
/// ranks 0-2 are worker tasks 0-2 and rank 3 is ps task 0.
///
/// Everything is resolved once, in the constructor. A missing variable, a
/// malformed value, job sizes that do not add up to the step's tasks or more
/// GPUs per node than available are Error(invalid_argument) naming the
/// variable or option and the fix.
class SlurmClusterResolver final : public ClusterResolver {
public:
  /// Variable name -> value, standing in for the process environment.
  using Environment = std::map<std::string, std::string>;

  /// Reads the process environment.
  explicit SlurmClusterResolver(SlurmClusterResolverOptions options = {});

  /// Reads `env` instead of the process environment (for tests and launchers);
  /// never sets CUDA_VISIBLE_DEVICES.
  SlurmClusterResolver(SlurmClusterResolverOptions options, const Environment& env);

  // -- properties --------------------------------------------------------------

  [[nodiscard]] ClusterSpec cluster_spec() const override { return cluster_; }
  [[nodiscard]] std::string task_type() const override { return task_type_; }
  [[nodiscard]] int task_id() const override { return task_id_; }
  [[nodiscard]] std::string rpc_layer() const override { return rpc_layer_; }

  /// {"GPU": gpus_per_task}, as TensorFlow.
  [[nodiscard]] std::map<std::string, int> num_accelerators() const override;

  /// This task's rank in the Slurm step (SLURM_PROCID).
  [[nodiscard]] int rank() const noexcept { return rank_; }

  /// This task's GPUs as a CUDA_VISIBLE_DEVICES value ("2,3"); "" without GPUs.
  /// Entries come from the node's CUDA_VISIBLE_DEVICES or SLURM_STEP_GPUS list
  /// when one is set, else they are indices.
  [[nodiscard]] const std::string& visible_devices() const noexcept { return visible_devices_; }

private:
  ClusterSpec cluster_;
  std::string task_type_;
  int task_id_ = -1;
  std::string rpc_layer_;
  int rank_ = 0;
  int gpus_per_task_ = 0;
  std::string visible_devices_;
};

} // namespace troupe

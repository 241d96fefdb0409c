#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <troupe/net/cluster_spec.hpp>
#include <troupe/net/fwd.hpp>

namespace troupe {

/// Where a task finds its cluster, as tf.distribute.cluster_resolver.ClusterResolver.
///
/// A resolver answers which jobs and tasks the cluster has (cluster_spec())
/// and which of them this process is (task_type(), task_id()). Subclasses
/// read it from TF_CONFIG (TFConfigClusterResolver), from Slurm
/// (SlurmClusterResolver) or take it as given (SimpleClusterResolver).
/// Resolvers are immutable after construction and safe to share between
/// threads.
class ClusterResolver {
public:
  virtual ~ClusterResolver() = default;

  // -- properties --------------------------------------------------------------

  /// The cluster this task belongs to; empty for a single process.
  [[nodiscard]] virtual ClusterSpec cluster_spec() const = 0;

  /// The job of this task ("worker", "chief", ...); "" when unknown (TF: None).
  [[nodiscard]] virtual std::string task_type() const = 0;

  /// The index of this task in its job; -1 when unknown (TF: None).
  [[nodiscard]] virtual int task_id() const = 0;

  /// The protocol prefix of master() URLs ("grpc"); "" for none.
  [[nodiscard]] virtual std::string rpc_layer() const { return {}; }

  /// The environment the cluster runs in ("google", "cloud"); "" when unknown.
  [[nodiscard]] virtual std::string environment() const { return {}; }

  /// Accelerators of this task by type, e.g. {"GPU": 2}; the default counts none.
  [[nodiscard]] virtual std::map<std::string, int> num_accelerators() const;

  /// The address of task (`task_type`, `task_id`) as "<rpc_layer>://host:port",
  /// or bare "host:port" when the rpc layer is "" (TF's master()).
  ///
  /// Empty or negative arguments default to this task and rpc_layer(). Returns
  /// "" when the cluster is empty or the task is unknown; Error(invalid_argument)
  /// when the task is not in the cluster.
  [[nodiscard]] virtual std::string master(std::string_view task_type = {}, int task_id = -1,
                                           std::string_view rpc_layer = {}) const;

  /// The resolver of this process's environment, read once:
  /// 1. TFConfigClusterResolver when TF_CONFIG is set and not empty;
  /// 2. else SlurmClusterResolver (default options) when SLURM_PROCID and
  ///    SLURM_STEP_NODELIST or SLURM_JOB_NODELIST are set;
  /// 3. else a TFConfigClusterResolver over an empty cluster (a single process).
  /// Errors of the chosen resolver propagate (Error(invalid_argument)).
  [[nodiscard]] static std::shared_ptr<ClusterResolver> from_env();

protected:
  /// Checks that (`task_type`, `task_id`) names a task of `cluster`, the
  /// evaluator excepted (tf.distribute runs it outside the cluster, as index
  /// 0). `source` says where the values came from ("TF_CONFIG's \"task\"");
  /// errors name it and the fix.
  static void check_task(const ClusterSpec& cluster, std::string_view task_type, int task_id,
                         std::string_view source);

  /// "grpc://host:port" or "host:port" when `rpc_layer` is empty (TF's format_master_url).
  [[nodiscard]] static std::string format_master_url(std::string_view address,
                                                     std::string_view rpc_layer);
};

} // namespace troupe

#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/fwd.hpp>

namespace troupe {

/// The cluster of a TPU slice, as tf.distribute.cluster_resolver.TPUClusterResolver.
///
/// troupe has no TPU hardware: its TPUs are the emulated cores of
/// RuntimeOptions::logical_tpu_cores, so the only TPUs are local ones:
///
/// - TPUClusterResolver("") or ("local") with no TF_CONFIG (or one with an
///   empty cluster): this host, as TensorFlow's local TPU resolver: an empty
///   cluster_spec(), master() "", task "worker" 0.
/// - The same with TF_CONFIG naming a cluster with a "worker" job: a slice
///   over several hosts, one per worker task. cluster_spec() and the task come
///   from TF_CONFIG (as TFConfigClusterResolver reads it; this task must be a
///   worker) and master() is "grpc://<this worker's address>".
///
/// Any other name is Error(not_found) naming it. num_accelerators() is
/// {"TPU": this host's cores}, known once initialize_tpu_system(rt, resolver)
/// connected the resolver to a runtime; copies of a resolver share that state.
class TPUClusterResolver final : public ClusterResolver {
public:
  /// Reads TF_CONFIG from the environment (see the class comment).
  explicit TPUClusterResolver(std::string tpu = "");

  /// The slice over the cluster `cluster` describes, as this task sees it:
  /// `TPUClusterResolver("", *rt.cluster_resolver())` is the same in a
  /// TF_CONFIG cluster and in a task of a SimulatedCluster, which has no
  /// TF_CONFIG of its own.
  TPUClusterResolver(std::string tpu, const ClusterResolver& cluster);

  /// As the constructor, with `tf_config` in place of the environment's
  /// TF_CONFIG (for tests and embedding; "" or "{}" is no cluster).
  [[nodiscard]] static TPUClusterResolver from_tf_config(std::string tpu, std::string_view tf_config);

  // -- properties --------------------------------------------------------------

  /// The TPU's name as TensorFlow reports it for a local TPU: "local".
  [[nodiscard]] const std::string& tpu() const noexcept { return tpu_; }
  [[nodiscard]] ClusterSpec cluster_spec() const override { return cluster_; }
  /// "worker", as TensorFlow's job_name.
  [[nodiscard]] std::string task_type() const override { return task_type_; }
  [[nodiscard]] int task_id() const override { return task_id_; }
  /// "grpc" for a slice over several hosts, "" for a local one.
  [[nodiscard]] std::string rpc_layer() const override { return cluster_.empty() ? "" : "grpc"; }

  /// {"TPU": the cores of this host}; Error(failed_precondition) until
  /// initialize_tpu_system(rt, resolver) has connected this resolver (or a copy).
  [[nodiscard]] std::map<std::string, int> num_accelerators() const override;

  /// "" for a local TPU; else "grpc://" and the address of (`task_type`,
  /// `task_id`) when both are given, of this task otherwise (TensorFlow
  /// always uses grpc here: `rpc_layer` is ignored, as there). A task not in
  /// the cluster is Error(invalid_argument).
  [[nodiscard]] std::string master(std::string_view task_type = {}, int task_id = -1,
                                   std::string_view rpc_layer = {}) const override;

  /// The TopologyProto bytes initialize_tpu_system recorded (TensorFlow's
  /// set_tpu_topology); nullopt before.
  [[nodiscard]] std::optional<std::string> tpu_topology() const;

  /// Called by initialize_tpu_system: this host has `cores_per_host` TPU cores
  /// of the slice `serialized_topology` describes. Visible to every copy.
  void connect_tpu_system(int cores_per_host, std::string serialized_topology);

private:
  struct TpuSystemState;

  std::string tpu_;
  ClusterSpec cluster_;
  std::string task_type_ = "worker";
  int task_id_ = 0;
  std::shared_ptr<TpuSystemState> state_;
};

} // namespace troupe

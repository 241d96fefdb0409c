#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/fwd.hpp>

namespace troupe {

/// A ClusterResolver that reads the TF_CONFIG environment variable, as
/// tf.distribute.cluster_resolver.TFConfigClusterResolver.
///
/// TF_CONFIG is a JSON object such as
///
///     {"cluster": {"worker": ["host1:2222", "host2:2222"], "ps": ["host3:2222"]},
///      "task": {"type": "worker", "index": 0},
///      "rpc_layer": "grpc", "environment": "cloud"}
///
/// Every key is optional; a missing or empty TF_CONFIG, or "{}", is an empty
/// cluster with an unknown task ("", -1). "index" missing from "task" leaves
/// task_id() at -1, as TensorFlow leaves it None. Unknown keys are ignored.
///
/// Unlike TensorFlow, which re-reads TF_CONFIG on every call, troupe reads and
/// checks it once, in the constructor, and reports every problem there as
/// Error(invalid_argument) that names TF_CONFIG and quotes the offending part:
/// malformed JSON (byte offset and the text around it), a "cluster" that is
/// not an object of job -> list of "host:port" strings (TensorFlow's sparse
/// {index: address} form is refused), a malformed or duplicate address, more
/// than one "chief" or "evaluator", a cluster of more than one task without a
/// "task" (or without its "type" or "index"), a task type that is not a job of
/// the cluster (the evaluator excepted, as tf.distribute does), an index that
/// is not an integer or is outside its job.
class TFConfigClusterResolver final : public ClusterResolver {
public:
  /// Reads TF_CONFIG from the environment. The explicit arguments override
  /// the corresponding TF_CONFIG values, as TensorFlow's constructor arguments do;
  /// the combined task is checked against the cluster.
  explicit TFConfigClusterResolver(std::optional<std::string> task_type = std::nullopt,
                                   std::optional<int> task_id = std::nullopt,
                                   std::optional<std::string> rpc_layer = std::nullopt,
                                   std::optional<std::string> environment = std::nullopt);

  /// Parses `tf_config` instead of the environment (for tests and embedding).
  [[nodiscard]] static TFConfigClusterResolver from_json(std::string_view tf_config);

  // -- properties --------------------------------------------------------------

  [[nodiscard]] ClusterSpec cluster_spec() const override { return cluster_; }
  [[nodiscard]] std::string task_type() const override { return task_type_; }
  [[nodiscard]] int task_id() const override { return task_id_; }
  /// The override, else TF_CONFIG's "rpc_layer", else "".
  [[nodiscard]] std::string rpc_layer() const override { return rpc_layer_; }
  /// The override, else TF_CONFIG's "environment", else "".
  [[nodiscard]] std::string environment() const override { return environment_; }

  /// As ClusterResolver::master, with TensorFlow's two TF_CONFIG rules:
  /// TF_CONFIG's "session_master" wins when set, and a cluster of at most one
  /// task gives "".
  [[nodiscard]] std::string master(std::string_view task_type = {}, int task_id = -1,
                                   std::string_view rpc_layer = {}) const override;

private:
  struct Overrides {
    std::optional<std::string> task_type;
    std::optional<int> task_id;
    std::optional<std::string> rpc_layer;
    std::optional<std::string> environment;
  };

  TFConfigClusterResolver(Overrides overrides, std::string_view tf_config);

  ClusterSpec cluster_;
  std::string task_type_;
  int task_id_ = -1;
  std::string rpc_layer_;
  std::string environment_;
  std::string session_master_;
};

} // namespace troupe

#pragma once

#include <map>
#include <string>
#include <string_view>

#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/fwd.hpp>

namespace troupe {

/// What a SimpleClusterResolver reports besides its cluster; the fields are
/// the arguments of TensorFlow's SimpleClusterResolver.
struct SimpleClusterResolverOptions {
  /// Returned by master() when it is not asked for a specific task.
  std::string master{};
  /// This task's job; "" when unknown.
  std::string task_type{};
  /// This task's index in its job; -1 when unknown.
  int task_id = -1;
  std::string environment{};
  /// Accelerators of this task by type, e.g. {{"GPU", 2}}.
  std::map<std::string, int> num_accelerators{};
  /// Protocol prefix of master() URLs, e.g. "grpc"; "" for none.
  std::string rpc_layer{};
};

/// A ClusterResolver that returns what it was given, as
/// tf.distribute.cluster_resolver.SimpleClusterResolver:
///
///     SimpleClusterResolver resolver(spec, {.task_type = "worker", .task_id = 1});
///
/// When both task_type and task_id are set they must name a task of the
/// cluster (the evaluator excepted); a negative accelerator count is refused.
/// Both are Error(invalid_argument).
class SimpleClusterResolver final : public ClusterResolver {
public:
  explicit SimpleClusterResolver(ClusterSpec cluster_spec,
                                 SimpleClusterResolverOptions options = {});

  // -- properties --------------------------------------------------------------

  [[nodiscard]] ClusterSpec cluster_spec() const override { return cluster_; }
  [[nodiscard]] std::string task_type() const override { return options_.task_type; }
  [[nodiscard]] int task_id() const override { return options_.task_id; }
  [[nodiscard]] std::string rpc_layer() const override { return options_.rpc_layer; }
  [[nodiscard]] std::string environment() const override { return options_.environment; }
  [[nodiscard]] std::map<std::string, int> num_accelerators() const override {
    return options_.num_accelerators;
  }

  /// As TensorFlow: the address of (`task_type`, `task_id`) when both are
  /// given, else the `master` option; prefixed with "<rpc_layer>://" when an
  /// rpc layer is given or set.
  [[nodiscard]] std::string master(std::string_view task_type = {}, int task_id = -1,
                                   std::string_view rpc_layer = {}) const override;

private:
  ClusterSpec cluster_;
  SimpleClusterResolverOptions options_;
};

} // namespace troupe

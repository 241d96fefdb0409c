#pragma once

#include <optional>

#include <troupe/actors/fwd.hpp>
#include <troupe/strategies/partitioners.hpp>
#include <troupe/strategies/sharded_variable.hpp>
#include <troupe/strategies/strategy.hpp>

namespace troupe {

/// Asynchronous parameter-server training
/// (tf.distribute.experimental.ParameterServerStrategy, v2): variables live on
/// parameter-server tasks, and a ClusterCoordinator hands functions to worker
/// tasks, each of which trains on its own.
///
/// Made on the coordinator of a parameter-server cluster: a Runtime of
/// LocalCluster, of a Simulation with workers and ps, or (across processes)
/// the chief task of a TF_CONFIG cluster with worker and ps jobs.
/// num_replicas_in_sync is the devices of one worker: strategy.run inside a
/// scheduled function runs on that worker's replicas, and outside one on the
/// coordinator's own devices.
class ParameterServerStrategy final : public Strategy {
public:
  /// Throws TensorFlow's errors for a cluster without a ps or worker task
  /// ("There must be at least one ps.", "There must be at least one worker.").
  /// With a partitioner, variables are split along axis 0 into shards on
  /// several parameter servers.
  explicit ParameterServerStrategy(Runtime& runtime, std::optional<Partitioner> variable_partitioner = std::nullopt);
  ~ParameterServerStrategy() override;

  /// Creates a variable on the parameter servers, in this strategy's scope
  /// (tf.Variable under ParameterServerStrategy): whole on the next parameter
  /// server in round-robin order, or, when the partitioner asks for several
  /// shards, split along axis 0 with each shard on the next server. Scalars
  /// are never split. Names are made unique as Strategy::create_variable's.
  /// Inside a scheduled function it is Error(failed_precondition): create
  /// variables before scheduling.
  [[nodiscard]] ShardedVariable create_variable(const Tensor& initial, const VariableOptions& options = {});

  [[nodiscard]] int num_workers_in_cluster() const noexcept;
  [[nodiscard]] int num_ps() const noexcept;
  [[nodiscard]] const std::optional<Partitioner>& variable_partitioner() const noexcept;

  /// The runtime the cluster runs on.
  [[nodiscard]] Runtime& runtime() const noexcept;
};

} // namespace troupe

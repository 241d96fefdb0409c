#pragma once

/// troupe: TensorFlow's tf.distribute model for C++, built on CAF actors.
/// This one header is all an application includes.

#include <troupe/build_config.hpp>

#include <troupe/core/denormals.hpp>
#include <troupe/core/device_spec.hpp>
#include <troupe/core/dtype.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/ops/check_numerics.hpp>
#include <troupe/ops/nn_ops.hpp>
#include <troupe/ops/portable_math.hpp>
#include <troupe/ops/random.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/ops/tensor_ops.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/actors/seed_runner.hpp>
#include <troupe/actors/simulated_cluster.hpp>

#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/cluster_spec.hpp>
#include <troupe/net/simple_cluster_resolver.hpp>
#include <troupe/net/slurm_cluster_resolver.hpp>
#include <troupe/net/tf_config_cluster_resolver.hpp>
#include <troupe/net/tpu_cluster_resolver.hpp>

#include <troupe/datasets/auto_shard.hpp>
#include <troupe/datasets/dataset.hpp>
#include <troupe/datasets/dataset_options.hpp>
#include <troupe/datasets/element.hpp>
#include <troupe/datasets/idx.hpp>
#include <troupe/datasets/input_context.hpp>
#include <troupe/datasets/rebatch.hpp>
#include <troupe/datasets/tensor_spec.hpp>
#include <troupe/datasets/text_line_dataset.hpp>
#include <troupe/datasets/tfrecord_dataset.hpp>
#include <troupe/datasets/tfrecord_writer.hpp>

#include <troupe/collectives/communication_options.hpp>
#include <troupe/collectives/reduce_op.hpp>

#include <troupe/strategies/checkpoint.hpp>
#include <troupe/strategies/closure_codec.hpp>
#include <troupe/strategies/cluster_coordinator.hpp>
#include <troupe/strategies/distributed_dataset.hpp>
#include <troupe/strategies/device_assignment.hpp>
#include <troupe/strategies/distributed_values.hpp>
#include <troupe/strategies/mirrored_strategy.hpp>
#include <troupe/strategies/multi_step_context.hpp>
#include <troupe/strategies/multi_worker_mirrored_strategy.hpp>
#include <troupe/strategies/one_device_strategy.hpp>
#include <troupe/strategies/parameter_server_strategy.hpp>
#include <troupe/strategies/per_worker.hpp>
#include <troupe/strategies/partitioners.hpp>
#include <troupe/strategies/reduce_destination.hpp>
#include <troupe/strategies/remote_function.hpp>
#include <troupe/strategies/remote_value.hpp>
#include <troupe/strategies/replica_context.hpp>
#include <troupe/strategies/round_robin_placement.hpp>
#include <troupe/strategies/run_options.hpp>
#include <troupe/strategies/shard_layout.hpp>
#include <troupe/strategies/sharded_variable.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/strategy_extended.hpp>
#include <troupe/strategies/strategy_scope.hpp>
#include <troupe/strategies/tpu_extended.hpp>
#include <troupe/strategies/tpu_strategy.hpp>
#include <troupe/strategies/tpu_system.hpp>
#include <troupe/strategies/tpu_topology.hpp>
#include <troupe/strategies/value_context.hpp>
#include <troupe/strategies/variable.hpp>
#include <troupe/strategies/variable_colocation.hpp>

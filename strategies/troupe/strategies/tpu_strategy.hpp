#pragma once

#include <optional>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/net/tpu_cluster_resolver.hpp>
#include <troupe/strategies/device_assignment.hpp>
#include <troupe/strategies/logical_device_tensor.hpp>
#include <troupe/strategies/run_options.hpp>
#include <troupe/strategies/strategy.hpp>
#include <troupe/strategies/tpu_extended.hpp>

namespace troupe {

/// Synchronous training on the emulated TPU cores of a TPU slice
/// (tf.distribute.TPUStrategy, and tf.compat.v1.distribute.experimental.TPUStrategy
/// with steps_per_run). The cores are CPU threads laid out as a TPU topology
/// (RuntimeOptions::logical_tpu_cores): a TPU program's distribution logic
/// runs here, with TPUStrategy's rules, on any machine.
///
/// Create it after initialize_tpu_system(rt, resolver); before, it is
/// Error(failed_precondition) saying so. One replica per core (or per block of
/// cores of the device assignment); run, reduce, gather, replica contexts
/// and collectives are as for MirroredStrategy, with the TPU rules:
/// - all_gather and gather need the same shape on every replica
///   (Error(invalid_argument) naming each replica's shape);
/// - CommunicationOptions' bytes_per_pack does not apply (TPUs pack themselves);
/// - experimental_distribute_dataset needs static shapes: a dataset whose last
///   batch is partial is Error(invalid_argument) naming drop_remainder=True,
///   unless RunOptions::experimental_enable_dynamic_batch_size pads it.
class TPUStrategy final : public Strategy {
public:
  /// tf.distribute.TPUStrategy(tpu_cluster_resolver, experimental_device_assignment):
  /// steps_per_run is 1.
  TPUStrategy(Runtime& runtime, const TPUClusterResolver& resolver,
              std::optional<DeviceAssignment> device_assignment = std::nullopt);
  /// tf.compat.v1.distribute.experimental.TPUStrategy(tpu_cluster_resolver,
  /// steps_per_run, device_assignment): the host hands the cores
  /// `steps_per_run` (>= 1) steps at a time in extended().experimental_run_steps_on_iterator.
  TPUStrategy(Runtime& runtime, const TPUClusterResolver& resolver, int steps_per_run,
              std::optional<DeviceAssignment> device_assignment = std::nullopt);
  ~TPUStrategy() override;

  /// The resolver the strategy was made with.
  [[nodiscard]] const ClusterResolver* cluster_resolver() const noexcept override { return &resolver_; }
  [[nodiscard]] TPUExtended& extended() noexcept;
  [[nodiscard]] const TPUExtended& extended() const noexcept;
  /// Deprecated in TensorFlow: extended().steps_per_run().
  [[nodiscard]] int steps_per_run() const noexcept { return extended().steps_per_run(); }

  using Strategy::experimental_distribute_dataset;
  /// experimental_distribute_dataset with `run_options`: with
  /// experimental_enable_dynamic_batch_size a partial batch is padded (see RunOptions).
  [[nodiscard]] DistributedDataset experimental_distribute_dataset(const Dataset& dataset, const RunOptions& run_options,
                                                                   const InputOptions& options = {});

  // -- model parallelism: a replica of several logical cores --------------------
  // In replica context (inside strategy.run's function, or a multi-step
  // loop's) these place `tensor` on the calling replica's logical cores
  // (extended().logical_devices(replica), extended().num_cores_per_replica()
  // of them) and return the placed value. TensorFlow's validation comes first,
  // with its texts, as Error(invalid_argument); then cross-replica context is
  // Error(failed_precondition) (TensorFlow fails there too: its annotation
  // needs a traced function).

  /// tf.distribute.TPUStrategy.experimental_assign_to_logical_device: the whole
  /// tensor on logical core `logical_device_id` (0 <= id < num_cores_per_replica()).
  [[nodiscard]] LogicalDeviceTensor experimental_assign_to_logical_device(const Tensor& tensor,
                                                                          int logical_device_id) const;
  /// tf.distribute.TPUStrategy.experimental_split_to_logical_devices: `tensor`
  /// cut into num_cores_per_replica() equal tiles, dimension d in
  /// partition_dimensions[d] parts, tile k (row-major over the parts) on
  /// logical core k. One entry per dimension, each dividing its dimension
  /// (TensorFlow 2.21 pads no uneven split), their product the cores per replica.
  [[nodiscard]] LogicalDeviceTensor experimental_split_to_logical_devices(
    const Tensor& tensor, const std::vector<int>& partition_dimensions) const;
  /// tf.distribute.TPUStrategy.experimental_replicate_to_logical_devices: a
  /// copy of `tensor` on every logical core of the replica.
  [[nodiscard]] LogicalDeviceTensor experimental_replicate_to_logical_devices(const Tensor& tensor) const;

private:
  /// The calling replica's logical cores; Error(failed_precondition) outside its replica context.
  [[nodiscard]] const std::vector<DeviceSpec>& calling_replica_cores(const char* method) const;

  TPUClusterResolver resolver_;
};

} // namespace troupe

#pragma once

#include <optional>

#include <troupe/actors/fwd.hpp>
#include <troupe/net/tpu_cluster_resolver.hpp>
#include <troupe/strategies/device_assignment.hpp>
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

private:
  TPUClusterResolver resolver_;
};

} // namespace troupe

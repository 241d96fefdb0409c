#include <troupe/strategies/tpu_strategy.hpp>

#include <troupe/actors/runtime.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/distributed_input.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/tpu_system.hpp>

namespace troupe {

namespace {

// The Topology initialize_tpu_system recorded; using TPUs before it is TensorFlow's error too.
Topology initialized_topology(const Runtime& runtime) {
  auto topology = initialized_tpu_topology(runtime);
  if (!topology)
    fail(Errc::failed_precondition,
         "TPUStrategy: the TPU system is not initialized: call troupe::initialize_tpu_system(rt, resolver) "
         "before creating the strategy (tf.tpu.experimental.initialize_tpu_system)");
  return *topology;
}

std::unique_ptr<TPUExtended> make_extended(Runtime& runtime, std::optional<DeviceAssignment> assignment,
                                           int steps_per_run) {
  return std::make_unique<TPUExtended>(runtime, initialized_topology(runtime), std::move(assignment), steps_per_run);
}

} // namespace

TPUStrategy::TPUStrategy(Runtime& runtime, const TPUClusterResolver& resolver,
                         std::optional<DeviceAssignment> device_assignment)
  : TPUStrategy(runtime, resolver, 1, std::move(device_assignment)) {}

TPUStrategy::TPUStrategy(Runtime& runtime, const TPUClusterResolver& resolver, int steps_per_run,
                         std::optional<DeviceAssignment> device_assignment)
  : Strategy(make_extended(runtime, std::move(device_assignment), steps_per_run)), resolver_(resolver) {
  extended().start();
}

TPUStrategy::~TPUStrategy() = default;

TPUExtended& TPUStrategy::extended() noexcept {
  return static_cast<TPUExtended&>(Strategy::extended());
}

const TPUExtended& TPUStrategy::extended() const noexcept {
  return static_cast<const TPUExtended&>(Strategy::extended());
}

DistributedDataset TPUStrategy::experimental_distribute_dataset(const Dataset& dataset, const RunOptions& run_options,
                                                                const InputOptions& options) {
  detail::require_cross_replica(*this, "experimental_distribute_dataset");
  return internal::distribute_dataset(extended(), dataset, options, run_options.experimental_enable_dynamic_batch_size);
}

} // namespace troupe

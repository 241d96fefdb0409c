#include <troupe/strategies/tpu_strategy.hpp>

#include <limits>
#include <string>

#include <troupe/actors/runtime.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/distributed_input.hpp>
#include <troupe/strategies/context_frame.hpp>
#include <troupe/strategies/replica_context.hpp>
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

std::string method_name(const char* method) {
  return std::string("TPUStrategy.") + method;
}

void require_tensor(const Tensor& tensor, const char* method) {
  if (!tensor.valid())
    fail(Errc::invalid_argument, method_name(method) + ": `tensor` is an empty Tensor handle; pass a tensor with a value");
}

// Python's str() of a list of ints: "[2, 1]".
std::string python_list(const std::vector<int>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return text + "]";
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

const std::vector<DeviceSpec>& TPUStrategy::calling_replica_cores(const char* method) const {
  const auto* frame = detail::current_context_frame();
  if (frame == nullptr || frame->strategy != this || frame->replica == nullptr)
    fail(Errc::failed_precondition,
         method_name(method) + " was called outside this strategy's replica context: call it inside the function "
                               "given to strategy.run, where it places the tensor on the calling replica's logical "
                               "cores (cross-replica context has no calling replica; TensorFlow fails there too)");
  const int first_local = extended().worker_index() * static_cast<int>(extended().worker_devices().size());
  return extended().logical_devices(frame->replica->replica_id_in_sync_group() - first_local);
}

LogicalDeviceTensor TPUStrategy::experimental_assign_to_logical_device(const Tensor& tensor,
                                                                       int logical_device_id) const {
  constexpr const char* method = "experimental_assign_to_logical_device";
  require_tensor(tensor, method);
  // TensorFlow's check and text (including its "lower then").
  const int cores = extended().num_cores_per_replica();
  if (logical_device_id < 0 || logical_device_id >= cores)
    fail(Errc::invalid_argument,
         method_name(method) + ": `logical_core_id` to assign must be lower then total number of logical devices per "
                               "replica. Received logical device id " + std::to_string(logical_device_id)
           + " but there are only total of " + std::to_string(cores) + " logical devices in replica.");
  return LogicalDeviceTensor::assign(tensor, logical_device_id, calling_replica_cores(method));
}

LogicalDeviceTensor TPUStrategy::experimental_split_to_logical_devices(
  const Tensor& tensor, const std::vector<int>& partition_dimensions) const {
  constexpr const char* method = "experimental_split_to_logical_devices";
  require_tensor(tensor, method);
  // TensorFlow's checks, in its order and with its texts.
  const Shape& shape = tensor.shape();
  if (static_cast<size_t>(shape.rank()) != partition_dimensions.size())
    fail(Errc::invalid_argument, method_name(method) + ": Length of `partition_dimensions` must equal to the rank of "
                                                       "`tensor.shape` (" + std::to_string(shape.rank())
                                   + "). Received len(partition_dimensions)="
                                   + std::to_string(partition_dimensions.size()) + ".");
  for (int d = 0; d < shape.rank(); ++d) {
    const int parts = partition_dimensions[static_cast<size_t>(d)];
    // Python would raise ZeroDivisionError (or split nothing) here; name the input instead.
    if (parts < 1)
      fail(Errc::invalid_argument, method_name(method) + ": `partition_dimensions[" + std::to_string(d)
                                     + "]` must be at least 1 (the number of parts dimension " + std::to_string(d)
                                     + " is split into). Received: " + std::to_string(parts) + ".");
    if (shape[d] % parts != 0)
      fail(Errc::invalid_argument, method_name(method) + ": Tensor shape at `partition_dimensions["
                                     + std::to_string(d) + "]` must be divisible by corresponding value specified "
                                     "by `partition_dimensions` (" + std::to_string(parts) + "). Received: "
                                     + std::to_string(shape[d]) + ".");
  }
  // Parts of an empty dimension divide it, so the product can exceed int64: say so rather than wrap.
  int64_t product = 1;
  bool overflows = false;
  for (const int parts : partition_dimensions) {
    overflows = overflows || product > std::numeric_limits<int64_t>::max() / parts;
    product = overflows ? product : product * parts;
  }
  const int cores = extended().num_cores_per_replica();
  if (overflows || product != cores)
    // numpy's prod of an empty list is the float 1.0.
    fail(Errc::invalid_argument,
         method_name(method) + ": The product of `partition_dimensions` should be the same as the number of logical "
                               "devices (=" + std::to_string(cores) + "). Received `partition_dimensions`="
           + python_list(partition_dimensions) + ",and their product is "
           + (overflows                     ? std::string("beyond int64")
              : partition_dimensions.empty() ? std::string("1.0")
                                             : std::to_string(product))
           + ".");
  return LogicalDeviceTensor::split(tensor, partition_dimensions, calling_replica_cores(method));
}

LogicalDeviceTensor TPUStrategy::experimental_replicate_to_logical_devices(const Tensor& tensor) const {
  constexpr const char* method = "experimental_replicate_to_logical_devices";
  require_tensor(tensor, method);
  return LogicalDeviceTensor::replicate(tensor, calling_replica_cores(method));
}

} // namespace troupe

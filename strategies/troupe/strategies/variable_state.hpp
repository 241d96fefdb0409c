#pragma once

// What a Variable handle points to, and the helpers strategies/*.cpp share to
// read and write it. Internal to troupe_strategies: not installed.

#include <memory>
#include <string>
#include <vector>

#include <troupe/core/device_spec.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/fwd.hpp>
#include <troupe/strategies/variable.hpp>

namespace troupe::detail {

/// The shared state of a Variable. `copies[i]` is local replica i's copy, a
/// tensor tagged with `devices[i]`; it is replaced (never written in place)
/// by replica i in replica context or by the caller in cross-replica context.
struct VariableState {
  std::string name;
  DType dtype = DType::float32;
  Shape shape;
  VariableSynchronization synchronization = VariableSynchronization::ON_WRITE;
  VariableAggregation aggregation = VariableAggregation::NONE;
  bool trainable = true;
  Strategy* strategy = nullptr;
  std::vector<DeviceSpec> devices;
  std::vector<Tensor> copies;
};

} // namespace troupe::detail

namespace troupe::internal {

/// The friend of Variable that strategies/*.cpp go through.
struct VariableAccess {
  [[nodiscard]] static Variable wrap(std::shared_ptr<detail::VariableState> state) {
    return Variable(std::move(state));
  }
  /// The state; Error(invalid_argument) naming `method` for an empty handle.
  [[nodiscard]] static detail::VariableState& state(const Variable& variable, const char* method);
};

/// A new variable's state after checking `initial` and `options` against the
/// strategy (TensorFlow's errors); its name is left for the caller to make unique.
[[nodiscard]] std::shared_ptr<detail::VariableState>
new_variable_state(Strategy& strategy, const Tensor& initial, const VariableOptions& options,
                   std::vector<DeviceSpec> devices);

/// The replica context the caller is in for `state`'s strategy, or nullptr in
/// its cross-replica context; Error(failed_precondition) under another strategy.
[[nodiscard]] ReplicaContext* variable_context(const detail::VariableState& state, const char* method);

/// The local index (into `copies`) of the replica `context` belongs to.
[[nodiscard]] int local_replica(const detail::VariableState& state, const ReplicaContext& context);

/// Error(dtype_mismatch / shape_mismatch) unless `value` fits the variable.
void check_value(const detail::VariableState& state, const Tensor& value, const char* method);

/// read_value() in cross-replica context (ON_READ copies aggregated).
/// The caller must be in the strategy's cross-replica context.
[[nodiscard]] Tensor cross_replica_value(const detail::VariableState& state, const char* method);

/// assign(value) in cross-replica context, after check_value.
void cross_replica_assign(detail::VariableState& state, const Tensor& value);

} // namespace troupe::internal

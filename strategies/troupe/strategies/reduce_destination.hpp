#pragma once

#include <string>
#include <utility>

#include <troupe/strategies/variable.hpp>

namespace troupe {

/// Where StrategyExtended::reduce_to and batch_reduce_to put a result
/// (TensorFlow's `destinations`): the devices of a variable's copies, or one
/// device. Converts implicitly from either, as TensorFlow accepts either.
class ReduceDestination {
public:
  /// The devices of `variable`'s copies: the result has one component per copy.
  ReduceDestination(const Variable& variable) : variable_(variable) {} // NOLINT(google-explicit-constructor)
  /// One device in any TensorFlow spelling ("CPU:0", "/cpu:1"); the runtime must have it.
  ReduceDestination(std::string device) : device_(std::move(device)) {} // NOLINT(google-explicit-constructor)
  ReduceDestination(const char* device) : device_(device) {}            // NOLINT(google-explicit-constructor)

  /// The variable, or an empty handle for a device destination.
  [[nodiscard]] const Variable& variable() const noexcept { return variable_; }
  /// The device, or "" for a variable destination.
  [[nodiscard]] const std::string& device() const noexcept { return device_; }

private:
  Variable variable_;
  std::string device_;
};

} // namespace troupe

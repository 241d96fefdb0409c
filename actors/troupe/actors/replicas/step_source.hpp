#pragma once

#include <optional>
#include <vector>

#include <troupe/datasets/element.hpp>

namespace troupe::internal {

/// Produces the steps of a distributed dataset: one element per local replica
/// per step, or nothing at the end. Runs inside an input actor (or on the
/// calling thread for strategies without a runtime); throws pipeline errors.
class StepSource {
public:
  virtual ~StepSource() = default;
  [[nodiscard]] virtual std::optional<std::vector<Element>> next_step() = 0;
};

} // namespace troupe::internal

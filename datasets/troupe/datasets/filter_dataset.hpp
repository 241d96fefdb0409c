#pragma once

// The node behind Dataset::filter (internal: not installed).

#include <functional>
#include <memory>
#include <optional>

#include <troupe/datasets/function_dataset.hpp>

namespace troupe::internal {

/// The input elements for which `predicate` is true (tf.data's FilterDataset).
class FilterDataset : public FunctionDataset<FilterDataset, std::function<bool(const Element&)>> {
public:
  using Predicate = Function;

  /// Error(invalid_argument) for an empty predicate.
  FilterDataset(std::shared_ptr<const detail::DatasetNode> input, Predicate predicate);
  /// Shares `predicate` (its state, for a mutable lambda) with another node.
  FilterDataset(std::shared_ptr<const detail::DatasetNode> input,
                std::shared_ptr<Predicate> predicate);

  [[nodiscard]] std::string describe() const override { return "filter(predicate)"; }

  /// The next input element for which `predicate` is true.
  [[nodiscard]] static std::optional<Element> next_element(detail::ElementIterator& input,
                                                           const Predicate& predicate);
};

} // namespace troupe::internal

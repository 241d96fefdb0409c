#pragma once

// The node behind Dataset::map (internal: not installed).

#include <functional>
#include <memory>
#include <optional>

#include <troupe/datasets/function_dataset.hpp>

namespace troupe::internal {

/// `fn` applied to each input element (tf.data's MapDataset). The element
/// spec is learned from the first element (DatasetNode's default).
class MapDataset : public FunctionDataset<MapDataset, std::function<Element(const Element&)>> {
public:
  /// Error(invalid_argument) for an empty function.
  MapDataset(std::shared_ptr<const detail::DatasetNode> input, Function fn);
  /// Shares `fn` (its state, for a mutable lambda) with another node.
  MapDataset(std::shared_ptr<const detail::DatasetNode> input, std::shared_ptr<Function> fn);

  [[nodiscard]] std::string describe() const override { return "map(fn)"; }

  /// `fn` of the next input element.
  [[nodiscard]] static std::optional<Element> next_element(detail::ElementIterator& input,
                                                           const Function& fn);
};

} // namespace troupe::internal

#pragma once

// The node behind Dataset::map (internal: not installed).

#include <functional>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// `fn` applied to each input element (tf.data's MapDataset). The function is
/// shared by every iterator of the node and called on the iterating thread;
/// what it throws propagates unchanged. The element spec is learned from the
/// first element (DatasetNode's default).
class MapDataset : public UnaryDataset {
public:
  using Function = std::function<Element(const Element&)>;

  /// Error(invalid_argument) for an empty function.
  MapDataset(std::shared_ptr<const detail::DatasetNode> input, Function fn);
  /// Shares `fn` (its state, for a mutable lambda) with another node.
  MapDataset(std::shared_ptr<const detail::DatasetNode> input, std::shared_ptr<Function> fn);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] std::string describe() const override { return "map(fn)"; }
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

private:
  std::shared_ptr<Function> fn_;
};

} // namespace troupe::internal

#pragma once

// The node behind Dataset::from_tensors (internal: not installed).

#include <troupe/datasets/dataset_node.hpp>

namespace troupe::internal {

/// One element, the given one (tf.data's TensorDataset).
class TensorDataset : public detail::DatasetNode {
public:
  /// Error(invalid_argument) for an empty (default-constructed) element.
  explicit TensorDataset(Element element);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] ElementSpec element_spec() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

private:
  Element element_;
};

} // namespace troupe::internal

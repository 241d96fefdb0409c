#pragma once

// The node behind Dataset::from_tensor_slices (internal: not installed).

#include <cstdint>

#include <troupe/datasets/dataset_node.hpp>

namespace troupe::internal {

/// One element per row of axis 0 of every component (tf.data's
/// TensorSliceDataset). The slices are zero-copy views of the given tensors.
class TensorSlicesDataset : public detail::DatasetNode {
public:
  /// Error(invalid_argument) for a scalar component or an empty element;
  /// Error(shape_mismatch) when components differ in their row count.
  explicit TensorSlicesDataset(Element element);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] ElementSpec element_spec() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  /// The number of elements (rows of axis 0).
  [[nodiscard]] int64_t rows() const noexcept { return rows_; }

private:
  Element element_;
  int64_t rows_ = 0;
};

} // namespace troupe::internal

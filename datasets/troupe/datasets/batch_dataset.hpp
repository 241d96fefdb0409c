#pragma once

// The node behind Dataset::batch (internal: not installed).

#include <cstdint>
#include <span>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// Stacks `batch_size` consecutive input elements along a new axis 0
/// (tf.data's BatchDataset); the last batch may be smaller unless drop_remainder.
class BatchDataset : public UnaryDataset {
public:
  /// Error(invalid_argument) when batch_size is not positive.
  BatchDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t batch_size,
               bool drop_remainder);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] ElementSpec element_spec() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  [[nodiscard]] int64_t batch_size() const noexcept { return batch_size_; }
  [[nodiscard]] bool drop_remainder() const noexcept { return drop_remainder_; }

private:
  int64_t batch_size_;
  bool drop_remainder_;
};

/// The elements stacked component-wise along a new axis 0, copying each
/// element's bytes once. All elements need the same structure (else
/// Error(invalid_argument)), and per component the same dtype
/// (Error(dtype_mismatch)) and shape (Error(shape_mismatch)); the messages
/// name the first element and the offending one. `elements` must not be empty.
[[nodiscard]] Element stack_elements(std::span<const Element> elements);

} // namespace troupe::internal

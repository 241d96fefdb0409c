#pragma once

// The node behind Dataset::enumerate (internal: not installed).

#include <cstdint>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// (index, element) tuples, the index an int64 scalar counting from `start`.
/// A tuple element is flattened into the tuple: (index, a, b), as an Element
/// cannot nest (TensorFlow yields (index, (a, b))).
class EnumerateDataset : public UnaryDataset {
public:
  EnumerateDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t start);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] ElementSpec element_spec() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  [[nodiscard]] int64_t start() const noexcept { return start_; }

private:
  int64_t start_;
};

} // namespace troupe::internal

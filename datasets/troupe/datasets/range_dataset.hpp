#pragma once

// The node behind Dataset::range (internal: not installed).

#include <cstdint>

#include <troupe/datasets/dataset_node.hpp>

namespace troupe::internal {

/// int64 scalars start, start + step, ... up to (excluding) stop (tf.data's RangeDataset).
class RangeDataset : public detail::DatasetNode {
public:
  /// Error(invalid_argument) when step is 0.
  RangeDataset(int64_t start, int64_t stop, int64_t step);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] ElementSpec element_spec() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  [[nodiscard]] int64_t start() const noexcept { return start_; }
  [[nodiscard]] int64_t stop() const noexcept { return stop_; }
  [[nodiscard]] int64_t step() const noexcept { return step_; }

private:
  int64_t start_;
  int64_t stop_;
  int64_t step_;
};

} // namespace troupe::internal

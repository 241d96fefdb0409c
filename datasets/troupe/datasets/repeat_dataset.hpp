#pragma once

// The node behind Dataset::repeat (internal: not installed).

#include <cstdint>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// The input `count` times, each pass from a fresh input iterator (tf.data's
/// RepeatDataset). A negative count repeats forever, as in TensorFlow; an
/// input that yields nothing on a fresh pass ends the repetition instead of
/// spinning.
class RepeatDataset : public UnaryDataset {
public:
  RepeatDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t count);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  /// Passes over the input; negative for forever.
  [[nodiscard]] int64_t count() const noexcept { return count_; }

private:
  int64_t count_;
};

} // namespace troupe::internal

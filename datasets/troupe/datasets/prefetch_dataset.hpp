#pragma once

// The node behind Dataset::prefetch (internal: not installed).

#include <cstdint>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// Marks where an input actor should keep buffer_size() elements ready ahead
/// of its consumer (tf.data's PrefetchDataset). Iterated on the calling
/// thread it passes the input's elements through unchanged.
class PrefetchDataset : public UnaryDataset {
public:
  /// TensorFlow's tf.data.AUTOTUNE; troupe resolves it to kAutotuneBufferSize.
  static constexpr int64_t kAutotune = -1;
  static constexpr int64_t kAutotuneBufferSize = 2;

  /// Error(invalid_argument) unless buffer_size is positive or kAutotune.
  PrefetchDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t buffer_size);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override {
    return input_->iterator();
  }
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  /// Elements to prepare ahead (AUTOTUNE resolved); always positive.
  [[nodiscard]] int64_t buffer_size() const noexcept {
    return requested_ == kAutotune ? kAutotuneBufferSize : requested_;
  }
  /// What the caller passed (kAutotune or a positive size).
  [[nodiscard]] int64_t requested_buffer_size() const noexcept { return requested_; }

private:
  int64_t requested_;
};

} // namespace troupe::internal

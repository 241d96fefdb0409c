#pragma once

// The nodes behind Dataset::take and Dataset::skip (internal: not installed).

#include <cstdint>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// The first `count` input elements; a negative count takes all (tf.data's TakeDataset).
class TakeDataset : public UnaryDataset {
public:
  TakeDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t count);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  [[nodiscard]] int64_t count() const noexcept { return count_; }

private:
  int64_t count_;
};

/// All but the first `count` input elements; a negative count skips all
/// (tf.data's SkipDataset).
class SkipDataset : public UnaryDataset {
public:
  SkipDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t count);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  [[nodiscard]] int64_t count() const noexcept { return count_; }

private:
  int64_t count_;
};

} // namespace troupe::internal

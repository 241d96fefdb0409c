#pragma once

// The node behind Dataset::shard (internal: not installed).

#include <cstdint>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// Every num_shards-th input element starting at index (tf.data's ShardDataset).
class ShardDataset : public UnaryDataset {
public:
  /// Error(invalid_argument) unless num_shards > 0 and 0 <= index < num_shards.
  ShardDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t num_shards, int64_t index);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

  [[nodiscard]] int64_t num_shards() const noexcept { return num_shards_; }
  [[nodiscard]] int64_t index() const noexcept { return index_; }

private:
  int64_t num_shards_;
  int64_t index_;
};

} // namespace troupe::internal

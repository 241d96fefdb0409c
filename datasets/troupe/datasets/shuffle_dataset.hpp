#pragma once

// The node behind Dataset::shuffle (internal: not installed).

#include <atomic>
#include <cstdint>
#include <optional>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// Shuffles through a buffer of buffer_size elements (tf.data's ShuffleDataset):
/// fill the buffer, then repeatedly emit a uniformly chosen slot and refill it
/// with the next input element; once the input ends, drain the buffer in
/// random order.
///
/// Every iterator draws from std::mt19937_64 seeded with a seed derived from
/// the node's base seed (the given seed, else one drawn from std::random_device
/// when the node is built) and, when reshuffle_each_iteration, the number of
/// iterators made before it, so a seeded pipeline produces the same sequence
/// of orders run to run, and each pass (repeat) is shuffled anew. Peeking at
/// the element spec does not count as a pass.
class ShuffleDataset : public UnaryDataset {
public:
  /// Error(invalid_argument) when buffer_size is not positive.
  ShuffleDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t buffer_size,
                 std::optional<uint64_t> seed, bool reshuffle_each_iteration);
  /// As above with the base seed given (with_input keeps an unseeded node's draw).
  ShuffleDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t buffer_size,
                 std::optional<uint64_t> seed, uint64_t base_seed, bool reshuffle_each_iteration);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;
  /// Unseeded only: the same shuffle with `seed` as its base seed.
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode> with_drawn_seed(uint64_t seed) const override;

  [[nodiscard]] int64_t buffer_size() const noexcept { return buffer_size_; }
  [[nodiscard]] std::optional<uint64_t> seed() const noexcept { return seed_; }
  [[nodiscard]] bool reshuffle_each_iteration() const noexcept { return reshuffle_; }

private:
  int64_t buffer_size_;
  std::optional<uint64_t> seed_;
  uint64_t base_seed_;
  bool reshuffle_;
  // Iterators made so far: the one piece of state a shared node keeps, so
  // each pass gets its own seed.
  mutable std::atomic<uint64_t> iterations_{0};
};

} // namespace troupe::internal

#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>

namespace troupe {

/// Decides how many shards a variable created in a ParameterServerStrategy's
/// scope is split into (tf.distribute.experimental.partitioners.Partitioner).
///
/// Only axis 0 is ever split, so where TensorFlow's partitioners return one
/// count per axis (`[2, 1]`), a troupe partitioner returns the count for axis 0
/// (`2`). A count of 1 keeps the variable whole; the strategy never asks about
/// a scalar. Pass one of FixedShardsPartitioner, MinSizePartitioner and
/// MaxSizePartitioner (they convert to Partitioner), or a custom function:
///
///     troupe::Partitioner by_rows("TwoShards", [](const troupe::Shape& s, troupe::DType) {
///       return s[0] >= 2 ? int64_t{2} : int64_t{1}; });
///
/// A Partitioner is a copyable value; calling it has no side effects.
class Partitioner {
public:
  /// Returns the number of shards along axis 0 for a variable of `shape` and `dtype`.
  using ShardCount = std::function<int64_t(const Shape& shape, DType dtype)>;

  /// A custom partitioner. `name` identifies it in error messages. Throws
  /// Error(invalid_argument) when `shard_count` is empty.
  Partitioner(std::string name, ShardCount shard_count);

  /// The number of shards along axis 0 that this partitioner asks for, as it
  /// returned it (ShardLayout::for_variable validates it and caps it at shape[0]).
  [[nodiscard]] int64_t operator()(const Shape& shape, DType dtype) const;

  /// "MinSizePartitioner(min_shard_bytes=262144, max_shards=2)", or a custom one's name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

private:
  std::string name_;
  ShardCount shard_count_;
};

/// A fixed number of shards: `min(num_shards, shape[0])`
/// (tf.distribute.experimental.partitioners.FixedShardsPartitioner).
/// FixedShardsPartitioner(2) on shape (10, 3) gives 2.
class FixedShardsPartitioner {
public:
  /// Throws Error(invalid_argument) when `num_shards` < 1.
  explicit FixedShardsPartitioner(int64_t num_shards);

  /// `min(num_shards, shape[0])` (0 for a variable with 0 rows, as TensorFlow,
  /// which ParameterServerStrategy rejects); 1 for a scalar.
  [[nodiscard]] int64_t operator()(const Shape& shape, DType dtype) const;
  [[nodiscard]] std::string name() const;
  [[nodiscard]] int64_t num_shards() const noexcept { return num_shards_; }

  /// Lets it be passed where a Partitioner is expected.
  operator Partitioner() const; // NOLINT(google-explicit-constructor)

private:
  int64_t num_shards_;
};

/// As many shards as possible with at least `min_shard_bytes` each, at most
/// `max_shards` (tf.distribute.experimental.partitioners.MinSizePartitioner):
/// `max(1, min(shape[0], max_shards, ceil(total_bytes / min_shard_bytes)))`.
/// MinSizePartitioner(256 << 10, 2) on float32 (784, 256) (784 KiB) gives 2.
class MinSizePartitioner {
public:
  /// TensorFlow's defaults: 256 KiB, 1 shard. Throws Error(invalid_argument)
  /// when either argument is < 1. (troupe has no string dtype, so TensorFlow's
  /// `bytes_per_string` argument does not exist here.)
  explicit MinSizePartitioner(int64_t min_shard_bytes = int64_t{256} << 10, int64_t max_shards = 1);

  [[nodiscard]] int64_t operator()(const Shape& shape, DType dtype) const;
  [[nodiscard]] std::string name() const;
  [[nodiscard]] int64_t min_shard_bytes() const noexcept { return min_shard_bytes_; }
  [[nodiscard]] int64_t max_shards() const noexcept { return max_shards_; }

  /// Lets it be passed where a Partitioner is expected.
  operator Partitioner() const; // NOLINT(google-explicit-constructor)

private:
  int64_t min_shard_bytes_;
  int64_t max_shards_;
};

/// As few shards as possible with at most `max_shard_bytes` each
/// (tf.distribute.experimental.partitioners.MaxSizePartitioner): whole rows
/// per shard `max(1, floor(max_shard_bytes / row_bytes))`, shards
/// `ceil(shape[0] / rows_per_shard)`, then at most `max_shards` when set (so a
/// shard may then exceed `max_shard_bytes`). MaxSizePartitioner(4) on float32
/// (6, 1) gives 6; MaxSizePartitioner(4, 2) gives 2; MaxSizePartitioner(1024) gives 1.
class MaxSizePartitioner {
public:
  /// `max_shards` unset: no limit (TensorFlow's None). Throws
  /// Error(invalid_argument) when `max_shard_bytes` < 1 or a set `max_shards` < 1.
  explicit MaxSizePartitioner(int64_t max_shard_bytes,
                              std::optional<int64_t> max_shards = std::nullopt);

  /// 1 for a scalar and for a variable with 0 rows or 0-byte rows (TensorFlow
  /// divides by zero there).
  [[nodiscard]] int64_t operator()(const Shape& shape, DType dtype) const;
  [[nodiscard]] std::string name() const;
  [[nodiscard]] int64_t max_shard_bytes() const noexcept { return max_shard_bytes_; }
  [[nodiscard]] std::optional<int64_t> max_shards() const noexcept { return max_shards_; }

  /// Lets it be passed where a Partitioner is expected.
  operator Partitioner() const; // NOLINT(google-explicit-constructor)

private:
  int64_t max_shard_bytes_;
  std::optional<int64_t> max_shards_;
};

} // namespace troupe

#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/partitioners.hpp>

namespace troupe {

/// How a variable of `full_shape` is split into shards along axis 0, as
/// TensorFlow's ParameterServerStrategy splits it ("div" partitioning): with
/// `rows` rows over `n` shards every shard gets `rows / n` rows and the first
/// `rows % n` shards one more (13 rows over 5 shards: 3, 3, 3, 2, 2). Only axis
/// 0 is split; a scalar is never split; the count is capped at shape[0].
///
/// A ShardLayout is an immutable value; ShardedVariable keeps one to map rows
/// to shards and to split or join whole values.
class ShardLayout {
public:
  /// `num_shards` shards (as a partitioner asked for) of `full_shape`, capped at
  /// full_shape[0]. A scalar, or a variable with 0 rows, stays one shard. Throws
  /// Error(invalid_argument) when `num_shards` < 1 or a dimension is negative.
  ShardLayout(Shape full_shape, int64_t num_shards);

  /// The layout ParameterServerStrategy gives a new variable
  /// (`_create_variable`): whole without a partitioner or for a scalar;
  /// otherwise the partitioner's count, which must be at least 1 (TensorFlow:
  /// "variable_partitioner must return ... (non-zero)"; Error(invalid_argument)
  /// naming the partitioner, its result and the shape).
  [[nodiscard]] static ShardLayout for_variable(const Shape& full_shape, DType dtype,
                                                const std::optional<Partitioner>& partitioner);

  // -- properties -------------------------------------------------------------

  [[nodiscard]] const Shape& full_shape() const noexcept { return full_shape_; }
  /// The number of shards after capping at shape[0]; 1 for an unsplit variable.
  [[nodiscard]] int64_t num_shards() const noexcept { return static_cast<int64_t>(rows_.size()); }
  /// True when the variable becomes a ShardedVariable: the partitioner asked
  /// for more than one shard of a non-scalar. As in TensorFlow this stays true
  /// when capping leaves one shard (a 1-row variable asked for 3 shards is a
  /// ShardedVariable of 1 shard).
  [[nodiscard]] bool is_sharded() const noexcept { return sharded_; }

  /// Rows of shard `shard` along axis 0 (the whole dimension for a scalar: 1).
  [[nodiscard]] int64_t rows(int64_t shard) const;
  /// First row of shard `shard` in the full variable.
  [[nodiscard]] int64_t row_offset(int64_t shard) const;
  /// TensorFlow's `offsets`: num_shards() + 1 entries, the first row of each
  /// shard followed by shape[0] (10 rows over 4 shards: 0, 3, 6, 8, 10).
  [[nodiscard]] std::vector<int64_t> offsets() const;
  /// `full_shape` with axis 0 set to rows(shard); `full_shape` itself for a scalar.
  [[nodiscard]] Shape shard_shape(int64_t shard) const;
  /// The shard holding full-variable row `row` (Error(out_of_range) outside [0, shape[0])).
  [[nodiscard]] int64_t shard_of_row(int64_t row) const;

  // -- values -----------------------------------------------------------------

  /// The shards of `full`, which must have full_shape(): zero-copy views
  /// sharing its buffer (writing through one copies it first). One element,
  /// `full` itself, when the layout has one shard.
  [[nodiscard]] std::vector<Tensor> split(const Tensor& full) const;

  /// Joins `shards` (num_shards() tensors of shard_shape(i), one dtype) back
  /// into the full value; Error(invalid_argument / shape_mismatch) names the
  /// first one that does not fit.
  [[nodiscard]] Tensor concat(const std::vector<Tensor>& shards) const;

private:
  void check_shard(int64_t shard) const;

  Shape full_shape_;
  std::vector<int64_t> rows_;
  bool sharded_ = false;
};

} // namespace troupe

// The split follows TensorFlow's ParameterServerStrategyExtended._create_variable in
// tensorflow/python/distribute/parameter_server_strategy_v2.py.
#include <troupe/strategies/shard_layout.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_ops.hpp>

namespace troupe {

ShardLayout::ShardLayout(Shape full_shape, int64_t num_shards)
  : full_shape_(std::move(full_shape)) {
  if (num_shards < 1)
    fail(Errc::invalid_argument, "ShardLayout: num_shards is " + std::to_string(num_shards)
                                   + " for a variable of shape " + full_shape_.to_string()
                                   + "; pass at least 1 (1 keeps the variable whole)");
  for (int64_t dim : full_shape_.dims())
    if (dim < 0)
      fail(Errc::invalid_argument, "ShardLayout: shape " + full_shape_.to_string()
                                     + " has a negative dimension; pass a fully defined shape");
  if (full_shape_.rank() == 0) {
    rows_ = {1}; // a scalar is never split
    return;
  }
  sharded_ = num_shards > 1;
  const int64_t total = full_shape_[0];
  // TensorFlow caps the count at shape[0]; a variable with 0 rows stays one (empty) shard.
  const int64_t n = std::max<int64_t>(1, std::min(num_shards, total));
  const int64_t base = total / n;
  const int64_t extra = total % n;
  rows_.reserve(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    rows_.push_back(base + (i < extra ? 1 : 0));
}

ShardLayout ShardLayout::for_variable(const Shape& full_shape, DType dtype,
                                      const std::optional<Partitioner>& partitioner) {
  if (!partitioner || full_shape.rank() == 0)
    return ShardLayout{full_shape, 1};
  const int64_t requested = (*partitioner)(full_shape, dtype);
  if (requested < 1)
    fail(Errc::invalid_argument,
         "ParameterServerStrategy: the variable_partitioner " + partitioner->name() + " returned "
           + std::to_string(requested) + " shards for a " + std::string{name(dtype)}
           + " variable of shape " + full_shape.to_string()
           + "; a partitioner must return at least 1 shard (a variable with 0 rows cannot be "
             "split by FixedShardsPartitioner: give it rows, or use MinSizePartitioner or "
             "MaxSizePartitioner, which keep it whole)");
  return ShardLayout{full_shape, requested};
}

// -- properties -----------------------------------------------------------------------

void ShardLayout::check_shard(int64_t shard) const {
  if (shard < 0 || shard >= num_shards())
    fail(Errc::out_of_range, "ShardLayout: shard " + std::to_string(shard)
                               + " does not exist; a variable of shape " + full_shape_.to_string()
                               + " has shards 0.." + std::to_string(num_shards() - 1));
}

int64_t ShardLayout::rows(int64_t shard) const {
  check_shard(shard);
  return rows_[static_cast<std::size_t>(shard)];
}

int64_t ShardLayout::row_offset(int64_t shard) const {
  check_shard(shard);
  int64_t offset = 0;
  for (int64_t i = 0; i < shard; ++i)
    offset += rows_[static_cast<std::size_t>(i)];
  return offset;
}

std::vector<int64_t> ShardLayout::offsets() const {
  std::vector<int64_t> result{0};
  for (int64_t r : rows_)
    result.push_back(result.back() + r);
  return result;
}

Shape ShardLayout::shard_shape(int64_t shard) const {
  check_shard(shard);
  if (full_shape_.rank() == 0)
    return full_shape_;
  return full_shape_.with_dim(0, rows_[static_cast<std::size_t>(shard)]);
}

int64_t ShardLayout::shard_of_row(int64_t row) const {
  if (full_shape_.rank() == 0)
    fail(Errc::invalid_argument, "ShardLayout: a scalar variable has no rows; read it whole");
  if (row < 0 || row >= full_shape_[0])
    fail(Errc::out_of_range,
         "ShardLayout: row " + std::to_string(row) + " is out of range for a variable of shape "
           + full_shape_.to_string() + "; need 0 <= row < " + std::to_string(full_shape_[0]));
  // The first `extra` shards hold base + 1 rows each, the rest base rows.
  const int64_t n = num_shards();
  const int64_t base = full_shape_[0] / n;
  const int64_t extra = full_shape_[0] % n;
  const int64_t rows_in_long_shards = extra * (base + 1);
  if (row < rows_in_long_shards)
    return row / (base + 1);
  return extra + (row - rows_in_long_shards) / base;
}

// -- values ---------------------------------------------------------------------------

std::vector<Tensor> ShardLayout::split(const Tensor& full) const {
  if (!full.valid())
    fail(Errc::invalid_argument, "ShardLayout::split: the tensor is empty (default-constructed); "
                                 "pass the variable's full value");
  if (full.shape() != full_shape_)
    fail(Errc::shape_mismatch, "ShardLayout::split: the value has shape " + full.shape().to_string()
                                 + " but the variable has shape " + full_shape_.to_string()
                                 + "; pass a value of the variable's shape");
  if (num_shards() == 1)
    return {full};
  std::vector<Tensor> shards;
  shards.reserve(rows_.size());
  int64_t begin = 0;
  for (int64_t r : rows_) {
    shards.push_back(full.slice(begin, begin + r));
    begin += r;
  }
  return shards;
}

Tensor ShardLayout::concat(const std::vector<Tensor>& shards) const {
  if (static_cast<int64_t>(shards.size()) != num_shards())
    fail(Errc::invalid_argument, "ShardLayout::concat: got " + std::to_string(shards.size())
                                   + " shards but a variable of shape " + full_shape_.to_string()
                                   + " has " + std::to_string(num_shards())
                                   + "; pass every shard in order");
  for (std::size_t i = 0; i < shards.size(); ++i) {
    if (!shards[i].valid())
      fail(Errc::invalid_argument, "ShardLayout::concat: shard " + std::to_string(i)
                                     + " is an empty tensor; pass every shard's value");
    const Shape expected = shard_shape(static_cast<int64_t>(i));
    if (shards[i].shape() != expected)
      fail(Errc::shape_mismatch, "ShardLayout::concat: shard " + std::to_string(i) + " has shape "
                                   + shards[i].shape().to_string() + " but shard "
                                   + std::to_string(i) + " of a variable of shape "
                                   + full_shape_.to_string() + " has shape "
                                   + expected.to_string());
  }
  if (shards.size() == 1)
    return shards.front();
  return troupe::concat(shards, 0);
}

} // namespace troupe

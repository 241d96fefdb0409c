// The shard counts follow TensorFlow's tensorflow/python/distribute/sharded_variable.py
// (FixedShardsPartitioner, MinSizePartitioner, MaxSizePartitioner) and the functions they
// call in tensorflow/python/ops/partitioned_variables.py (min_max_variable_partitioner,
// variable_axis_size_partitioner), computed in exact integer arithmetic.
#include <troupe/strategies/partitioners.hpp>

#include <algorithm>
#include <utility>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

// TensorFlow's "Argument `x` must be positive. Received: v", with the class and the fix.
void require_positive(const char* partitioner, const char* argument, int64_t value,
                      const char* fix) {
  if (value >= 1)
    return;
  fail(Errc::invalid_argument, std::string{partitioner} + ": argument `" + argument
                                 + "` must be positive. Received: " + std::to_string(value) + "; "
                                 + fix);
}

int64_t ceil_div(int64_t numerator, int64_t denominator) {
  return numerator / denominator + (numerator % denominator != 0 ? 1 : 0);
}

int64_t bytes_of(const Shape& shape, DType dtype) {
  return shape.num_elements() * static_cast<int64_t>(size_of(dtype));
}

} // namespace

// -- Partitioner ----------------------------------------------------------------------

Partitioner::Partitioner(std::string name, ShardCount shard_count)
  : name_(std::move(name)), shard_count_(std::move(shard_count)) {
  if (!shard_count_)
    fail(Errc::invalid_argument, "Partitioner '" + name_
                                   + "': the shard-count function is empty; pass a function "
                                     "(const Shape&, DType) -> int64_t");
}

int64_t Partitioner::operator()(const Shape& shape, DType dtype) const {
  return shard_count_(shape, dtype);
}

// -- FixedShardsPartitioner -------------------------------------------------------------

FixedShardsPartitioner::FixedShardsPartitioner(int64_t num_shards) : num_shards_(num_shards) {
  // TensorFlow does not check num_shards; a non-positive count can only be a mistake.
  require_positive("FixedShardsPartitioner", "num_shards", num_shards,
                   "pass the number of shards to split each variable into, at least 1");
}

int64_t FixedShardsPartitioner::operator()(const Shape& shape, DType) const {
  if (shape.rank() == 0)
    return 1;
  return std::min(num_shards_, shape[0]);
}

std::string FixedShardsPartitioner::name() const {
  return "FixedShardsPartitioner(num_shards=" + std::to_string(num_shards_) + ")";
}

FixedShardsPartitioner::operator Partitioner() const {
  return Partitioner{name(), *this};
}

// -- MinSizePartitioner -----------------------------------------------------------------

MinSizePartitioner::MinSizePartitioner(int64_t min_shard_bytes, int64_t max_shards)
  : min_shard_bytes_(min_shard_bytes), max_shards_(max_shards) {
  require_positive("MinSizePartitioner", "min_shard_bytes", min_shard_bytes,
                   "pass the smallest shard size in bytes, e.g. 256 << 10 (the default)");
  require_positive("MinSizePartitioner", "max_shards", max_shards,
                   "pass the largest number of shards, at least 1");
}

int64_t MinSizePartitioner::operator()(const Shape& shape, DType dtype) const {
  if (shape.rank() == 0)
    return 1;
  // min_max_variable_partitioner: max(1, min(shape[0], max_partitions,
  // ceil(total_size_bytes / min_slice_size))).
  const int64_t by_size = ceil_div(bytes_of(shape, dtype), min_shard_bytes_);
  return std::max<int64_t>(1, std::min({shape[0], max_shards_, by_size}));
}

std::string MinSizePartitioner::name() const {
  return "MinSizePartitioner(min_shard_bytes=" + std::to_string(min_shard_bytes_)
         + ", max_shards=" + std::to_string(max_shards_) + ")";
}

MinSizePartitioner::operator Partitioner() const {
  return Partitioner{name(), *this};
}

// -- MaxSizePartitioner -----------------------------------------------------------------

MaxSizePartitioner::MaxSizePartitioner(int64_t max_shard_bytes, std::optional<int64_t> max_shards)
  : max_shard_bytes_(max_shard_bytes), max_shards_(max_shards) {
  require_positive("MaxSizePartitioner", "max_shard_bytes", max_shard_bytes,
                   "pass the largest shard size in bytes, e.g. (64 << 20) - 1");
  // TensorFlow skips this check for max_shards=0 (0 is falsy in Python) and then
  // treats it as "no limit"; here "no limit" is std::nullopt and 0 is a mistake.
  if (max_shards_)
    require_positive("MaxSizePartitioner", "max_shards", *max_shards_,
                     "pass the largest number of shards, at least 1, or std::nullopt for no limit");
}

int64_t MaxSizePartitioner::operator()(const Shape& shape, DType dtype) const {
  if (shape.rank() == 0 || shape[0] == 0)
    return 1;
  // variable_axis_size_partitioner: bytes_per_slice = (num_elements / shape[0]) * element_size,
  // slices_per_shard = max(1, floor(max_shard_bytes / bytes_per_slice)),
  // axis_shards = ceil(shape[0] / slices_per_shard), then min(max_shards, axis_shards).
  const int64_t row_bytes = bytes_of(shape, dtype) / shape[0];
  if (row_bytes == 0)
    return 1;
  const int64_t rows_per_shard = std::max<int64_t>(1, max_shard_bytes_ / row_bytes);
  const int64_t shards = ceil_div(shape[0], rows_per_shard);
  return max_shards_ ? std::min(*max_shards_, shards) : shards;
}

std::string MaxSizePartitioner::name() const {
  return "MaxSizePartitioner(max_shard_bytes=" + std::to_string(max_shard_bytes_)
         + ", max_shards=" + (max_shards_ ? std::to_string(*max_shards_) : "None") + ")";
}

MaxSizePartitioner::operator Partitioner() const {
  return Partitioner{name(), *this};
}

} // namespace troupe

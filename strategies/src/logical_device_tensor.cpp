#include <troupe/strategies/logical_device_tensor.hpp>

#include <cstring>
#include <string>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

/// A copy of `tensor`'s bytes owned by `device` (a core keeps its own copy, as in its own memory).
Tensor copy_on(const Tensor& tensor, const DeviceSpec& device) {
  Tensor copy = Tensor::empty(tensor.shape(), tensor.dtype(), device);
  if (tensor.nbytes() > 0)
    std::memcpy(copy.mutable_raw_data(), tensor.raw_data(), tensor.nbytes());
  return copy;
}

/// Calls `copy_row(full_offset, tile_offset, bytes)` for each row of the tile
/// of `full_shape` that starts at `origin` and has `tile_shape` (offsets in
/// bytes): a row along the last dimension is contiguous in both.
template <class CopyRow>
void for_each_tile_row(const Shape& full_shape, const Shape& tile_shape,
                       const std::vector<int64_t>& origin, std::size_t element_size,
                       CopyRow&& copy_row) {
  const int rank = full_shape.rank();
  if (tile_shape.num_elements() == 0)
    return;
  if (rank == 0) {
    copy_row(0, 0, element_size);
    return;
  }
  std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d)
    stride[static_cast<size_t>(d)] = stride[static_cast<size_t>(d) + 1] * full_shape[d + 1];
  const std::size_t row_bytes = static_cast<std::size_t>(tile_shape[rank - 1]) * element_size;
  const int64_t rows = tile_shape.num_elements() / tile_shape[rank - 1];
  std::vector<int64_t> index(static_cast<size_t>(rank), 0); // within the tile; the last stays 0
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d)
      offset += (origin[static_cast<size_t>(d)] + index[static_cast<size_t>(d)])
                * stride[static_cast<size_t>(d)];
    copy_row(static_cast<std::size_t>(offset) * element_size,
             static_cast<std::size_t>(r) * row_bytes, row_bytes);
    for (int d = rank - 2; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < tile_shape[d])
        break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

/// The shape of each of the equal tiles `partition_dimensions` cuts `shape` into.
Shape tile_shape_of(const Shape& shape, const std::vector<int>& partition_dimensions) {
  std::vector<int64_t> dims = shape.dims();
  for (size_t d = 0; d < dims.size(); ++d)
    dims[d] /= partition_dimensions[d];
  return Shape(std::move(dims));
}

/// Where tile `k` starts: tiles are numbered row-major over the partition grid,
/// as XLA's tile assignment np.arange(n).reshape(partition_dimensions).
std::vector<int64_t> tile_origin(int k, const Shape& tile_shape,
                                 const std::vector<int>& partition_dimensions) {
  std::vector<int64_t> origin(partition_dimensions.size(), 0);
  for (int d = static_cast<int>(partition_dimensions.size()) - 1; d >= 0; --d) {
    const int parts = partition_dimensions[static_cast<size_t>(d)];
    origin[static_cast<size_t>(d)] = static_cast<int64_t>(k % parts) * tile_shape[d];
    k /= parts;
  }
  return origin;
}

} // namespace

LogicalDeviceTensor::LogicalDeviceTensor(Sharding sharding, const Tensor& tensor,
                                         std::vector<int> partition_dimensions, DeviceSpec home)
  : sharding_(sharding), dtype_(tensor.dtype()), shape_(tensor.shape()),
    partition_dimensions_(std::move(partition_dimensions)), home_(std::move(home)) {}

LogicalDeviceTensor LogicalDeviceTensor::assign(const Tensor& tensor, int logical_core,
                                                const std::vector<DeviceSpec>& cores) {
  LogicalDeviceTensor result(Sharding::assigned, tensor,
                             std::vector<int>(static_cast<size_t>(tensor.rank()), 1),
                             cores.front());
  const auto& device = cores.at(static_cast<size_t>(logical_core));
  result.shards_.push_back(copy_on(tensor, device));
  result.logical_cores_.push_back(logical_core);
  result.devices_.push_back(device);
  return result;
}

LogicalDeviceTensor LogicalDeviceTensor::split(const Tensor& tensor,
                                               const std::vector<int>& partition_dimensions,
                                               const std::vector<DeviceSpec>& cores) {
  LogicalDeviceTensor result(Sharding::split, tensor, partition_dimensions, cores.front());
  const Shape tile = tile_shape_of(tensor.shape(), partition_dimensions);
  const std::byte* full = tensor.raw_data();
  for (int k = 0; k < static_cast<int>(cores.size()); ++k) {
    const auto& device = cores[static_cast<size_t>(k)];
    Tensor shard = Tensor::empty(tile, tensor.dtype(), device);
    std::byte* out = shard.mutable_raw_data();
    for_each_tile_row(tensor.shape(), tile, tile_origin(k, tile, partition_dimensions),
                      size_of(tensor.dtype()),
                      [&](std::size_t full_at, std::size_t tile_at, std::size_t bytes) {
                        std::memcpy(out + tile_at, full + full_at, bytes);
                      });
    result.shards_.push_back(std::move(shard));
    result.logical_cores_.push_back(k);
    result.devices_.push_back(device);
  }
  return result;
}

LogicalDeviceTensor LogicalDeviceTensor::replicate(const Tensor& tensor,
                                                   const std::vector<DeviceSpec>& cores) {
  LogicalDeviceTensor result(Sharding::replicated, tensor,
                             std::vector<int>(static_cast<size_t>(tensor.rank()), 1),
                             cores.front());
  for (int k = 0; k < static_cast<int>(cores.size()); ++k) {
    result.shards_.push_back(copy_on(tensor, cores[static_cast<size_t>(k)]));
    result.logical_cores_.push_back(k);
    result.devices_.push_back(cores[static_cast<size_t>(k)]);
  }
  return result;
}

const Tensor& LogicalDeviceTensor::shard_on(int logical_core) const {
  for (size_t i = 0; i < logical_cores_.size(); ++i)
    if (logical_cores_[i] == logical_core)
      return shards_[i];
  if (sharding_ == Sharding::assigned)
    fail(Errc::invalid_argument, "LogicalDeviceTensor::shard_on: logical core "
                                   + std::to_string(logical_core)
                                   + " holds no shard: the tensor is assigned to logical core "
                                   + std::to_string(logical_cores_.front()) + " only");
  fail(Errc::invalid_argument, "LogicalDeviceTensor::shard_on: logical core "
                                 + std::to_string(logical_core)
                                 + " does not exist: the replica has logical cores 0.."
                                 + std::to_string(logical_cores_.size() - 1));
}

Tensor LogicalDeviceTensor::read() const {
  if (sharding_ != Sharding::split)
    return shards_.front().on_device(home_);
  Tensor whole = Tensor::empty(shape_, dtype_, home_);
  const Shape tile = tile_shape_of(shape_, partition_dimensions_);
  std::byte* out = whole.mutable_raw_data();
  for (int k = 0; k < static_cast<int>(shards_.size()); ++k) {
    const std::byte* in = shards_[static_cast<size_t>(k)].raw_data();
    for_each_tile_row(shape_, tile, tile_origin(k, tile, partition_dimensions_), size_of(dtype_),
                      [&](std::size_t full_at, std::size_t tile_at, std::size_t bytes) {
                        std::memcpy(out + full_at, in + tile_at, bytes);
                      });
  }
  return whole;
}

} // namespace troupe

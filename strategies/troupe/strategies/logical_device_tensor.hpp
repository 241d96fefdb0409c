#pragma once

#include <vector>

#include <troupe/core/device_spec.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe {

class TPUStrategy;

/// A tensor laid out over the logical cores of one TPUStrategy replica: what
/// TPUStrategy's experimental_assign_to_logical_device,
/// experimental_split_to_logical_devices and
/// experimental_replicate_to_logical_devices return. TensorFlow annotates the
/// tensor with an XLA sharding and lets the compiler place it; here the
/// placement is done at once and can be looked at:
/// - assigned: one shard, the whole tensor, on the chosen logical core;
/// - split: one shard per logical core, shard k on logical core k, the shards
///   tiling the tensor in row-major order over partition_dimensions()
///   (XLA's tile assignment np.arange(n).reshape(partition_dimensions));
/// - replicated: a copy of the whole tensor on every logical core.
/// Every shard is a Tensor of its own bytes, tagged with its core's device.
/// The value is immutable; read() gathers it back into one Tensor.
class LogicalDeviceTensor {
public:
  enum class Sharding { assigned, split, replicated };

  [[nodiscard]] Sharding sharding() const noexcept { return sharding_; }
  /// The whole tensor's dtype and shape (not a shard's).
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  /// The shards, in logical-core order for split and replicated tensors.
  [[nodiscard]] const std::vector<Tensor>& shards() const noexcept { return shards_; }
  /// shards()[i]'s logical core id within the replica, and its device (a TPU:n core).
  [[nodiscard]] const std::vector<int>& logical_cores() const noexcept { return logical_cores_; }
  [[nodiscard]] const std::vector<DeviceSpec>& devices() const noexcept { return devices_; }
  /// How many ways each dimension is split (one entry per dimension of
  /// shape()); all ones for assigned and replicated tensors.
  [[nodiscard]] const std::vector<int>& partition_dimensions() const noexcept {
    return partition_dimensions_;
  }
  /// The shard logical core `logical_core` holds; Error(invalid_argument) when
  /// it holds none (another core of an assigned tensor, or no such core).
  [[nodiscard]] const Tensor& shard_on(int logical_core) const;
  /// The whole tensor, gathered from the shards onto the replica's first
  /// logical core (where its function runs).
  [[nodiscard]] Tensor read() const;

private:
  friend class TPUStrategy;
  /// `cores`: the replica's logical cores, in logical-core order. The
  /// arguments are validated by TPUStrategy with TensorFlow's errors.
  static LogicalDeviceTensor assign(const Tensor& tensor, int logical_core,
                                    const std::vector<DeviceSpec>& cores);
  static LogicalDeviceTensor split(const Tensor& tensor,
                                   const std::vector<int>& partition_dimensions,
                                   const std::vector<DeviceSpec>& cores);
  static LogicalDeviceTensor replicate(const Tensor& tensor, const std::vector<DeviceSpec>& cores);
  LogicalDeviceTensor(Sharding sharding, const Tensor& tensor,
                      std::vector<int> partition_dimensions, DeviceSpec home);

  Sharding sharding_;
  DType dtype_;
  Shape shape_;
  std::vector<int> partition_dimensions_;
  std::vector<Tensor> shards_;
  std::vector<int> logical_cores_;
  std::vector<DeviceSpec> devices_;
  DeviceSpec home_;
};

} // namespace troupe

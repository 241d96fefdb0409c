// A port of TensorFlow's tensorflow/python/tpu/device_assignment.py (TF 2.21):
// the same assignments, ring orders and error texts.

#include <troupe/strategies/device_assignment.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

using internal::numpy_str;
using internal::shape_tuple_str;

long long product(const std::vector<int>& values) {
  long long out = 1;
  for (const int v : values)
    out *= v;
  return out;
}

} // namespace

namespace internal {

std::vector<std::array<int, 3>> open_ring_2d(int x_size, int y_size, int z_coord) {
  std::vector<std::array<int, 3>> ret;
  for (int i = 0; i < y_size / 2; ++i) {
    for (int j = 1; j < x_size; ++j)
      ret.push_back({j, 2 * i, z_coord});
    for (int j = x_size - 1; j > 0; --j)
      ret.push_back({j, 2 * i + 1, z_coord});
  }
  for (int i = y_size - 1; i > 0; --i)
    ret.push_back({0, i, z_coord});
  return ret;
}

std::vector<std::array<int, 3>> ring_3d(int x_size, int y_size, int z_size) {
  std::vector<std::array<int, 3>> ret;
  // Two dimensions of size 1: a line.
  if (x_size == 1 && y_size == 1) {
    for (int i = 0; i < z_size; ++i)
      ret.push_back({0, 0, i});
    return ret;
  }
  if (x_size == 1 && z_size == 1) {
    for (int i = 0; i < y_size; ++i)
      ret.push_back({0, i, 0});
    return ret;
  }
  if (y_size == 1 && z_size == 1) {
    for (int i = 0; i < x_size; ++i)
      ret.push_back({i, 0, 0});
    return ret;
  }
  // Odd dimensions (never on real slices): TensorFlow's plain row order.
  if ((x_size > 1 && x_size % 2 != 0) || (y_size > 1 && y_size % 2 != 0) || (z_size > 1 && z_size % 2 != 0)) {
    for (int z = 0; z < z_size; ++z)
      for (int y = 0; y < y_size; ++y)
        for (int x = 0; x < x_size; ++x)
          ret.push_back({x, y, z});
    return ret;
  }
  ret.push_back({0, 0, 0});
  // One dimension of size 1: a flat 2-D ring.
  if (z_size == 1) {
    for (const auto& c : open_ring_2d(x_size, y_size, 0))
      ret.push_back(c);
    return ret;
  }
  if (y_size == 1) {
    for (const auto& [x, z, y] : open_ring_2d(x_size, z_size, 0))
      ret.push_back({x, y, z});
    return ret;
  }
  if (x_size == 1) {
    for (const auto& [y, z, x] : open_ring_2d(y_size, z_size, 0))
      ret.push_back({x, y, z});
    return ret;
  }
  // Every dimension even and above 1: 2-D rings stacked in z, back down the corner.
  for (int i = 0; i < z_size; ++i) {
    auto ring = open_ring_2d(x_size, y_size, i);
    if (i % 2 != 0)
      std::reverse(ring.begin(), ring.end());
    ret.insert(ret.end(), ring.begin(), ring.end());
  }
  for (int i = z_size - 1; i > 0; --i)
    ret.push_back({0, 0, i});
  return ret;
}

} // namespace internal

namespace {

std::vector<int> flatten(const DeviceAssignment::CoreAssignment& nested, std::vector<int>& dims) {
  dims = {static_cast<int>(nested.size()), nested.empty() ? 0 : static_cast<int>(nested[0].size()), 0};
  if (!nested.empty() && !nested[0].empty())
    dims[2] = static_cast<int>(nested[0][0].size());
  std::vector<int> flat;
  for (size_t replica = 0; replica < nested.size(); ++replica) {
    if (nested[replica].size() != static_cast<size_t>(dims[1]))
      fail(Errc::invalid_argument, "core_assignment is ragged: replica " + std::to_string(replica) + " has "
                                     + std::to_string(nested[replica].size()) + " logical cores, replica 0 has "
                                     + std::to_string(dims[1]) + "; every replica must have the same number");
    for (size_t core = 0; core < nested[replica].size(); ++core) {
      if (nested[replica][core].size() != static_cast<size_t>(dims[2]))
        fail(Errc::invalid_argument, "core_assignment is ragged: replica " + std::to_string(replica)
                                       + " logical core " + std::to_string(core) + " has "
                                       + std::to_string(nested[replica][core].size())
                                       + " coordinates, the first core " + std::to_string(dims[2])
                                       + "; every core needs the topology's rank of coordinates");
      flat.insert(flat.end(), nested[replica][core].begin(), nested[replica][core].end());
    }
  }
  return flat;
}

} // namespace

DeviceAssignment::DeviceAssignment(Topology topology, const CoreAssignment& core_assignment)
  : topology_(std::move(topology)) {
  std::vector<int> dims;
  auto flat = flatten(core_assignment, dims);
  *this = DeviceAssignment(std::move(topology_), std::move(flat), std::move(dims));
}

DeviceAssignment::DeviceAssignment(Topology topology, std::vector<int> values, std::vector<int> dims)
  : topology_(std::move(topology)) {
  if (dims.size() != 3)
    fail(Errc::invalid_argument, "core_assignment must be a rank 3 numpy array, got shape " + shape_tuple_str(dims));
  const int rank = topology_.mesh_rank();
  if (dims[2] != rank)
    fail(Errc::invalid_argument, "core_assignment.shape[-1] must have size equal to topology rank ("
                                   + std::to_string(rank) + "), got core_assignment.shape=" + shape_tuple_str(dims));
  // replicas * cores fits in 62 bits; times the rank it might not, so divide instead.
  if (dims[0] < 0 || dims[1] < 0 || values.size() % static_cast<size_t>(rank) != 0
      || static_cast<long long>(dims[0]) * dims[1] != static_cast<long long>(values.size() / rank))
    fail(Errc::invalid_argument, "core_assignment has " + std::to_string(values.size())
                                   + " values, which is not the shape " + shape_tuple_str(dims)
                                   + " it is given with; pass replicas * cores * rank values");
  num_replicas_ = dims[0];
  num_cores_per_replica_ = dims[1];
  assignment_ = std::move(values);
  // TensorFlow's _compute_task_and_cores_to_replicas; replicas come in order, so each list is sorted.
  for (int replica = 0; replica < num_replicas_; ++replica) {
    for (int core = 0; core < num_cores_per_replica_; ++core) {
      const auto coords = coordinates(replica, core);
      for (int axis = 0; axis < rank; ++axis)
        if (coords[axis] < 0 || coords[axis] >= topology_.mesh_shape()[axis])
          fail(Errc::invalid_argument, "core_assignment puts replica " + std::to_string(replica) + " logical core "
                                         + std::to_string(core) + " at " + numpy_str(coords)
                                         + ", outside the TPU mesh " + numpy_str(topology_.mesh_shape()));
      task_and_cores_to_replicas_[topology_.task_ordinal_at_coordinates(coords)][core].push_back(replica);
    }
  }
}

DeviceAssignment DeviceAssignment::build(const Topology& topology, std::initializer_list<int> computation_shape,
                                         std::initializer_list<int> computation_stride, int num_replicas,
                                         DeviceOrderMode mode) {
  const auto none_if_empty = [](std::initializer_list<int> values) -> std::optional<std::vector<int>> {
    if (values.size() == 0)
      return std::nullopt;
    return std::vector<int>(values);
  };
  return build(topology, none_if_empty(computation_shape), none_if_empty(computation_stride), num_replicas, mode);
}

DeviceAssignment DeviceAssignment::build(const Topology& topology, std::optional<std::vector<int>> computation_shape,
                                         std::optional<std::vector<int>> computation_stride, int num_replicas,
                                         DeviceOrderMode mode) {
  const auto& mesh_shape = topology.mesh_shape();
  const int rank = topology.mesh_rank();
  const auto shape = computation_shape.value_or(std::vector<int>(static_cast<size_t>(rank), 1));
  const auto stride = computation_stride.value_or(std::vector<int>(static_cast<size_t>(rank), 1));
  if (shape.size() != static_cast<size_t>(rank))
    fail(Errc::invalid_argument, "computation_shape must have shape [" + std::to_string(rank) + "]; got "
                                   + shape_tuple_str({static_cast<int>(shape.size())}));
  if (stride.size() != static_cast<size_t>(rank))
    fail(Errc::invalid_argument, "computation_stride must have shape [" + std::to_string(rank) + "]; got "
                                   + shape_tuple_str({static_cast<int>(stride.size())}));
  if (std::any_of(shape.begin(), shape.end(), [](int v) { return v < 1; }))
    fail(Errc::invalid_argument, "computation_shape must be positive; got computation_shape=" + numpy_str(shape));
  if (std::any_of(stride.begin(), stride.end(), [](int v) { return v < 1; }))
    fail(Errc::invalid_argument, "computation_stride must be positive; got computation_stride=" + numpy_str(stride));
  if (num_replicas < 0)
    fail(Errc::invalid_argument, "num_replicas must be 0 or more, got " + std::to_string(num_replicas));

  // The physical size of one computation instance.
  std::vector<long long> footprint(static_cast<size_t>(rank));
  bool fits = true;
  for (int i = 0; i < rank; ++i) {
    footprint[i] = static_cast<long long>(shape[i]) * stride[i];
    fits = fits && footprint[i] <= mesh_shape[i];
  }
  if (!fits)
    fail(Errc::invalid_argument, "computation footprint " + numpy_str(footprint)
                                   + " does not fit in TPU topology shape " + numpy_str(mesh_shape));

  // How many copies of the footprint fit in the mesh.
  std::vector<int> replica_counts(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i)
    replica_counts[i] = static_cast<int>(mesh_shape[i] / footprint[i]) * stride[i];
  const long long max_replicas = product(replica_counts);
  if (num_replicas > max_replicas)
    fail(Errc::invalid_argument, "requested " + std::to_string(num_replicas) + " replicas but only "
                                   + std::to_string(max_replicas) + " replicas with shape " + numpy_str(shape)
                                   + " and computation_stride " + numpy_str(stride) + " fit in a TPU mesh of shape "
                                   + numpy_str(mesh_shape));

  const long long cores_per_replica = product(shape);
  std::vector<int> assignment;
  assignment.reserve(static_cast<size_t>(num_replicas * cores_per_replica * rank));
  if (topology.missing_devices().empty()) {
    std::vector<int> replica_shape(static_cast<size_t>(rank), 0);
    if (num_replicas > 0) {
      long long remaining_replicas = num_replicas;
      int remaining_dims = rank;
      // Dimensions as close to an equal cube as possible, the most
      // constrained first; on ties the core axis first, then x, y, z, so that
      // both cores of a chip, then neighbouring chips of a host, are preferred.
      std::vector<std::pair<int, int>> order; // (replica count, (axis + 1) % rank)
      for (int i = 0; i < rank; ++i)
        order.emplace_back(replica_counts[i], (i + 1) % rank);
      std::sort(order.begin(), order.end());
      for (const auto& [count, shifted] : order) {
        const int i = (shifted + rank - 1) % rank;
        // Python's int(math.ceil(n ** (1.0 / d))): the same libm pow.
        const auto target = static_cast<long long>(
          std::ceil(std::pow(static_cast<double>(remaining_replicas), 1.0 / remaining_dims)));
        replica_shape[i] = static_cast<int>(std::min<long long>(target, count));
        remaining_replicas = (remaining_replicas + replica_shape[i] - 1) / replica_shape[i];
        --remaining_dims;
      }
      if (remaining_replicas != 1 || remaining_dims != 0)
        fail(Errc::internal, "DeviceAssignment::build left " + std::to_string(remaining_replicas)
                               + " replicas unplaced (TensorFlow asserts here); this is a bug");
    }

    bool enable_3d_tiling = rank == 4 && shape[rank - 1] == mesh_shape[rank - 1] && product(stride) == 1
                            && num_replicas == max_replicas;
    if (mode != DeviceOrderMode::AUTO) {
      if (mode == DeviceOrderMode::RING && !enable_3d_tiling)
        fail(Errc::invalid_argument, "device_order_mode=DeviceOrderMode.RING is not compatible with the 3D tiling "
                                     "current topology.  Try setting device_order_mode=DeviceOrderMode.AUTO");
      enable_3d_tiling = mode == DeviceOrderMode::RING;
    }

    if (enable_3d_tiling) {
      const auto inner_ring = internal::ring_3d(shape[0], shape[1], shape[2]);
      const auto outer_ring = internal::ring_3d(replica_shape[0], replica_shape[1], replica_shape[2]);
      const int cores_per_chip = mesh_shape[rank - 1];
      if (outer_ring.size() < static_cast<size_t>(num_replicas)
          || inner_ring.size() * cores_per_chip < static_cast<size_t>(cores_per_replica))
        fail(Errc::internal, "DeviceAssignment::build: a ring shorter than the replicas; this is a bug");
      for (int replica = 0; replica < num_replicas; ++replica) {
        const auto& outer = outer_ring[static_cast<size_t>(replica)];
        for (long long index = 0; index < cores_per_replica; ++index) {
          const auto& inner = inner_ring[static_cast<size_t>(index / cores_per_chip)];
          for (int axis = 0; axis < 3; ++axis)
            assignment.push_back(outer[axis] * shape[axis] + inner[axis]);
          assignment.push_back(static_cast<int>(index % cores_per_chip));
        }
      }
    } else {
      // Offsets such that no two replicas overlap: the replica number in each
      // axis, core axis first.
      std::vector<std::vector<int>> offsets;
      for (int replica = 0; replica < num_replicas; ++replica) {
        long long t = replica;
        std::vector<int> replica_pos(static_cast<size_t>(rank));
        for (int k = 0; k < rank; ++k) {
          const int axis = (k + rank - 1) % rank; // rank-1, 0, 1, ..., rank-2
          replica_pos[axis] = static_cast<int>(t % replica_shape[axis]);
          t /= replica_shape[axis];
        }
        std::vector<int> offset(static_cast<size_t>(rank));
        for (int axis = 0; axis < rank; ++axis) {
          const int outer = replica_pos[axis] / stride[axis];
          const int inner = replica_pos[axis] % stride[axis];
          offset[axis] = static_cast<int>(outer * footprint[axis] + inner);
        }
        offsets.push_back(std::move(offset));
      }
      // Logical core -> physical offset within a replica: row-major over the
      // computation shape (numpy's meshgrid with indexing="ij").
      for (const auto& offset : offsets) {
        std::vector<int> index(static_cast<size_t>(rank), 0);
        for (long long core = 0; core < cores_per_replica; ++core) {
          for (int axis = 0; axis < rank; ++axis)
            assignment.push_back(offset[axis] + index[axis] * stride[axis]);
          for (int axis = rank - 1; axis >= 0; --axis) {
            if (++index[axis] < shape[axis])
              break;
            index[axis] = 0;
          }
        }
      }
    }
  } else {
    // A slice with missing chips: replicas over the devices in task order,
    // ignoring the stride (TensorFlow asserts what is checked here).
    if (product(stride) != 1)
      fail(Errc::invalid_argument, "computation_stride " + numpy_str(stride)
                                     + " cannot be used on a TPU topology with missing devices; use all ones");
    const long long devices = static_cast<long long>(topology.num_tasks()) * topology.num_tpus_per_task();
    if (num_replicas * cores_per_replica > devices)
      fail(Errc::invalid_argument, "requested " + std::to_string(num_replicas) + " replicas of "
                                     + std::to_string(cores_per_replica) + " cores but the TPU topology has only "
                                     + std::to_string(devices) + " devices (some are missing)");
    const auto& flat = topology.device_coordinates_flat();
    for (long long logical = 0; logical < num_replicas * cores_per_replica; ++logical) {
      const auto begin = flat.begin() + logical * rank; // task-major, as [task][device]
      assignment.insert(assignment.end(), begin, begin + rank);
    }
  }
  return DeviceAssignment(topology, std::move(assignment),
                          {num_replicas, static_cast<int>(cores_per_replica), rank});
}

DeviceAssignment::CoreAssignment DeviceAssignment::core_assignment() const {
  CoreAssignment out(static_cast<size_t>(num_replicas_));
  for (int replica = 0; replica < num_replicas_; ++replica)
    for (int core = 0; core < num_cores_per_replica_; ++core)
      out[static_cast<size_t>(replica)].push_back(coordinates(replica, core));
  return out;
}

std::vector<int> DeviceAssignment::coordinates(int replica, int logical_core) const {
  if (replica < 0 || replica >= num_replicas_ || logical_core < 0 || logical_core >= num_cores_per_replica_)
    fail(Errc::out_of_range, "replica " + std::to_string(replica) + ", logical core " + std::to_string(logical_core)
                               + " is outside the device assignment of " + std::to_string(num_replicas_)
                               + " replicas of " + std::to_string(num_cores_per_replica_) + " cores");
  const int rank = topology_.mesh_rank();
  const auto begin = assignment_.begin() + (static_cast<long long>(replica) * num_cores_per_replica_ + logical_core) * rank;
  return {begin, begin + rank};
}

const std::vector<int>& DeviceAssignment::lookup_replicas(int task_id, int logical_core) const {
  if (const auto task = task_and_cores_to_replicas_.find(task_id); task != task_and_cores_to_replicas_.end())
    if (const auto core = task->second.find(logical_core); core != task->second.end())
      return core->second;
  fail(Errc::invalid_argument, "Can not find any replica in task: " + std::to_string(task_id)
                                 + " contains logical_core: " + std::to_string(logical_core) + " ");
}

int DeviceAssignment::tpu_ordinal(int replica, int logical_core) const {
  return topology_.tpu_device_ordinal_at_coordinates(coordinates(replica, logical_core));
}

std::string DeviceAssignment::host_device(int replica, int logical_core, std::string_view job) const {
  return topology_.cpu_device_name_at_coordinates(coordinates(replica, logical_core), job);
}

std::string DeviceAssignment::tpu_device(int replica, int logical_core, std::string_view job) const {
  return topology_.tpu_device_name_at_coordinates(coordinates(replica, logical_core), job);
}

} // namespace troupe

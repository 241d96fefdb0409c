#pragma once

#include <array>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <troupe/strategies/tpu_topology.hpp>

namespace troupe {

/// How DeviceAssignment::build orders devices, as tf.tpu.experimental.DeviceOrderMode.
enum class DeviceOrderMode {
  /// Rings when the computation fills whole chips of the mesh with no stride
  /// and every replica slot is used; a mesh otherwise.
  AUTO = 0,
  /// Rings for replicas and model-parallel cores (only where AUTO would form them).
  RING = 1,
  /// Meshes for replicas and model-parallel cores.
  MESH = 2,
};

/// Maps each (replica, logical core) of a computation to a physical TPU core,
/// as tf.tpu.experimental.DeviceAssignment.
///
/// core_assignment()[replica][logical_core] is the core's (x, y, z, core)
/// coordinates in topology(). Errors are TensorFlow's ValueError texts as
/// Error(invalid_argument); an index outside the assignment is Error(out_of_range).
class DeviceAssignment {
public:
  /// [replica][logical core][axis] coordinates; ragged nesting, or an inner
  /// size other than the topology's rank, is Error(invalid_argument).
  using CoreAssignment = std::vector<std::vector<std::vector<int>>>;

  DeviceAssignment(Topology topology, const CoreAssignment& core_assignment);

  /// As TensorFlow's constructor from a numpy array: `values` row-major with
  /// shape `dims`, which must be rank 3 with dims[2] == topology.mesh_rank().
  DeviceAssignment(Topology topology, std::vector<int> values, std::vector<int> dims);

  /// TensorFlow's device_assignment() (DeviceAssignment.build): packs
  /// `num_replicas` copies of a `computation_shape` block of cores, spaced by
  /// `computation_stride`, into the topology (both default to all ones and
  /// have mesh_rank() positive entries), as rings or meshes per `mode`.
  /// A block or replica count that does not fit is Error(invalid_argument)
  /// with TensorFlow's text.
  [[nodiscard]] static DeviceAssignment build(const Topology& topology,
                                              std::optional<std::vector<int>> computation_shape = std::nullopt,
                                              std::optional<std::vector<int>> computation_stride = std::nullopt,
                                              int num_replicas = 1, DeviceOrderMode mode = DeviceOrderMode::AUTO);
  /// The same with braced lists, `build(topology, {1, 1, 1, 2}, {}, 4)`: an
  /// empty list is TensorFlow's None (all ones).
  [[nodiscard]] static DeviceAssignment build(const Topology& topology, std::initializer_list<int> computation_shape,
                                              std::initializer_list<int> computation_stride = {},
                                              int num_replicas = 1, DeviceOrderMode mode = DeviceOrderMode::AUTO);

  // -- properties --------------------------------------------------------------

  [[nodiscard]] const Topology& topology() const noexcept { return topology_; }
  [[nodiscard]] int num_replicas() const noexcept { return num_replicas_; }
  [[nodiscard]] int num_cores_per_replica() const noexcept { return num_cores_per_replica_; }
  /// [num_replicas()][num_cores_per_replica()][topology().mesh_rank()].
  [[nodiscard]] CoreAssignment core_assignment() const;
  /// core_assignment() row-major.
  [[nodiscard]] const std::vector<int>& core_assignment_flat() const noexcept { return assignment_; }

  // -- lookups -----------------------------------------------------------------

  /// The physical coordinates of `logical_core` of `replica`.
  [[nodiscard]] std::vector<int> coordinates(int replica, int logical_core) const;
  /// The sorted replicas whose `logical_core` is on task `task_id`; TensorFlow's
  /// error (Error(invalid_argument)) when there are none.
  [[nodiscard]] const std::vector<int>& lookup_replicas(int task_id, int logical_core) const;
  /// The TPU device number, within its task, of `logical_core` of `replica`.
  [[nodiscard]] int tpu_ordinal(int replica = 0, int logical_core = 0) const;
  /// The CPU device of the host of that core: "/job:<job>/task:<t>/device:CPU:0".
  [[nodiscard]] std::string host_device(int replica = 0, int logical_core = 0, std::string_view job = {}) const;
  /// That core's device: "/job:<job>/task:<t>/device:TPU:<d>" (no "/job:" part for job "").
  [[nodiscard]] std::string tpu_device(int replica = 0, int logical_core = 0, std::string_view job = {}) const;

private:
  Topology topology_;
  int num_replicas_ = 0;
  int num_cores_per_replica_ = 0;
  std::vector<int> assignment_;
  // task -> logical core -> sorted replicas (TensorFlow's _task_and_cores_to_replicas).
  std::map<int, std::map<int, std::vector<int>>> task_and_cores_to_replicas_;
};

namespace internal {
/// TensorFlow's _open_ring_2d: the ring order of an x_size by y_size mesh at
/// z = z_coord, chip (0, 0) left out.
[[nodiscard]] std::vector<std::array<int, 3>> open_ring_2d(int x_size, int y_size, int z_coord);
/// TensorFlow's _ring_3d: the ring order of an x_size by y_size by z_size mesh,
/// 2-D rings stacked in z and joined in one corner.
[[nodiscard]] std::vector<std::array<int, 3>> ring_3d(int x_size, int y_size, int z_size);
} // namespace internal

} // namespace troupe

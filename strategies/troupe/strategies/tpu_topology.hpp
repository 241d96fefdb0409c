#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe {

/// A set of TPU devices: the shape of the physical mesh and where each
/// TensorFlow TPU device sits in it, as tf.tpu.experimental.Topology.
///
/// Coordinates are (x, y, z, core): x, y, z locate a chip in the mesh, core a
/// core on that chip. device_coordinates()[task][device] is the position of
/// device "/task:<task>/device:TPU:<device>".
///
/// Errors are TensorFlow's ValueError texts as Error(invalid_argument). Beyond
/// TensorFlow, which indexes numpy arrays without checking, a coordinate
/// outside the mesh, two devices at one position and a mesh of more than
/// max_mesh_positions positions are refused too (Error(invalid_argument)), and
/// a lookup at coordinates outside the mesh is Error(out_of_range).
class Topology {
public:
  /// The mesh positions a Topology may have: it keeps a task and a device
  /// index per position, so a hostile serialized mesh must not size them.
  static constexpr long long max_mesh_positions = 1 << 20;

  /// From `mesh_shape` (4 positive entries) and the [tasks][devices][axis]
  /// array `device_coordinates`, given row-major with its `dims` (TensorFlow's
  /// numpy array; `dims` must be rank 3 with dims[2] == mesh_shape.size()).
  Topology(std::vector<int> mesh_shape, std::vector<int> device_coordinates, std::vector<int> dims);

  /// As above, from nested vectors ([task][device][axis]); ragged nesting is
  /// Error(invalid_argument).
  Topology(std::vector<int> mesh_shape, const std::vector<std::vector<std::vector<int>>>& device_coordinates);

  /// As from_serialized (TensorFlow's Topology(serialized=...)).
  explicit Topology(std::string_view serialized);

  /// Parses a serialized TopologyProto (TensorFlow's initialize_tpu_system
  /// result, or serialized()). Every length and count is checked against the
  /// input before anything is allocated; malformed bytes are
  /// Error(invalid_argument) naming the field and what is wrong.
  [[nodiscard]] static Topology from_serialized(std::string_view serialized);

  /// The topology of troupe's emulated slice of `cores` TPU cores (1, 2, 4, 8,
  /// 16 or 32) over `hosts` hosts (a divisor of `cores`); see docs/api.md, "TPUs":
  /// 2 cores per chip (a 1-core slice: one chip with 1 core), chips in an
  /// x by y mesh ([1,1], [1,1], [2,1], [2,2], [4,2], [4,4] for 1..32 cores),
  /// each host owning a compact block of chips (that same shape for its own
  /// core count), host blocks x first; within a host, chips y-major, x
  /// fastest, and cores fastest within a chip (TensorFlow's order on a v3-8).
  [[nodiscard]] static Topology emulated_slice(int cores, int hosts = 1);

  // -- properties --------------------------------------------------------------

  /// The mesh shape in cores: (x, y, z, cores per chip).
  [[nodiscard]] const std::vector<int>& mesh_shape() const noexcept { return mesh_shape_; }
  [[nodiscard]] int mesh_rank() const noexcept { return static_cast<int>(mesh_shape_.size()); }
  /// [num_tasks()][num_tpus_per_task()][mesh_rank()].
  [[nodiscard]] std::vector<std::vector<std::vector<int>>> device_coordinates() const;
  /// device_coordinates() row-major.
  [[nodiscard]] const std::vector<int>& device_coordinates_flat() const noexcept { return coordinates_; }
  /// The mesh positions no device occupies, in row-major order (numpy's argwhere).
  [[nodiscard]] std::vector<std::vector<int>> missing_devices() const;
  [[nodiscard]] int num_tasks() const noexcept { return num_tasks_; }
  [[nodiscard]] int num_tpus_per_task() const noexcept { return num_tpus_per_task_; }

  // -- lookups (coordinates: mesh_rank() entries inside the mesh) --------------

  /// The task whose TPU device sits at `coordinates`; -1 for a missing device.
  [[nodiscard]] int task_ordinal_at_coordinates(const std::vector<int>& coordinates) const;
  /// The TPU device number within its task at `coordinates`; -1 for a missing device.
  [[nodiscard]] int tpu_device_ordinal_at_coordinates(const std::vector<int>& coordinates) const;
  /// "/job:<job>/task:<t>/device:CPU:0" ("/task:<t>/device:CPU:0" for job "").
  [[nodiscard]] std::string cpu_device_name_at_coordinates(const std::vector<int>& coordinates,
                                                           std::string_view job = {}) const;
  /// "/job:<job>/task:<t>/device:TPU:<d>" ("/task:<t>/device:TPU:<d>" for job "").
  [[nodiscard]] std::string tpu_device_name_at_coordinates(const std::vector<int>& coordinates,
                                                           std::string_view job = {}) const;

  /// TensorFlow's TopologyProto bytes, exactly as Topology.serialized() gives them.
  [[nodiscard]] std::string serialized() const;

  friend bool operator==(const Topology& a, const Topology& b) {
    return a.mesh_shape_ == b.mesh_shape_ && a.num_tasks_ == b.num_tasks_
           && a.num_tpus_per_task_ == b.num_tpus_per_task_ && a.coordinates_ == b.coordinates_;
  }

private:
  Topology() = default;
  /// TensorFlow's _invert_topology, with troupe's bounds checks.
  void invert();
  /// The row-major index of `coordinates` in the mesh; Error(out_of_range) outside it.
  [[nodiscard]] long long position_of(const std::vector<int>& coordinates) const;

  std::vector<int> mesh_shape_;
  int num_tasks_ = 0;
  int num_tpus_per_task_ = 0;
  std::vector<int> coordinates_;
  std::vector<int> tasks_at_;   // per mesh position, -1 where missing
  std::vector<int> devices_at_; // per mesh position, -1 where missing
  std::optional<std::string> serialized_; // the bytes parsed, if parsed
};

namespace internal {
/// numpy's str() of a 1-D int array: "[2 2 1 2]", entries right-aligned to
/// the widest ("[ 0  0 -1]"); TensorFlow's error texts print arrays this way.
[[nodiscard]] std::string numpy_str(const std::vector<long long>& values);
[[nodiscard]] inline std::string numpy_str(const std::vector<int>& values) {
  return numpy_str(std::vector<long long>(values.begin(), values.end()));
}
/// Python's repr of a shape tuple: "(3,)", "(1, 1, 3)".
[[nodiscard]] std::string shape_tuple_str(const std::vector<int>& dims);
} // namespace internal

} // namespace troupe

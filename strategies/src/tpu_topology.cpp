// A port of TensorFlow's tensorflow/python/tpu/topology.py (TF 2.21), with
// the TopologyProto encoding written out by hand (fields 1..4; the optional
// tpu_hardware_feature, field 5, is skipped when parsing and never written).

#include <troupe/strategies/tpu_topology.hpp>

#include <cstdint>
#include <optional>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace internal {

std::string numpy_str(const std::vector<long long>& values) {
  size_t width = 0;
  for (const auto v : values)
    width = std::max(width, std::to_string(v).size());
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    const auto text = std::to_string(values[i]);
    out += (i == 0 ? "" : " ") + std::string(width - text.size(), ' ') + text;
  }
  return out + "]";
}

std::string shape_tuple_str(const std::vector<int>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i == 0 ? "" : ", ") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

} // namespace internal

namespace {

using internal::numpy_str;
using internal::shape_tuple_str;

// Protobuf field numbers of tensorflow.tpu.TopologyProto.
constexpr uint32_t mesh_shape_field = 1;
constexpr uint32_t num_tasks_field = 2;
constexpr uint32_t num_tpu_devices_per_task_field = 3;
constexpr uint32_t device_coordinates_field = 4;

constexpr uint32_t wire_varint = 0;
constexpr uint32_t wire_fixed64 = 1;
constexpr uint32_t wire_length_delimited = 2;
constexpr uint32_t wire_fixed32 = 5;

[[noreturn]] void bad_proto(const std::string& what) {
  fail(Errc::invalid_argument, "serialized TPU topology (a TopologyProto) is malformed: " + what
                                 + "; pass the bytes of Topology::serialized() or of TensorFlow's "
                                   "Topology.serialized()");
}

/// Reads protobuf wire format from a bounded buffer; every read checks the bytes left.
class ProtoReader {
public:
  explicit ProtoReader(std::string_view bytes) : bytes_(bytes) {}

  [[nodiscard]] bool done() const noexcept { return pos_ == bytes_.size(); }
  [[nodiscard]] size_t offset() const noexcept { return pos_; }

  uint64_t varint(const char* what) {
    uint64_t value = 0;
    for (int i = 0; i < 10; ++i) {
      if (pos_ == bytes_.size())
        bad_proto(std::string("truncated varint in ") + what + " at byte " + std::to_string(pos_));
      const auto byte = static_cast<uint8_t>(bytes_[pos_++]);
      if (i == 9 && byte > 1)
        bad_proto(std::string("varint longer than 64 bits in ") + what + " at byte " + std::to_string(pos_ - 1));
      value |= uint64_t{byte & 0x7fu} << (7 * i);
      if ((byte & 0x80u) == 0)
        return value;
    }
    bad_proto(std::string("varint longer than 10 bytes in ") + what + " at byte " + std::to_string(pos_));
    return 0; // unreachable
  }

  std::string_view bytes(uint64_t length, const char* what) {
    if (length > bytes_.size() - pos_)
      bad_proto(std::string(what) + " claims " + std::to_string(length) + " bytes but only "
                + std::to_string(bytes_.size() - pos_) + " are left at byte " + std::to_string(pos_));
    const auto out = bytes_.substr(pos_, length);
    pos_ += length;
    return out;
  }

private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// An int32 field's varint, as protobuf reads it: the low 32 bits.
int32_t as_int32(uint64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(value)); }

// One value or a packed run of values of a repeated int32 field.
void read_repeated_int32(ProtoReader& in, uint32_t wire, std::vector<int>& out, const char* what) {
  if (wire == wire_varint) {
    out.push_back(as_int32(in.varint(what)));
    return;
  }
  // Packed: every value takes at least one byte, so `out` grows by at most the bytes read.
  ProtoReader packed(in.bytes(in.varint(what), what));
  while (!packed.done())
    out.push_back(as_int32(packed.varint(what)));
}

void skip_field(ProtoReader& in, uint32_t field, uint32_t wire) {
  const auto name = "field " + std::to_string(field);
  switch (wire) {
  case wire_varint: (void)in.varint(name.c_str()); return;
  case wire_fixed64: (void)in.bytes(8, name.c_str()); return;
  case wire_length_delimited: (void)in.bytes(in.varint(name.c_str()), name.c_str()); return;
  case wire_fixed32: (void)in.bytes(4, name.c_str()); return;
  default:
    bad_proto(name + " has wire type " + std::to_string(wire) + " (groups and types 6, 7 are not protobuf 3)");
  }
}

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

// protobuf encodes a negative int32 as its 64-bit two's complement.
uint64_t int32_varint(int value) { return static_cast<uint64_t>(static_cast<int64_t>(value)); }

void put_packed(std::string& out, uint32_t field, const std::vector<int>& values) {
  if (values.empty())
    return;
  std::string payload;
  for (const int v : values)
    put_varint(payload, int32_varint(v));
  put_varint(out, (field << 3) | wire_length_delimited);
  put_varint(out, payload.size());
  out += payload;
}

void put_int32(std::string& out, uint32_t field, int value) {
  if (value == 0) // proto3 leaves defaults out
    return;
  put_varint(out, (field << 3) | wire_varint);
  put_varint(out, int32_varint(value));
}

bool any_below(const std::vector<int>& values, int bound) {
  for (const int v : values)
    if (v < bound)
      return true;
  return false;
}

std::string python_list_str(const std::vector<int>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  return out + "]";
}

// The emulated slices' chip meshes, (x, y), by core count; also each host's block.
std::array<int, 2> chip_mesh(int cores) {
  switch (cores) {
  case 1:
  case 2: return {1, 1};
  case 4: return {2, 1};
  case 8: return {2, 2};
  case 16: return {4, 2};
  case 32: return {4, 4};
  default:
    fail(Errc::invalid_argument, "an emulated TPU slice has 1, 2, 4, 8, 16 or 32 cores, got "
                                   + std::to_string(cores) + "; set RuntimeOptions.logical_tpu_cores to one of them");
  }
}

} // namespace

Topology::Topology(std::vector<int> mesh_shape, std::vector<int> device_coordinates, std::vector<int> dims)
  : mesh_shape_(std::move(mesh_shape)) {
  if (mesh_shape_.size() != 4 || any_below(mesh_shape_, 1))
    fail(Errc::invalid_argument, "`mesh_shape` must be a sequence of 4 positive entries; got `mesh_shape="
                                   + numpy_str(mesh_shape_) + "`");
  const auto rank = static_cast<int>(mesh_shape_.size());
  if (dims.size() != 3 || dims[2] != rank)
    fail(Errc::invalid_argument,
         "`device_coordinates` must be a rank 3 int32 array with minor dimension equal to the `mesh_shape` "
         "rankgot device_coordinates.shape=" + shape_tuple_str(dims) + " len(device_coordinates.shape)="
           + std::to_string(dims.size()) + " device_coordinates.shape[2]="
           + (dims.size() > 2 ? std::to_string(dims[2]) : std::string("(none)")) + " mesh_shape="
           + numpy_str(mesh_shape_) + ", len(mesh_shape)=" + std::to_string(rank));
  // tasks * devices fits in 62 bits; times the rank it might not, so divide instead.
  if (dims[0] < 0 || dims[1] < 0 || device_coordinates.size() % static_cast<size_t>(rank) != 0
      || static_cast<long long>(dims[0]) * dims[1] != static_cast<long long>(device_coordinates.size() / rank))
    fail(Errc::invalid_argument, "`device_coordinates` has " + std::to_string(device_coordinates.size())
                                   + " values, which is not the shape " + shape_tuple_str(dims)
                                   + " it is given with; pass tasks * devices * " + std::to_string(rank) + " values");
  num_tasks_ = dims[0];
  num_tpus_per_task_ = dims[1];
  coordinates_ = std::move(device_coordinates);
  invert();
}

Topology::Topology(std::vector<int> mesh_shape, const std::vector<std::vector<std::vector<int>>>& device_coordinates) {
  std::vector<int> dims{static_cast<int>(device_coordinates.size()), 0, 0};
  if (!device_coordinates.empty()) {
    dims[1] = static_cast<int>(device_coordinates[0].size());
    dims[2] = device_coordinates[0].empty() ? 0 : static_cast<int>(device_coordinates[0][0].size());
  } else {
    dims[2] = static_cast<int>(mesh_shape.size()); // numpy would see shape (0,); an empty topology
  }
  std::vector<int> flat;
  for (size_t task = 0; task < device_coordinates.size(); ++task) {
    if (device_coordinates[task].size() != static_cast<size_t>(dims[1]))
      fail(Errc::invalid_argument, "`device_coordinates` is ragged: task " + std::to_string(task) + " has "
                                     + std::to_string(device_coordinates[task].size()) + " devices, task 0 has "
                                     + std::to_string(dims[1]) + "; every task must have the same number");
    for (size_t device = 0; device < device_coordinates[task].size(); ++device) {
      const auto& coordinates = device_coordinates[task][device];
      if (coordinates.size() != static_cast<size_t>(dims[2]))
        fail(Errc::invalid_argument, "`device_coordinates` is ragged: task " + std::to_string(task) + " device "
                                       + std::to_string(device) + " has " + std::to_string(coordinates.size())
                                       + " coordinates, the first device " + std::to_string(dims[2])
                                       + "; every device must have mesh_rank coordinates");
      flat.insert(flat.end(), coordinates.begin(), coordinates.end());
    }
  }
  *this = Topology(std::move(mesh_shape), std::move(flat), std::move(dims));
}

Topology::Topology(std::string_view serialized) : Topology(from_serialized(serialized)) {}

Topology Topology::from_serialized(std::string_view serialized) {
  if (serialized.empty())
    bad_proto("it is empty");
  Topology topology;
  topology.serialized_ = std::string(serialized);
  int64_t num_tasks = 0;
  int64_t num_tpu_devices_per_task = 0;
  ProtoReader in(serialized);
  while (!in.done()) {
    const auto tag = in.varint("a field tag");
    const auto field = static_cast<uint32_t>(tag >> 3);
    const auto wire = static_cast<uint32_t>(tag & 7);
    if (tag >> 3 == 0 || tag >> 32 != 0)
      bad_proto("field number " + std::to_string(tag >> 3) + " at byte " + std::to_string(in.offset()));
    const bool repeated_wire = wire == wire_varint || wire == wire_length_delimited;
    if (field == mesh_shape_field && repeated_wire)
      read_repeated_int32(in, wire, topology.mesh_shape_, "mesh_shape");
    else if (field == device_coordinates_field && repeated_wire)
      read_repeated_int32(in, wire, topology.coordinates_, "device_coordinates");
    else if (field == num_tasks_field && wire == wire_varint)
      num_tasks = as_int32(in.varint("num_tasks"));
    else if (field == num_tpu_devices_per_task_field && wire == wire_varint)
      num_tpu_devices_per_task = as_int32(in.varint("num_tpu_devices_per_task"));
    else // tpu_hardware_feature and fields of later versions, as protobuf skips them
      skip_field(in, field, wire);
  }
  // TensorFlow's _parse_topology checks, in its order and words.
  const auto& mesh = topology.mesh_shape_;
  if (mesh.size() != 4 || any_below(mesh, 1))
    fail(Errc::invalid_argument,
         "`mesh_shape` must be a vector of size 4 with positive entries; got " + numpy_str(mesh));
  if (num_tasks < 0)
    fail(Errc::invalid_argument, "`num_tasks` must be >= 0; got " + std::to_string(num_tasks));
  if (num_tpu_devices_per_task < 0)
    fail(Errc::invalid_argument,
         "`num_tpu_devices_per_task` must be >= 0; got " + std::to_string(num_tpu_devices_per_task));
  // Each count alone is bounded too: with 0 devices per task (or 0 tasks) the
  // product below is 0 whatever the other claims, and device_coordinates()
  // allocates per task (fuzz/tpu_topology_fuzz: 2^28 tasks, 6 GiB).
  if (num_tasks > max_mesh_positions || num_tpu_devices_per_task > max_mesh_positions)
    fail(Errc::invalid_argument, "`num_tasks` (" + std::to_string(num_tasks) + ") and `num_tpu_devices_per_task` ("
                                   + std::to_string(num_tpu_devices_per_task) + ") must each be at most "
                                   + std::to_string(max_mesh_positions));
  // num_tasks * num_tpu_devices_per_task fits in 62 bits; times 4 it might not, so divide instead.
  const auto coordinates = topology.coordinates_.size();
  if (coordinates % mesh.size() != 0
      || static_cast<int64_t>(coordinates / mesh.size()) != num_tasks * num_tpu_devices_per_task)
    fail(Errc::invalid_argument,
         "`device_coordinates` must have shape num_tasks (" + std::to_string(num_tasks)
           + ") * num_tpu_devices_per_task (" + std::to_string(num_tpu_devices_per_task) + ") * len(mesh_shape) ("
           + python_list_str(mesh) + "); got shape " + std::to_string(topology.coordinates_.size()));
  if (any_below(topology.coordinates_, 0))
    fail(Errc::invalid_argument,
         "All values in `device_coordinates` must be >= 0, got " + numpy_str(topology.coordinates_));
  topology.num_tasks_ = static_cast<int>(num_tasks);
  topology.num_tpus_per_task_ = static_cast<int>(num_tpu_devices_per_task);
  topology.invert();
  return topology;
}

Topology Topology::emulated_slice(int cores, int hosts) {
  const auto mesh = chip_mesh(cores);
  if (hosts < 1 || cores % hosts != 0)
    fail(Errc::invalid_argument, "an emulated TPU slice of " + std::to_string(cores) + " cores cannot be split over "
                                   + std::to_string(hosts) + " hosts; the hosts (worker tasks) must divide the cores");
  const int cores_per_chip = cores == 1 ? 1 : 2;
  const int per_host = cores / hosts;
  std::vector<int> flat;
  flat.reserve(static_cast<size_t>(cores) * 4);
  if (per_host < cores_per_chip) {
    // One core per host, two hosts per chip: host h has core h % 2 of chip h / 2.
    for (int host = 0; host < hosts; ++host) {
      const int chip = host / cores_per_chip;
      flat.insert(flat.end(), {chip % mesh[0], chip / mesh[0], 0, host % cores_per_chip});
    }
  } else {
    const auto block = chip_mesh(per_host);
    const int blocks_x = mesh[0] / block[0];
    for (int host = 0; host < hosts; ++host) {
      const int origin_x = (host % blocks_x) * block[0];
      const int origin_y = (host / blocks_x) * block[1];
      for (int y = 0; y < block[1]; ++y)
        for (int x = 0; x < block[0]; ++x)
          for (int core = 0; core < cores_per_chip; ++core)
            flat.insert(flat.end(), {origin_x + x, origin_y + y, 0, core});
    }
  }
  return Topology({mesh[0], mesh[1], 1, cores_per_chip}, std::move(flat), {hosts, cores / hosts, 4});
}

void Topology::invert() {
  long long positions = 1;
  for (const int extent : mesh_shape_) {
    positions *= extent;
    if (positions > max_mesh_positions)
      fail(Errc::invalid_argument, "`mesh_shape` " + numpy_str(mesh_shape_) + " has more than "
                                     + std::to_string(max_mesh_positions)
                                     + " positions, more than any TPU slice; check the mesh shape");
  }
  tasks_at_.assign(static_cast<size_t>(positions), -1);
  devices_at_.assign(static_cast<size_t>(positions), -1);
  const auto rank = mesh_shape_.size();
  for (int task = 0; task < num_tasks_; ++task) {
    for (int device = 0; device < num_tpus_per_task_; ++device) {
      const auto begin = coordinates_.begin() + static_cast<long long>((task * num_tpus_per_task_ + device) * rank);
      const std::vector<int> coordinates(begin, begin + static_cast<long long>(rank));
      long long position = 0;
      for (size_t axis = 0; axis < rank; ++axis) {
        if (coordinates[axis] < 0 || coordinates[axis] >= mesh_shape_[axis])
          fail(Errc::invalid_argument, "`device_coordinates` of task " + std::to_string(task) + " device "
                                         + std::to_string(device) + " are " + numpy_str(coordinates)
                                         + ", outside the mesh " + numpy_str(mesh_shape_));
        position = position * mesh_shape_[axis] + coordinates[axis];
      }
      const auto slot = static_cast<size_t>(position);
      if (tasks_at_[slot] >= 0)
        fail(Errc::invalid_argument, "`device_coordinates` put task " + std::to_string(task) + " device "
                                       + std::to_string(device) + " and task " + std::to_string(tasks_at_[slot])
                                       + " device " + std::to_string(devices_at_[slot]) + " both at "
                                       + numpy_str(coordinates) + "; every device needs its own position");
      tasks_at_[slot] = task;
      devices_at_[slot] = device;
    }
  }
}

std::vector<std::vector<std::vector<int>>> Topology::device_coordinates() const {
  const auto rank = mesh_shape_.size();
  std::vector<std::vector<std::vector<int>>> out(static_cast<size_t>(num_tasks_));
  auto it = coordinates_.begin();
  for (auto& task : out) {
    task.resize(static_cast<size_t>(num_tpus_per_task_));
    for (auto& device : task) {
      device.assign(it, it + static_cast<long long>(rank));
      it += static_cast<long long>(rank);
    }
  }
  return out;
}

std::vector<std::vector<int>> Topology::missing_devices() const {
  std::vector<std::vector<int>> out;
  for (size_t position = 0; position < tasks_at_.size(); ++position) {
    if (tasks_at_[position] >= 0)
      continue;
    std::vector<int> coordinates(mesh_shape_.size());
    auto rest = position;
    for (size_t axis = mesh_shape_.size(); axis-- > 0;) {
      coordinates[axis] = static_cast<int>(rest % static_cast<size_t>(mesh_shape_[axis]));
      rest /= static_cast<size_t>(mesh_shape_[axis]);
    }
    out.push_back(std::move(coordinates));
  }
  return out;
}

long long Topology::position_of(const std::vector<int>& coordinates) const {
  if (coordinates.size() != mesh_shape_.size())
    fail(Errc::invalid_argument, "TPU coordinates " + numpy_str(coordinates) + " must have "
                                   + std::to_string(mesh_shape_.size()) + " entries (x, y, z, core)");
  long long position = 0;
  for (size_t axis = 0; axis < coordinates.size(); ++axis) {
    if (coordinates[axis] < 0 || coordinates[axis] >= mesh_shape_[axis])
      fail(Errc::out_of_range, "TPU coordinates " + numpy_str(coordinates) + " are outside the mesh "
                                 + numpy_str(mesh_shape_));
    position = position * mesh_shape_[axis] + coordinates[axis];
  }
  return position;
}

int Topology::task_ordinal_at_coordinates(const std::vector<int>& coordinates) const {
  return tasks_at_[static_cast<size_t>(position_of(coordinates))];
}

int Topology::tpu_device_ordinal_at_coordinates(const std::vector<int>& coordinates) const {
  return devices_at_[static_cast<size_t>(position_of(coordinates))];
}

std::string Topology::cpu_device_name_at_coordinates(const std::vector<int>& coordinates, std::string_view job) const {
  const auto task = "/task:" + std::to_string(task_ordinal_at_coordinates(coordinates)) + "/device:CPU:0";
  return job.empty() ? task : "/job:" + std::string(job) + task;
}

std::string Topology::tpu_device_name_at_coordinates(const std::vector<int>& coordinates, std::string_view job) const {
  const auto position = static_cast<size_t>(position_of(coordinates));
  const auto name = "/task:" + std::to_string(tasks_at_[position]) + "/device:TPU:" + std::to_string(devices_at_[position]);
  return job.empty() ? name : "/job:" + std::string(job) + name;
}

std::string Topology::serialized() const {
  if (serialized_) // TensorFlow returns the bytes it parsed
    return *serialized_;
  std::string out;
  put_packed(out, mesh_shape_field, mesh_shape_);
  put_int32(out, num_tasks_field, num_tasks_);
  put_int32(out, num_tpu_devices_per_task_field, num_tpus_per_task_);
  put_packed(out, device_coordinates_field, coordinates_);
  return out;
}

} // namespace troupe

// Topology against TensorFlow 2.21: every expected value below is what
// tensorflow.python.tpu.topology.Topology gave for the same input
// (tests/strategies/tpu_expected_values.py prints them; no test runs Python).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/tpu_topology.hpp>

#include "../support/error_code_of.hpp"

using troupe::Errc;
using troupe::Topology;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace {

using Bytes = std::string;

Bytes bytes(std::initializer_list<unsigned char> values) { return Bytes(values.begin(), values.end()); }

// Topology(mesh_shape=[2,2,1,2], device_coordinates=<v3-8 order>).device_coordinates.reshape(-1)
const std::vector<int> v3_8_coordinates{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1,
                                        0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1};

// .serialized() of that topology.
const Bytes v3_8_bytes = bytes({0x0a, 0x04, 0x02, 0x02, 0x01, 0x02, 0x10, 0x01, 0x18, 0x08, 0x22, 0x20, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00,
                                0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x00,
                                0x00, 0x01, 0x01, 0x00, 0x01});

// The 32-core single-host slice: mesh [4,4,1,2], x fastest over chips.
const std::vector<int> v3_32_coordinates{
  0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 0, 2, 0, 0, 1, 3, 0, 0, 0, 3, 0, 0, 1,
  0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 2, 1, 0, 0, 2, 1, 0, 1, 3, 1, 0, 0, 3, 1, 0, 1,
  0, 2, 0, 0, 0, 2, 0, 1, 1, 2, 0, 0, 1, 2, 0, 1, 2, 2, 0, 0, 2, 2, 0, 1, 3, 2, 0, 0, 3, 2, 0, 1,
  0, 3, 0, 0, 0, 3, 0, 1, 1, 3, 0, 0, 1, 3, 0, 1, 2, 3, 0, 0, 2, 3, 0, 1, 3, 3, 0, 0, 3, 3, 0, 1};

// The packed device_coordinates payload equals the coordinates themselves (all < 128).
Bytes v3_32_bytes() {
  Bytes out = bytes({0x0a, 0x04, 0x04, 0x04, 0x01, 0x02, 0x10, 0x01, 0x18, 0x20, 0x22, 0x80, 0x01});
  for (const int c : v3_32_coordinates)
    out += static_cast<char>(c);
  return out;
}

} // namespace

TEST_CASE("Topology: the emulated 8-core slice is TensorFlow's v3-8 layout and bytes", "[tpu]") {
  const auto topology = Topology::emulated_slice(8);
  CHECK(topology.mesh_shape() == std::vector<int>{2, 2, 1, 2});
  CHECK(topology.mesh_rank() == 4);
  CHECK(topology.num_tasks() == 1);
  CHECK(topology.num_tpus_per_task() == 8);
  CHECK(topology.device_coordinates_flat() == v3_8_coordinates);
  CHECK(topology.device_coordinates()[0][2] == std::vector<int>{1, 0, 0, 0});
  CHECK(topology.missing_devices().empty());
  CHECK(topology.serialized() == v3_8_bytes);
}

TEST_CASE("Topology: 1, 2 and 32 core slices serialize to TensorFlow's bytes", "[tpu]") {
  CHECK(Topology::emulated_slice(1).serialized()
        == bytes({0x0a, 0x04, 0x01, 0x01, 0x01, 0x01, 0x10, 0x01, 0x18, 0x01, 0x22, 0x04, 0x00, 0x00, 0x00, 0x00}));
  CHECK(Topology::emulated_slice(2).serialized()
        == bytes({0x0a, 0x04, 0x01, 0x01, 0x01, 0x02, 0x10, 0x01, 0x18, 0x02, 0x22, 0x08, 0x00, 0x00, 0x00, 0x00,
                  0x00, 0x00, 0x00, 0x01}));
  const auto v3_32 = Topology::emulated_slice(32);
  CHECK(v3_32.mesh_shape() == std::vector<int>{4, 4, 1, 2});
  CHECK(v3_32.device_coordinates_flat() == v3_32_coordinates);
  CHECK(v3_32.serialized() == v3_32_bytes());
  CHECK(v3_32.serialized().size() == 141);
}

TEST_CASE("Topology: several hosts own compact blocks of chips", "[tpu]") {
  // 16 cores over 2 hosts: mesh [4,2,1,2], host 0 the chips x 0-1, host 1 x 2-3.
  const auto two_hosts = Topology::emulated_slice(16, 2);
  CHECK(two_hosts.mesh_shape() == std::vector<int>{4, 2, 1, 2});
  CHECK(two_hosts.num_tasks() == 2);
  CHECK(two_hosts.num_tpus_per_task() == 8);
  CHECK(two_hosts.device_coordinates_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0,
                            1, 1, 0, 1, 2, 0, 0, 0, 2, 0, 0, 1, 3, 0, 0, 0, 3, 0, 0, 1, 2, 1, 0, 0, 2, 1, 0, 1,
                            3, 1, 0, 0, 3, 1, 0, 1});
  CHECK(two_hosts.serialized().substr(0, 12)
        == bytes({0x0a, 0x04, 0x04, 0x02, 0x01, 0x02, 0x10, 0x02, 0x18, 0x08, 0x22, 0x40}));
  // TF: tpu_device_name_at_coordinates([3,1,0,1], job='worker'), cpu_device_name_at_coordinates([3,1,0,1]),
  // tpu_device_name_at_coordinates([0,0,0,1]).
  CHECK(two_hosts.tpu_device_name_at_coordinates({3, 1, 0, 1}, "worker") == "/job:worker/task:1/device:TPU:7");
  CHECK(two_hosts.cpu_device_name_at_coordinates({3, 1, 0, 1}) == "/task:1/device:CPU:0");
  CHECK(two_hosts.tpu_device_name_at_coordinates({0, 0, 0, 1}) == "/task:0/device:TPU:1");
  CHECK(two_hosts.task_ordinal_at_coordinates({2, 0, 0, 0}) == 1);
  CHECK(two_hosts.tpu_device_ordinal_at_coordinates({2, 0, 0, 0}) == 0);

  // 32 cores over 4 hosts: 2x2 chips per host, as a v3-32 pod's hosts.
  const auto four_hosts = Topology::emulated_slice(32, 4);
  const auto coords = four_hosts.device_coordinates();
  CHECK(coords[1][0] == std::vector<int>{2, 0, 0, 0});
  CHECK(coords[2][0] == std::vector<int>{0, 2, 0, 0});
  CHECK(coords[3][7] == std::vector<int>{3, 3, 0, 1});
  CHECK(four_hosts.serialized().substr(6, 4) == bytes({0x10, 0x04, 0x18, 0x08}));

  // One core per host: two hosts share a chip.
  const auto half_chips = Topology::emulated_slice(2, 2);
  CHECK(half_chips.device_coordinates_flat() == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1});
  CHECK(half_chips.task_ordinal_at_coordinates({0, 0, 0, 1}) == 1);
}

TEST_CASE("Topology: an emulated slice needs a TPU core count its hosts divide", "[tpu]") {
  CHECK(error_code_of([] { (void)Topology::emulated_slice(6); }) == Errc::invalid_argument);
  CHECK_THAT(error_message_of([] { (void)Topology::emulated_slice(6); }),
             Catch::Contains("1, 2, 4, 8, 16 or 32 cores, got 6"));
  CHECK_THAT(error_message_of([] { (void)Topology::emulated_slice(8, 3); }),
             Catch::Contains("8 cores cannot be split over 3 hosts"));
}

TEST_CASE("Topology: the constructor checks the mesh and coordinates with TensorFlow's errors", "[tpu]") {
  // TF: Topology(mesh_shape=[2,2,1], device_coordinates=[[[0,0,0]]]) and mesh_shape=[2,2,0,2].
  CHECK(error_message_of([] { Topology({2, 2, 1}, {0, 0, 0}, {1, 1, 3}); })
        == "`mesh_shape` must be a sequence of 4 positive entries; got `mesh_shape=[2 2 1]`");
  CHECK(error_message_of([] { Topology({2, 2, 0, 2}, {0, 0, 0, 0}, {1, 1, 4}); })
        == "`mesh_shape` must be a sequence of 4 positive entries; got `mesh_shape=[2 2 0 2]`");
  // TF: Topology(mesh_shape=[2,2,1,2], device_coordinates=[[[0,0,0]]]).
  CHECK(error_message_of([] {
          Topology({2, 2, 1, 2}, std::vector<std::vector<std::vector<int>>>{{{0, 0, 0}}});
        })
        == "`device_coordinates` must be a rank 3 int32 array with minor dimension equal to the `mesh_shape` "
           "rankgot device_coordinates.shape=(1, 1, 3) len(device_coordinates.shape)=3 "
           "device_coordinates.shape[2]=3 mesh_shape=[2 2 1 2], len(mesh_shape)=4");
  CHECK(error_code_of([] { Topology({2, 2, 1, 2}, {0, 0, 0, 0}, {1, 4}); }) == Errc::invalid_argument);
  // Beyond TensorFlow (which indexes numpy without checks): outside the mesh, twice at one place, ragged.
  CHECK_THAT(error_message_of([] { Topology({2, 2, 1, 2}, {0, 2, 0, 0}, {1, 1, 4}); }),
             Catch::Contains("outside the mesh [2 2 1 2]"));
  CHECK_THAT(error_message_of([] { Topology({2, 2, 1, 2}, {0, 0, 0, 1, 0, 0, 0, 1}, {1, 2, 4}); }),
             Catch::Contains("both at [0 0 0 1]"));
  CHECK_THAT(error_message_of([] {
               Topology({2, 2, 1, 2}, std::vector<std::vector<std::vector<int>>>{{{0, 0, 0, 0}}, {}});
             }),
             Catch::Contains("ragged"));
  CHECK_THAT(error_message_of([] { Topology({2, 2, 1, 2}, {}, {2147483647, 2147483647, 4}); }),
             Catch::Contains("not the shape (2147483647, 2147483647, 4)"));
  CHECK_THAT(error_message_of([] { Topology({1024, 1024, 4, 2}, {}, {0, 0, 4}); }),
             Catch::Contains("positions"));
}

TEST_CASE("Topology: missing devices and lookups outside the mesh", "[tpu]") {
  // TF: Topology(mesh_shape=[2,2,1,2], device_coordinates=<the first 4 cores>).missing_devices
  const Topology half({2, 2, 1, 2}, {0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1}, {1, 4, 4});
  CHECK(half.missing_devices()
        == std::vector<std::vector<int>>{{0, 1, 0, 0}, {0, 1, 0, 1}, {1, 1, 0, 0}, {1, 1, 0, 1}});
  CHECK(half.task_ordinal_at_coordinates({1, 1, 0, 0}) == -1);
  CHECK(half.tpu_device_ordinal_at_coordinates({1, 1, 0, 0}) == -1);
  CHECK(error_code_of([&] { (void)half.task_ordinal_at_coordinates({2, 0, 0, 0}); }) == Errc::out_of_range);
  CHECK(error_code_of([&] { (void)half.tpu_device_name_at_coordinates({0, 0, 0}); }) == Errc::invalid_argument);
}

TEST_CASE("Topology: serialized bytes round-trip, TensorFlow's included", "[tpu]") {
  const auto parsed = Topology::from_serialized(v3_8_bytes);
  CHECK(parsed == Topology::emulated_slice(8));
  CHECK(parsed.serialized() == v3_8_bytes);
  const auto v3_32 = Topology::from_serialized(v3_32_bytes());
  CHECK(v3_32 == Topology::emulated_slice(32));
  const auto hosts = Topology::emulated_slice(32, 4);
  CHECK(Topology::from_serialized(hosts.serialized()) == hosts);
  CHECK(Topology(hosts.serialized()) == hosts);

  // protobuf's other encodings parse too: unpacked repeated fields, fields
  // out of order, an unknown field and tpu_hardware_feature (field 5) skipped.
  const auto unpacked = bytes({0x18, 0x01, 0x08, 0x01, 0x08, 0x01, 0x08, 0x01, 0x08, 0x02, 0x10, 0x01, 0x20,
                               0x00, 0x20, 0x00, 0x20, 0x00, 0x20, 0x01, 0x2a, 0x02, 0x08, 0x01, 0x30, 0x07});
  const auto one_core = Topology::from_serialized(unpacked);
  CHECK(one_core.mesh_shape() == std::vector<int>{1, 1, 1, 2});
  CHECK(one_core.device_coordinates_flat() == std::vector<int>{0, 0, 0, 1});
  CHECK(one_core.serialized() == unpacked); // as TensorFlow: the bytes it was built from
}

TEST_CASE("Topology: malformed serialized bytes are refused with what is wrong", "[tpu]") {
  const auto message = [](const Bytes& b) { return error_message_of([&] { (void)Topology::from_serialized(b); }); };
  // TensorFlow's _parse_topology errors; the bytes are TopologyProto(...).SerializeToString().
  CHECK(message(bytes({0x0a, 0x03, 0x02, 0x02, 0x01}))
        == "`mesh_shape` must be a vector of size 4 with positive entries; got [2 2 1]");
  CHECK(message(bytes({0x0a, 0x04, 0x02, 0x02, 0x01, 0x02, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                       0xff, 0x01}))
        == "`num_tasks` must be >= 0; got -1");
  CHECK(message(bytes({0x0a, 0x04, 0x02, 0x02, 0x01, 0x02, 0x10, 0x01, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                       0xff, 0xff, 0xff, 0x01}))
        == "`num_tpu_devices_per_task` must be >= 0; got -1");
  CHECK(message(bytes({0x0a, 0x04, 0x02, 0x02, 0x01, 0x02, 0x10, 0x01, 0x18, 0x02, 0x22, 0x04, 0x00, 0x00, 0x00,
                       0x00}))
        == "`device_coordinates` must have shape num_tasks (1) * num_tpu_devices_per_task (2) * len(mesh_shape) "
           "([2, 2, 1, 2]); got shape 4");
  CHECK(message(bytes({0x0a, 0x04, 0x02, 0x02, 0x01, 0x02, 0x10, 0x01, 0x18, 0x01, 0x22, 0x0d, 0x00, 0x00, 0x00,
                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}))
        == "All values in `device_coordinates` must be >= 0, got [ 0  0  0 -1]");

  // Wire-format damage, each bounded before anything is allocated.
  CHECK_THAT(message(""), Catch::Contains("empty"));
  CHECK_THAT(message(bytes({0x0a, 0x04, 0x02})), Catch::Contains("mesh_shape claims 4 bytes but only 1 are left"));
  CHECK_THAT(message(bytes({0x22, 0xff, 0xff, 0xff, 0xff, 0x0f})),
             Catch::Contains("device_coordinates claims 4294967295 bytes"));
  CHECK_THAT(message(bytes({0x10, 0x80})), Catch::Contains("truncated varint in num_tasks"));
  CHECK_THAT(message(bytes({0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})),
             Catch::Contains("longer than 64 bits"));
  CHECK_THAT(message(bytes({0x0b})), Catch::Contains("wire type 3"));
  CHECK_THAT(message(bytes({0x00})), Catch::Contains("field number 0"));
  // Huge counts are refused one by one, before their product is formed.
  CHECK_THAT(message(bytes({0x0a, 0x04, 0x02, 0x02, 0x01, 0x02, 0x10, 0xff, 0xff, 0xff, 0xff, 0x07, 0x18, 0xff, 0xff,
                            0xff, 0xff, 0x07})),
             Catch::Contains("`num_tasks` (2147483647) and `num_tpu_devices_per_task` (2147483647) must each be at "
                             "most 1048576"));
  // A huge mesh is refused before its position tables are sized.
  CHECK_THAT(message(bytes({0x0a, 0x10, 0xff, 0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0xff, 0xff, 0x07, 0xff, 0xff, 0xff,
                            0xff, 0x07, 0x01})),
             Catch::Contains("positions"));
  CHECK(error_code_of([&] { (void)Topology::from_serialized(bytes({0x0b})); }) == Errc::invalid_argument);
}

TEST_CASE("Topology: serialized bytes may not claim more tasks than a mesh has positions", "[tpu]") {
  // Found by fuzz/tpu_topology_fuzz (fuzz/corpus/tpu_topology/regression-many-empty-tasks):
  // 2^28 - 1 tasks of 0 devices each passed the tasks * devices check, and
  // device_coordinates() then allocated 6 GiB for the empty tasks.
  const std::string bytes("\x0a\x04\x25\x01\x01\x01\x10\xff\xff\x26\x10\xff\xff\xff\xff\x00", 16);
  CHECK(error_code_of([&] { (void)Topology::from_serialized(bytes); }) == Errc::invalid_argument);
}

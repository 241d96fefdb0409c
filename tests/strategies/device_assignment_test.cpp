// DeviceAssignment against TensorFlow 2.21: every expected assignment below is
// tensorflow.python.tpu.device_assignment.DeviceAssignment.build(topology,
// computation_shape=..., num_replicas=...).core_assignment.reshape(-1) for the
// same emulated topology (tests/strategies/tpu_expected_values.py prints
// them; no test runs Python).

#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/device_assignment.hpp>
#include <troupe/strategies/tpu_topology.hpp>

#include "../support/error_code_of.hpp"

using troupe::DeviceAssignment;
using troupe::DeviceOrderMode;
using troupe::Errc;
using troupe::Topology;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace {

DeviceAssignment build(const Topology& topology, std::vector<int> shape, int replicas,
                       std::optional<std::vector<int>> stride = std::nullopt,
                       DeviceOrderMode mode = DeviceOrderMode::AUTO) {
  return DeviceAssignment::build(topology, std::move(shape), std::move(stride), replicas, mode);
}

} // namespace

TEST_CASE("DeviceAssignment: 8 cores, one core per replica, 8 replicas", "[tpu]") {
  const auto topology = Topology::emulated_slice(8);
  const auto assignment = build(topology, {1, 1, 1, 1}, 8);
  CHECK(assignment.num_replicas() == 8);
  CHECK(assignment.num_cores_per_replica() == 1);
  CHECK(assignment.core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1,
                            0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1});
  for (int replica = 0; replica < 8; ++replica)
    CHECK(assignment.tpu_ordinal(replica) == replica);
  // The defaults: one replica of one core.
  const auto single = DeviceAssignment::build(topology);
  CHECK(single.core_assignment() == DeviceAssignment::CoreAssignment{{{0, 0, 0, 0}}});
}

TEST_CASE("DeviceAssignment: 8 cores, a chip per replica, 4 replicas in a ring", "[tpu]") {
  const auto assignment = build(Topology::emulated_slice(8), {1, 1, 1, 2}, 4);
  CHECK(assignment.num_replicas() == 4);
  CHECK(assignment.num_cores_per_replica() == 2);
  CHECK(assignment.core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1,
                            1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1});
  CHECK(assignment.coordinates(2, 1) == std::vector<int>{1, 1, 0, 1});
  // TF: tpu_device(1, 1), tpu_device(1, 1, job='worker'), host_device(2, 0, job='worker'), tpu_ordinal(3, 1)
  CHECK(assignment.tpu_device(1, 1) == "/task:0/device:TPU:3");
  CHECK(assignment.tpu_device(1, 1, "worker") == "/job:worker/task:0/device:TPU:3");
  CHECK(assignment.host_device(2, 0, "worker") == "/job:worker/task:0/device:CPU:0");
  CHECK(assignment.tpu_ordinal(3, 1) == 5);
  CHECK(assignment.lookup_replicas(0, 1) == std::vector<int>{0, 1, 2, 3});
  // MESH order instead: TF gives the mesh offsets in x, y order.
  CHECK(build(Topology::emulated_slice(8), {1, 1, 1, 2}, 4, std::nullopt, DeviceOrderMode::MESH)
          .core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1,
                            0, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1});
}

TEST_CASE("DeviceAssignment: 8 cores, model-parallel shapes 2x1x1x1 and 1x2x1x2", "[tpu]") {
  const auto topology = Topology::emulated_slice(8);
  const auto two_chips = build(topology, {2, 1, 1, 1}, 4);
  CHECK(two_chips.num_cores_per_replica() == 2);
  CHECK(two_chips.core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1,
                            0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 1});
  const auto four_cores = build(topology, {1, 2, 1, 2}, 2);
  CHECK(four_cores.num_cores_per_replica() == 4);
  CHECK(four_cores.core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1,
                            1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1});
}

TEST_CASE("DeviceAssignment: partial replication and strides", "[tpu]") {
  const auto topology = Topology::emulated_slice(8);
  CHECK(build(topology, {1, 1, 1, 1}, 3).core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0});
  CHECK(build(topology, {1, 1, 1, 2}, 2).core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1});
  CHECK(build(topology, {1, 1, 1, 1}, 4, std::vector<int>{2, 1, 1, 1}).core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1});
}

TEST_CASE("DeviceAssignment: 32 cores 4x4x1x2 in TensorFlow's rings", "[tpu]") {
  const auto topology = Topology::emulated_slice(32);
  const auto per_core = build(topology, {1, 1, 1, 1}, 32);
  CHECK(per_core.core_assignment_flat() == topology.device_coordinates_flat());
  const auto per_chip = build(topology, {1, 1, 1, 2}, 16);
  CHECK(per_chip.core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 0, 2, 0, 0, 1, 3, 0, 0, 0,
                            3, 0, 0, 1, 3, 1, 0, 0, 3, 1, 0, 1, 2, 1, 0, 0, 2, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1,
                            1, 2, 0, 0, 1, 2, 0, 1, 2, 2, 0, 0, 2, 2, 0, 1, 3, 2, 0, 0, 3, 2, 0, 1, 3, 3, 0, 0,
                            3, 3, 0, 1, 2, 3, 0, 0, 2, 3, 0, 1, 1, 3, 0, 0, 1, 3, 0, 1, 0, 3, 0, 0, 0, 3, 0, 1,
                            0, 2, 0, 0, 0, 2, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1});
  const auto per_host = build(topology, {2, 2, 1, 2}, 4);
  CHECK(per_host.core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0,
                            0, 1, 0, 1, 2, 0, 0, 0, 2, 0, 0, 1, 3, 0, 0, 0, 3, 0, 0, 1, 3, 1, 0, 0, 3, 1, 0, 1,
                            2, 1, 0, 0, 2, 1, 0, 1, 2, 2, 0, 0, 2, 2, 0, 1, 3, 2, 0, 0, 3, 2, 0, 1, 3, 3, 0, 0,
                            3, 3, 0, 1, 2, 3, 0, 0, 2, 3, 0, 1, 0, 2, 0, 0, 0, 2, 0, 1, 1, 2, 0, 0, 1, 2, 0, 1,
                            1, 3, 0, 0, 1, 3, 0, 1, 0, 3, 0, 0, 0, 3, 0, 1});
  CHECK(build(topology, {1, 1, 1, 1}, 5).core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0});
}

TEST_CASE("DeviceAssignment: two hosts of 8 cores, device names with task ids", "[tpu]") {
  const auto assignment = build(Topology::emulated_slice(16, 2), {1, 1, 1, 2}, 8);
  CHECK(assignment.core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 0, 2, 0, 0, 1, 3, 0, 0, 0,
                            3, 0, 0, 1, 3, 1, 0, 0, 3, 1, 0, 1, 2, 1, 0, 0, 2, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1,
                            0, 1, 0, 0, 0, 1, 0, 1});
  const std::vector<std::string> tpu_devices{
    "/job:worker/task:0/device:TPU:0", "/job:worker/task:0/device:TPU:2", "/job:worker/task:1/device:TPU:0",
    "/job:worker/task:1/device:TPU:2", "/job:worker/task:1/device:TPU:6", "/job:worker/task:1/device:TPU:4",
    "/job:worker/task:0/device:TPU:6", "/job:worker/task:0/device:TPU:4"};
  const std::vector<int> host_tasks{0, 0, 1, 1, 1, 1, 0, 0};
  for (int replica = 0; replica < 8; ++replica) {
    CHECK(assignment.tpu_device(replica, 0, "worker") == tpu_devices[replica]);
    CHECK(assignment.host_device(replica, 0, "worker")
          == "/job:worker/task:" + std::to_string(host_tasks[replica]) + "/device:CPU:0");
  }
  CHECK(assignment.lookup_replicas(1, 0) == std::vector<int>{2, 3, 4, 5});
  CHECK(assignment.lookup_replicas(0, 1) == std::vector<int>{0, 1, 6, 7});
  CHECK(error_message_of([&] { (void)assignment.lookup_replicas(2, 0); })
        == "Can not find any replica in task: 2 contains logical_core: 0 ");
}

TEST_CASE("DeviceAssignment: shapes that do not fit give TensorFlow's errors", "[tpu]") {
  const auto topology = Topology::emulated_slice(8);
  CHECK(error_message_of([&] { (void)build(topology, {1, 1, 1, 4}, 1); })
        == "computation footprint [1 1 1 4] does not fit in TPU topology shape [2 2 1 2]");
  CHECK(error_message_of([&] { (void)build(topology, {3, 1, 1, 1}, 1); })
        == "computation footprint [3 1 1 1] does not fit in TPU topology shape [2 2 1 2]");
  CHECK(error_message_of([&] { (void)build(topology, {1, 1, 1, 1}, 9); })
        == "requested 9 replicas but only 8 replicas with shape [1 1 1 1] and computation_stride [1 1 1 1] fit "
           "in a TPU mesh of shape [2 2 1 2]");
  CHECK(error_message_of([&] { (void)build(topology, {1, 1, 1}, 1); })
        == "computation_shape must have shape [4]; got (3,)");
  CHECK(error_message_of([&] { (void)build(topology, {1, 1, 1, 0}, 1); })
        == "computation_shape must be positive; got computation_shape=[1 1 1 0]");
  CHECK(error_message_of([&] { (void)build(topology, {1, 1, 1, 1}, 1, std::vector<int>{1, 0, 1, 1}); })
        == "computation_stride must be positive; got computation_stride=[1 0 1 1]");
  CHECK(error_message_of([&] { (void)build(topology, {1, 1, 1, 2}, 2, std::nullopt, DeviceOrderMode::RING); })
        == "device_order_mode=DeviceOrderMode.RING is not compatible with the 3D tiling current topology.  Try "
           "setting device_order_mode=DeviceOrderMode.AUTO");
  CHECK(error_code_of([&] { (void)build(topology, {1, 1, 1, 1}, -1); }) == Errc::invalid_argument);
}

TEST_CASE("DeviceAssignment: core_assignment must be rank 3 with the topology's rank", "[tpu]") {
  const auto topology = Topology::emulated_slice(8);
  // TF: DeviceAssignment(topology, [[0,0,0,0]]) and DeviceAssignment(topology, [[[0,0,0]]]).
  CHECK(error_message_of([&] { DeviceAssignment(topology, {0, 0, 0, 0}, {1, 4}); })
        == "core_assignment must be a rank 3 numpy array, got shape (1, 4)");
  CHECK(error_message_of([&] { DeviceAssignment(topology, DeviceAssignment::CoreAssignment{{{0, 0, 0}}}); })
        == "core_assignment.shape[-1] must have size equal to topology rank (4), got core_assignment.shape=(1, 1, 3)");
  CHECK_THAT(error_message_of([&] { DeviceAssignment(topology, {}, {2147483647, 2147483647, 4}); }),
             Catch::Contains("not the shape (2147483647, 2147483647, 4)"));
  CHECK_THAT(error_message_of([&] { DeviceAssignment(topology, DeviceAssignment::CoreAssignment{{{0, 0, 0, 0}}, {}}); }),
             Catch::Contains("ragged"));
  CHECK_THAT(error_message_of([&] { DeviceAssignment(topology, DeviceAssignment::CoreAssignment{{{0, 0, 2, 0}}}); }),
             Catch::Contains("outside the TPU mesh"));
  const DeviceAssignment manual(topology, DeviceAssignment::CoreAssignment{{{1, 1, 0, 1}}, {{0, 0, 0, 0}}});
  CHECK(manual.num_replicas() == 2);
  CHECK(manual.tpu_device(0) == "/task:0/device:TPU:7");
  CHECK(error_code_of([&] { (void)manual.coordinates(2, 0); }) == Errc::out_of_range);
}

TEST_CASE("DeviceAssignment: a topology with missing devices assigns in task order", "[tpu]") {
  const Topology half({2, 2, 1, 2}, {0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1}, {1, 4, 4});
  CHECK(build(half, {1, 1, 1, 1}, 4).core_assignment_flat()
        == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1});
}

TEST_CASE("DeviceAssignment: TensorFlow's ring orders", "[tpu]") {
  using Ring = std::vector<std::array<int, 3>>;
  // _open_ring_2d(4, 4, 0) in TensorFlow's docstring order (chip 0 left out).
  CHECK(troupe::internal::open_ring_2d(4, 4, 0)
        == Ring{{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {3, 1, 0}, {2, 1, 0}, {1, 1, 0}, {1, 2, 0}, {2, 2, 0},
                {3, 2, 0}, {3, 3, 0}, {2, 3, 0}, {1, 3, 0}, {0, 3, 0}, {0, 2, 0}, {0, 1, 0}});
  // _ring_3d(2, 2, 2): z == 0 forward, z == 1 backward, then down the corner.
  CHECK(troupe::internal::ring_3d(2, 2, 2)
        == Ring{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 1, 1}, {1, 1, 1}, {1, 0, 1}, {0, 0, 1}});
  CHECK(troupe::internal::ring_3d(1, 1, 3) == Ring{{0, 0, 0}, {0, 0, 1}, {0, 0, 2}});
  CHECK(troupe::internal::ring_3d(3, 2, 1)
        == Ring{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 1, 0}});
  CHECK(troupe::internal::ring_3d(2, 1, 2) == Ring{{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}});
}

// TPUStrategy's model parallelism: experimental_assign_to_logical_device,
// experimental_split_to_logical_devices and
// experimental_replicate_to_logical_devices place a tensor on the calling
// replica's logical cores. The error texts are TensorFlow 2.21's
// (tensorflow/python/distribute/tpu_strategy.py).
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include <support/error_code_of.hpp>

#include <troupe/troupe.hpp>

using namespace troupe;
using Catch::Matchers::Contains;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

namespace {

// A runtime of 8 emulated TPU cores (or a simulated one), its TPU system initialized.
struct TpuHost {
  template <class Options>
  explicit TpuHost(const Options& options) : rt(options), resolver("local") {
    topology = initialize_tpu_system(rt, resolver);
  }
  TpuHost() : TpuHost(RuntimeOptions{.logical_tpu_cores = 8}) {}
  Runtime rt;
  TPUClusterResolver resolver;
  std::optional<Topology> topology;
};

// 4 replicas of 2 logical cores on 8 cores.
DeviceAssignment two_cores_per_replica(const Topology& topology) {
  return DeviceAssignment::build(topology, std::vector<int>{1, 1, 1, 2}, std::nullopt, 4);
}

// 0, 1, ..., n-1 (+ offset) in `shape`.
Tensor iota(const Shape& shape, int64_t offset = 0) {
  std::vector<int64_t> values(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<int64_t>(i) + offset;
  return Tensor::from_vector(values, shape);
}

std::vector<int64_t> values_of(const Tensor& t) {
  return t.to_vector<int64_t>();
}

// Runs `place(replica)` on every replica and keeps each replica's result.
template <class Place>
std::vector<std::optional<LogicalDeviceTensor>> placed_on_each_replica(TPUStrategy& tpu,
                                                                       Place place) {
  std::vector<std::optional<LogicalDeviceTensor>> placed(
    static_cast<size_t>(tpu.num_replicas_in_sync()));
  tpu.run([&] {
    const int r = get_replica_context().replica_id_in_sync_group();
    placed[static_cast<size_t>(r)] = place(r); // each replica writes its own slot
  });
  return placed;
}

// The message of the error `place` raises inside strategy.run (replica context).
template <class Place>
std::string error_in_replica(TPUStrategy& tpu, Place place) {
  return error_message_of([&] { tpu.run([&] { (void)place(); }); });
}

template <class Place>
Errc error_code_in_replica(TPUStrategy& tpu, Place place) {
  return error_code_of([&] { tpu.run([&] { (void)place(); }); });
}

} // namespace

TEST_CASE("assign_to_logical_device puts the whole tensor on that core of the calling replica",
          "[strategies][tpu][model_parallel]") {
  TpuHost host;
  const auto assignment = two_cores_per_replica(*host.topology);
  TPUStrategy tpu(host.rt, host.resolver, assignment);
  REQUIRE(tpu.extended().num_cores_per_replica() == 2);
  std::vector<Tensor> inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back(iota(Shape{2, 3}, 100 * r));
  auto placed = placed_on_each_replica(tpu, [&](int r) {
    return tpu.experimental_assign_to_logical_device(inputs[static_cast<size_t>(r)], 1);
  });
  for (int r = 0; r < 4; ++r) {
    const auto& value = *placed[static_cast<size_t>(r)];
    const auto& cores = tpu.extended().logical_devices(r);
    CHECK(value.sharding() == LogicalDeviceTensor::Sharding::assigned);
    REQUIRE(value.shards().size() == 1);
    CHECK(value.logical_cores() == std::vector<int>{1});
    CHECK(value.devices() == std::vector<DeviceSpec>{cores[1]});
    CHECK(value.partition_dimensions() == std::vector<int>{1, 1});
    // The shard is this replica's second core, with its own bytes.
    const auto& shard = value.shard_on(1);
    CHECK(shard.device() == cores[1]);
    CHECK(shard.device().short_name() == "TPU:" + std::to_string(assignment.tpu_ordinal(r, 1)));
    CHECK_FALSE(shard.shares_buffer_with(inputs[static_cast<size_t>(r)]));
    CHECK(values_of(shard) == values_of(inputs[static_cast<size_t>(r)]));
    // read() brings it to the replica's first core, where its function runs.
    const auto whole = value.read();
    CHECK(whole.shape() == Shape{2, 3});
    CHECK(whole.device() == cores[0]);
    CHECK(values_of(whole) == values_of(inputs[static_cast<size_t>(r)]));
    CHECK_THAT(error_message_of([&] { (void)value.shard_on(0); }),
               Contains("logical core 0 holds no shard")
                 && Contains("assigned to logical core 1 only"));
  }
}

TEST_CASE("assign_to_logical_device outside the replica's cores is TensorFlow's ValueError",
          "[strategies][tpu][model_parallel]") {
  TpuHost host;
  TPUStrategy tpu(host.rt, host.resolver, two_cores_per_replica(*host.topology));
  const auto t = iota(Shape{2});
  for (const int id : {2, -1}) {
    CHECK(
      error_code_in_replica(tpu, [&] { return tpu.experimental_assign_to_logical_device(t, id); })
      == Errc::invalid_argument);
    CHECK(error_in_replica(tpu, [&] { return tpu.experimental_assign_to_logical_device(t, id); })
          == "TPUStrategy.experimental_assign_to_logical_device: `logical_core_id` to assign must "
             "be lower then "
             "total number of logical devices per replica. Received logical device id "
               + std::to_string(id) + " but there are only total of 2 logical devices in replica.");
  }
  CHECK_THAT(
    error_in_replica(tpu, [&] { return tpu.experimental_assign_to_logical_device(Tensor(), 0); }),
    Contains("`tensor` is an empty Tensor handle"));
}

TEST_CASE("split_to_logical_devices validates as TensorFlow does, with its texts",
          "[strategies][tpu][model_parallel]") {
  TpuHost host;
  TPUStrategy tpu(host.rt, host.resolver, two_cores_per_replica(*host.topology));
  const auto matrix = iota(Shape{4, 6});
  const auto split = [&](const Tensor& t, std::vector<int> parts) {
    return error_in_replica(tpu,
                            [&] { return tpu.experimental_split_to_logical_devices(t, parts); });
  };
  const std::string prefix = "TPUStrategy.experimental_split_to_logical_devices: ";
  CHECK(split(matrix, {2})
        == prefix
             + "Length of `partition_dimensions` must equal to the rank of `tensor.shape` (2). "
               "Received "
               "len(partition_dimensions)=1.");
  // TensorFlow 2.21 pads no uneven split: a dimension the parts do not divide is its error.
  CHECK(split(iota(Shape{3, 6}), {2, 1})
        == prefix
             + "Tensor shape at `partition_dimensions[0]` must be divisible by corresponding value "
               "specified by "
               "`partition_dimensions` (2). Received: 3.");
  CHECK(split(iota(Shape{4, 5}), {1, 2})
        == prefix
             + "Tensor shape at `partition_dimensions[1]` must be divisible by corresponding value "
               "specified by "
               "`partition_dimensions` (2). Received: 5.");
  // Divisibility is checked before the product, as in TensorFlow.
  CHECK_THAT(split(iota(Shape{3, 6}), {2, 2}),
             Contains("`partition_dimensions[0]` must be divisible"));
  CHECK(split(matrix, {2, 2})
        == prefix
             + "The product of `partition_dimensions` should be the same as the number of logical "
               "devices (=2). "
               "Received `partition_dimensions`=[2, 2],and their product is 4.");
  CHECK(split(matrix, {1, 1})
        == prefix
             + "The product of `partition_dimensions` should be the same as the number of logical "
               "devices (=2). "
               "Received `partition_dimensions`=[1, 1],and their product is 1.");
  // numpy's product of no dimensions is 1.0.
  CHECK_THAT(split(Tensor(int64_t{7}), {}),
             Contains("`partition_dimensions`=[],and their product is 1.0."));
  // Python would divide by zero; the part count is named instead.
  CHECK_THAT(split(matrix, {0, 2}),
             Contains("`partition_dimensions[0]` must be at least 1") && Contains("Received: 0."));
  CHECK(error_code_in_replica(tpu,
                              [&] {
                                return tpu.experimental_split_to_logical_devices(matrix, {2, 2});
                              })
        == Errc::invalid_argument);
}

TEST_CASE("split_to_logical_devices tiles a 2-core replica row-major over the partition",
          "[strategies][tpu][model_parallel]") {
  TpuHost host;
  const auto assignment = two_cores_per_replica(*host.topology);
  TPUStrategy tpu(host.rt, host.resolver, assignment);
  std::vector<Tensor> inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back(iota(Shape{4, 6}, 100 * r));
  auto rows = placed_on_each_replica(tpu, [&](int r) {
    return tpu.experimental_split_to_logical_devices(inputs[static_cast<size_t>(r)], {2, 1});
  });
  auto columns = placed_on_each_replica(tpu, [&](int r) {
    return tpu.experimental_split_to_logical_devices(inputs[static_cast<size_t>(r)], {1, 2});
  });
  for (int r = 0; r < 4; ++r) {
    const int64_t o = 100 * r;
    const auto& cores = tpu.extended().logical_devices(r);
    const auto& by_rows = *rows[static_cast<size_t>(r)];
    CHECK(by_rows.sharding() == LogicalDeviceTensor::Sharding::split);
    CHECK(by_rows.partition_dimensions() == std::vector<int>{2, 1});
    CHECK(by_rows.shape() == Shape{4, 6});
    REQUIRE(by_rows.shards().size() == 2);
    CHECK(by_rows.devices() == cores);
    CHECK(by_rows.logical_cores() == std::vector<int>{0, 1});
    for (int k = 0; k < 2; ++k) {
      const auto& shard = by_rows.shard_on(k);
      CHECK(shard.shape() == Shape{2, 6});
      CHECK(shard.device() == cores[static_cast<size_t>(k)]);
      CHECK(shard.device().short_name() == "TPU:" + std::to_string(assignment.tpu_ordinal(r, k)));
    }
    CHECK(values_of(by_rows.shard_on(0)) == values_of(iota(Shape{2, 6}, o)));
    CHECK(values_of(by_rows.shard_on(1)) == values_of(iota(Shape{2, 6}, o + 12)));
    const auto& by_columns = *columns[static_cast<size_t>(r)];
    REQUIRE(by_columns.shards().size() == 2);
    CHECK(by_columns.shards()[0].shape() == Shape{4, 3});
    CHECK(values_of(by_columns.shard_on(0))
          == std::vector<int64_t>{o + 0, o + 1, o + 2, o + 6, o + 7, o + 8, o + 12, o + 13, o + 14,
                                  o + 18, o + 19, o + 20});
    CHECK(values_of(by_columns.shard_on(1))
          == std::vector<int64_t>{o + 3, o + 4, o + 5, o + 9, o + 10, o + 11, o + 15, o + 16,
                                  o + 17, o + 21, o + 22, o + 23});
    CHECK(by_columns.shard_on(1).device() == cores[1]);
    // read() gathers the shards back, on the replica's first core.
    for (const auto* value : {&by_rows, &by_columns}) {
      const auto whole = value->read();
      CHECK(whole.shape() == Shape{4, 6});
      CHECK(whole.device() == cores[0]);
      CHECK(values_of(whole) == values_of(inputs[static_cast<size_t>(r)]));
    }
    CHECK_THAT(error_message_of([&] { (void)by_rows.shard_on(2); }),
               Contains("logical core 2 does not exist") && Contains("logical cores 0..1"));
  }
}

TEST_CASE("split_to_logical_devices tiles a 4-core replica as XLA's tile assignment",
          "[strategies][tpu][model_parallel]") {
  TpuHost host;
  const auto assignment =
    DeviceAssignment::build(*host.topology, std::vector<int>{1, 2, 1, 2}, std::nullopt, 2);
  TPUStrategy tpu(host.rt, host.resolver, assignment);
  REQUIRE(tpu.extended().num_cores_per_replica() == 4);
  REQUIRE(tpu.num_replicas_in_sync() == 2);
  const auto matrix = iota(Shape{4, 4});
  auto grid = placed_on_each_replica(tpu, [&](int) {
    return tpu.experimental_split_to_logical_devices(matrix, {2, 2});
  });
  // A (2, 4, 2) float tensor split 2 ways along dimensions 1 and 2, and 4 ways along dimension 0 of
  // an (8, 1) one.
  const auto cube = iota(Shape{2, 4, 2}).cast(DType::float32);
  auto inner = placed_on_each_replica(tpu, [&](int) {
    return tpu.experimental_split_to_logical_devices(cube, {1, 2, 2});
  });
  auto column = placed_on_each_replica(tpu, [&](int) {
    return tpu.experimental_split_to_logical_devices(iota(Shape{8, 1}), {4, 1});
  });
  for (int r = 0; r < 2; ++r) {
    const auto& cores = tpu.extended().logical_devices(r);
    REQUIRE(cores.size() == 4);
    const auto& tiles = *grid[static_cast<size_t>(r)];
    REQUIRE(tiles.shards().size() == 4);
    CHECK(tiles.devices() == cores);
    for (int k = 0; k < 4; ++k) {
      CHECK(tiles.shard_on(k).shape() == Shape{2, 2});
      CHECK(tiles.shard_on(k).device().short_name()
            == "TPU:" + std::to_string(assignment.tpu_ordinal(r, k)));
    }
    // np.arange(4).reshape([2, 2]): core 0 the top left, 1 the top right, 2 the bottom left, 3 the
    // bottom right.
    CHECK(values_of(tiles.shard_on(0)) == std::vector<int64_t>{0, 1, 4, 5});
    CHECK(values_of(tiles.shard_on(1)) == std::vector<int64_t>{2, 3, 6, 7});
    CHECK(values_of(tiles.shard_on(2)) == std::vector<int64_t>{8, 9, 12, 13});
    CHECK(values_of(tiles.shard_on(3)) == std::vector<int64_t>{10, 11, 14, 15});
    CHECK(values_of(tiles.read()) == values_of(matrix));

    const auto& cube_tiles = *inner[static_cast<size_t>(r)];
    CHECK(cube_tiles.shard_on(0).shape() == Shape{2, 2, 1});
    CHECK(cube_tiles.shard_on(0).to_vector<float>() == std::vector<float>{0, 2, 8, 10});
    CHECK(cube_tiles.shard_on(1).to_vector<float>() == std::vector<float>{1, 3, 9, 11});
    CHECK(cube_tiles.shard_on(2).to_vector<float>() == std::vector<float>{4, 6, 12, 14});
    CHECK(cube_tiles.shard_on(3).to_vector<float>() == std::vector<float>{5, 7, 13, 15});
    const auto cube_back = cube_tiles.read();
    CHECK(cube_back.dtype() == DType::float32);
    CHECK(cube_back.to_vector<float>() == cube.to_vector<float>());

    const auto& column_tiles = *column[static_cast<size_t>(r)];
    for (int k = 0; k < 4; ++k)
      CHECK(values_of(column_tiles.shard_on(k)) == std::vector<int64_t>{2 * k, 2 * k + 1});
  }
  CHECK_THAT(error_in_replica(tpu,
                              [&] {
                                return tpu.experimental_split_to_logical_devices(matrix, {2, 1});
                              }),
             Contains("number of logical devices (=4)")
               && Contains("`partition_dimensions`=[2, 1],and their product is 2."));
  CHECK_THAT(
    error_in_replica(tpu, [&] { return tpu.experimental_assign_to_logical_device(matrix, 4); }),
    Contains(
      "Received logical device id 4 but there are only total of 4 logical devices in replica."));
}

TEST_CASE("replicate_to_logical_devices gives every core of the replica its own copy",
          "[strategies][tpu][model_parallel]") {
  TpuHost host;
  TPUStrategy tpu(host.rt, host.resolver, two_cores_per_replica(*host.topology));
  const auto labels = iota(Shape{3});
  auto placed = placed_on_each_replica(
    tpu, [&](int) { return tpu.experimental_replicate_to_logical_devices(labels); });
  for (int r = 0; r < 4; ++r) {
    const auto& value = *placed[static_cast<size_t>(r)];
    const auto& cores = tpu.extended().logical_devices(r);
    CHECK(value.sharding() == LogicalDeviceTensor::Sharding::replicated);
    CHECK(value.partition_dimensions() == std::vector<int>{1});
    REQUIRE(value.shards().size() == 2);
    CHECK(value.devices() == cores);
    for (int k = 0; k < 2; ++k) {
      CHECK(value.shard_on(k).device() == cores[static_cast<size_t>(k)]);
      CHECK(values_of(value.shard_on(k)) == std::vector<int64_t>{0, 1, 2});
    }
    CHECK_FALSE(value.shard_on(0).shares_buffer_with(value.shard_on(1)));
    CHECK(value.read().device() == cores[0]);
    CHECK(values_of(value.read()) == std::vector<int64_t>{0, 1, 2});
  }
}

TEST_CASE("a one-core replica holds every placement whole on its only core",
          "[strategies][tpu][model_parallel]") {
  TpuHost host;
  TPUStrategy tpu(host.rt, host.resolver); // TensorFlow's default: one core per replica
  REQUIRE(tpu.extended().num_cores_per_replica() == 1);
  const auto t = iota(Shape{2, 2});
  struct Placed {
    LogicalDeviceTensor assigned, split, replicated;
  };
  std::vector<std::optional<Placed>> placed(8);
  tpu.run([&] {
    const int r = get_replica_context().replica_id_in_sync_group();
    placed[static_cast<size_t>(r)] = Placed{tpu.experimental_assign_to_logical_device(t, 0),
                                            tpu.experimental_split_to_logical_devices(t, {1, 1}),
                                            tpu.experimental_replicate_to_logical_devices(t)};
  });
  for (int r = 0; r < 8; ++r) {
    const auto& p = *placed[static_cast<size_t>(r)];
    const auto& core = tpu.extended().worker_devices()[static_cast<size_t>(r)];
    for (const auto* value : {&p.assigned, &p.split, &p.replicated}) {
      REQUIRE(value->shards().size() == 1);
      CHECK(value->devices() == std::vector<DeviceSpec>{core});
      CHECK(value->shard_on(0).shape() == Shape{2, 2});
      CHECK(values_of(value->read()) == std::vector<int64_t>{0, 1, 2, 3});
    }
  }
  // TensorFlow's checks against one logical device per replica.
  CHECK_THAT(
    error_in_replica(tpu, [&] { return tpu.experimental_assign_to_logical_device(t, 1); }),
    Contains(
      "Received logical device id 1 but there are only total of 1 logical devices in replica."));
  CHECK_THAT(error_in_replica(tpu,
                              [&] {
                                return tpu.experimental_split_to_logical_devices(t, {2, 1});
                              }),
             Contains("number of logical devices (=1). Received `partition_dimensions`=[2, 1],and "
                      "their product is 2."));
}

TEST_CASE(
  "model-parallel placement in cross-replica context is refused after TensorFlow's validation",
  "[strategies][tpu][model_parallel]") {
  TpuHost host;
  TPUStrategy tpu(host.rt, host.resolver, two_cores_per_replica(*host.topology));
  const auto t = iota(Shape{2, 2});
  const auto outside = [](auto place) {
    CHECK(error_code_of(place) == Errc::failed_precondition);
    CHECK_THAT(error_message_of(place), Contains("outside this strategy's replica context")
                                          && Contains("inside the function given to strategy.run"));
  };
  outside([&] { (void)tpu.experimental_assign_to_logical_device(t, 1); });
  outside([&] { (void)tpu.experimental_split_to_logical_devices(t, {1, 2}); });
  outside([&] { (void)tpu.experimental_replicate_to_logical_devices(t); });
  {
    auto scope = tpu.scope();
    outside([&] { (void)tpu.experimental_replicate_to_logical_devices(t); });
  }
  // Inside another strategy's replica context there is no replica of this one.
  TPUStrategy other(host.rt, host.resolver, two_cores_per_replica(*host.topology));
  CHECK_THAT(error_message_of(
               [&] { other.run([&] { (void)tpu.experimental_replicate_to_logical_devices(t); }); }),
             Contains("outside this strategy's replica context"));
  // TensorFlow validates the arguments first, in any context.
  CHECK(error_code_of([&] { (void)tpu.experimental_assign_to_logical_device(t, 2); })
        == Errc::invalid_argument);
  CHECK(error_code_of([&] {
          (void)tpu.experimental_split_to_logical_devices(t, {2, 2});
        })
        == Errc::invalid_argument);
}

TEST_CASE("a split model step under the deterministic simulation all-reduces the gathered shards",
          "[strategies][tpu][model_parallel]") {
  TpuHost host(Simulation{.seed = 3, .logical_tpu_cores = 8});
  TPUStrategy tpu(host.rt, host.resolver, two_cores_per_replica(*host.topology));
  std::vector<std::optional<LogicalDeviceTensor>> placed(4);
  auto sums = tpu.run([&] {
    auto& ctx = get_replica_context();
    const int r = ctx.replica_id_in_sync_group();
    // Replica r's batch (2, 2) of r*4 .. r*4+3, its features split over its two cores.
    auto split = tpu.experimental_split_to_logical_devices(iota(Shape{2, 2}, 4 * r), {1, 2});
    auto batch = split.read();
    placed[static_cast<size_t>(r)] = std::move(split);
    return ctx.all_reduce(ReduceOp::SUM, batch);
  });
  for (int r = 0; r < 4; ++r) {
    CHECK(values_of(sums[r]) == std::vector<int64_t>{24, 28, 32, 36});
    const auto& split = *placed[static_cast<size_t>(r)];
    CHECK(values_of(split.shard_on(0)) == std::vector<int64_t>{4 * r, 4 * r + 2});
    CHECK(values_of(split.shard_on(1)) == std::vector<int64_t>{4 * r + 1, 4 * r + 3});
    CHECK(split.devices() == tpu.extended().logical_devices(r));
  }
}

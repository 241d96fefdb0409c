#include <atomic>
#include <stdexcept>

#include <catch2/catch.hpp>

#include <support/runtime_modes.hpp>

using namespace troupe;
using troupe::testing::cpu_devices;
using troupe::testing::make_runtime;

namespace {

// Replica r's input: element i holds (r + 1) * 1000 + i, so sums are exact and
// every element and replica differs.
Tensor replica_input(int replica, int64_t size, DType dtype) {
  std::vector<double> values(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i)
    values[static_cast<size_t>(i)] = (replica + 1) * 1000.0 + static_cast<double>(i % 997);
  return Tensor::from_vector(values, {size}).cast(dtype);
}

Tensor expected_sum(int replicas, int64_t size, DType dtype) {
  std::vector<double> values(static_cast<size_t>(size), 0.0);
  for (int r = 0; r < replicas; ++r)
    for (int64_t i = 0; i < size; ++i)
      values[static_cast<size_t>(i)] += (r + 1) * 1000.0 + static_cast<double>(i % 997);
  return Tensor::from_vector(values, {size}).cast(dtype);
}

} // namespace

TEST_CASE("all_reduce sums every element across replicas in every runtime mode", "[strategies][all_reduce]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  const int n = 3;
  auto rt = make_runtime(mode, n);
  MirroredStrategy strategy(*rt, cpu_devices(n));
  auto inputs = strategy.experimental_distribute_values_from_function(
    [](const ValueContext& vc) { return replica_input(vc.replica_id_in_sync_group, 1000, DType::float32); });
  auto result = strategy.run(
    [](const Tensor& x) { return get_replica_context().all_reduce(ReduceOp::SUM, x); }, inputs);
  const auto expected = expected_sum(n, 1000, DType::float32);
  for (const auto& t : strategy.experimental_local_results(result))
    CHECK(array_equal(t, expected));
  // Every replica shares the one output buffer: no copies.
  CHECK(result[0].shares_buffer_with(result[2]));
}

TEST_CASE("a large all_reduce split over replicas covers every element once", "[strategies][all_reduce]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  const int n = 4;
  auto rt = make_runtime(mode, n);
  MirroredStrategy strategy(*rt, cpu_devices(n));
  // 300k floats = 1.2 MB: above the split threshold, with an odd length so the
  // parts end mid cache line.
  const int64_t size = 300'001;
  auto inputs = strategy.experimental_distribute_values_from_function(
    [&](const ValueContext& vc) { return replica_input(vc.replica_id_in_sync_group, size, DType::float32); });
  auto result = strategy.run(
    [](const Tensor& x) { return get_replica_context().all_reduce(ReduceOp::SUM, x); }, inputs);
  const auto expected = expected_sum(n, size, DType::float32);
  for (const auto& t : strategy.experimental_local_results(result))
    REQUIRE(array_equal(t, expected));
}

TEST_CASE("all_reduce MEAN divides by the replica count for each dtype", "[strategies][all_reduce]") {
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::int32, DType::int64,
                              DType::float16, DType::bfloat16);
  CAPTURE(name(dtype));
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  auto inputs = strategy.experimental_distribute_values_from_function([&](const ValueContext& vc) {
    return Tensor::from_vector<double>({2.0 + vc.replica_id_in_sync_group, 8.0}).cast(dtype);
  });
  auto mean = strategy.run(
    [](const Tensor& x) { return get_replica_context().all_reduce(ReduceOp::MEAN, x); }, inputs);
  // (2 + 3) / 2 = 2.5: integers too, as TensorFlow's true division, in float64.
  CHECK(mean[1].to_vector<double>() == std::vector<double>{2.5, 8.0});
  CHECK(mean[1].dtype() == true_division_dtype(dtype));
}

TEST_CASE("all_reduce of a list of tensors reduces each in one collective", "[strategies][all_reduce]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 2);
  MirroredStrategy strategy(*rt, cpu_devices(2));
  auto result = strategy.run([] {
    auto& ctx = get_replica_context();
    const auto id = ctx.replica_id_in_sync_group();
    return ctx.all_reduce(ReduceOp::SUM, std::vector<Tensor>{Tensor(id + 1), Tensor::from_vector<float>({1.5f, 2.0f * id})});
  });
  REQUIRE(result.size() == 2);
  CHECK(result[0][1].item<int32_t>() == 3);
  CHECK(result[1][0].to_vector<float>() == std::vector<float>{3.0f, 2.0f});
}

TEST_CASE("all_gather concatenates along the axis in replica order, also with uneven sizes",
          "[strategies][all_gather]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 3);
  MirroredStrategy strategy(*rt, cpu_devices(3));
  auto result = strategy.run([] {
    auto& ctx = get_replica_context();
    const int id = ctx.replica_id_in_sync_group();
    // Replica r holds r + 1 rows of [r, r].
    std::vector<int32_t> rows(static_cast<size_t>(2 * (id + 1)), id);
    auto value = Tensor::from_vector(rows, {id + 1, 2});
    return std::make_tuple(ctx.all_gather(value, 0), ctx.all_gather(value.reshape({1, id + 1, 2}), -2));
  });
  const auto expected = Tensor::from_vector<int32_t>({0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2}, {6, 2});
  for (const auto& t : strategy.experimental_local_results(std::get<0>(result)))
    CHECK(array_equal(t, expected));
  CHECK(array_equal(std::get<1>(result)[2], expected.reshape({1, 6, 2})));
}

TEST_CASE("reduce_scatter gives each replica its block of the reduction, along any axis, and all_gather "
          "of the blocks is the all_reduce",
          "[strategies][reduce_scatter]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  const int n = 3;
  auto rt = make_runtime(mode, n);
  MirroredStrategy strategy(*rt, cpu_devices(n));
  auto result = strategy.run([] {
    auto& ctx = get_replica_context();
    const int id = ctx.replica_id_in_sync_group();
    // Element i of replica r is 100 r + i: the sums differ everywhere.
    std::vector<float> values(12);
    for (int i = 0; i < 12; ++i)
      values[static_cast<std::size_t>(i)] = static_cast<float>(100 * id + i);
    const Tensor x = Tensor::from_vector(values, {2, 6});
    const Tensor rows = ctx.reduce_scatter(ReduceOp::SUM, x.reshape({6, 2}));
    const Tensor columns = ctx.reduce_scatter(ReduceOp::SUM, x, 1);
    const Tensor mean = ctx.reduce_scatter(ReduceOp::MEAN, x, -1);
    return std::make_tuple(rows, columns, mean, ctx.all_gather(columns, 1), ctx.all_reduce(ReduceOp::SUM, x));
  });
  // The sum of element i is 300 + 3 i; replica r keeps block r.
  auto sum = [](int i) { return static_cast<float>(300 + 3 * i); };
  for (int r = 0; r < n; ++r) {
    INFO("replica " << r);
    const Tensor rows = std::get<0>(result)[r];
    const Tensor columns = std::get<1>(result)[r];
    const Tensor mean = std::get<2>(result)[r];
    // Along axis 0 of (6, 2): rows 2r and 2r + 1, elements 4r .. 4r + 3.
    CHECK(rows.to_vector<float>() == std::vector<float>{sum(4 * r), sum(4 * r + 1), sum(4 * r + 2), sum(4 * r + 3)});
    CHECK(rows.shape() == Shape{2, 2});
    // Along axis 1 of (2, 6): columns 2r and 2r + 1 of both rows.
    CHECK(columns.to_vector<float>()
          == std::vector<float>{sum(2 * r), sum(2 * r + 1), sum(6 + 2 * r), sum(6 + 2 * r + 1)});
    CHECK(columns.shape() == Shape{2, 2});
    CHECK(array_equal(mean, columns / 3.0));
    CHECK(array_equal(std::get<3>(result)[r], std::get<4>(result)[r]));  // the blocks gathered: the all_reduce
  }
  // A middle axis, with elements on both sides of it: (2, 3, 2) blocks of (2, 1, 2).
  auto middle = strategy.run([] {
    auto& ctx = get_replica_context();
    std::vector<float> values(12);
    for (int i = 0; i < 12; ++i)
      values[static_cast<std::size_t>(i)] = static_cast<float>(100 * ctx.replica_id_in_sync_group() + i);
    return ctx.reduce_scatter(ReduceOp::SUM, Tensor::from_vector(values, {2, 3, 2}), 1);
  });
  for (int r = 0; r < n; ++r) {
    INFO("replica " << r);
    CHECK(middle[r].shape() == Shape{2, 1, 2});
    CHECK(middle[r].to_vector<float>() == std::vector<float>{sum(2 * r), sum(2 * r + 1), sum(6 + 2 * r), sum(7 + 2 * r)});
  }
}

TEST_CASE("reduce_scatter of a size that the replicas do not divide is refused, naming the fix",
          "[strategies][reduce_scatter]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  std::string message;
  try {
    (void) strategy.run([] { return get_replica_context().reduce_scatter(ReduceOp::SUM, Tensor::zeros({2, 3}, DType::float32), 1); });
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Matchers::Contains("not a multiple of the 2 replicas; pad it"));
}

TEST_CASE("a replica's reduce_scatter where another all-reduces is a mismatch, not a wrong result",
          "[strategies][reduce_scatter]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  std::string message;
  try {
    (void) strategy.run([] {
      auto& ctx = get_replica_context();
      const Tensor x = Tensor::zeros({4}, DType::float32);
      return ctx.replica_id_in_sync_group() == 0 ? ctx.reduce_scatter(ReduceOp::SUM, x) : ctx.all_reduce(ReduceOp::SUM, x);
    });
  } catch (const std::exception& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Matchers::Contains("reduce_scatter(SUM, axis=0)"));
  CHECK_THAT(message, Catch::Matchers::Contains("mismatched"));
}

TEST_CASE("merge_call runs once in cross-replica context with every replica's arguments",
          "[strategies][merge_call]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 2);
  MirroredStrategy strategy(*rt, cpu_devices(2));
  int calls = 0;
  auto result = strategy.run([&] {
    auto& ctx = get_replica_context();
    auto merged = ctx.merge_call(
      [&](Strategy& s, const PerReplica<Tensor>& values, const PerReplica<int>& ids) {
        ++calls;
        CHECK(in_cross_replica_context());
        CHECK(&get_strategy() == &s);
        CHECK(ids.values() == std::vector<int>{0, 1});
        return s.reduce(ReduceOp::SUM, values);
      },
      Tensor(10.0f * (ctx.replica_id_in_sync_group() + 1)), ctx.replica_id_in_sync_group());
    // Back in replica context after the merge.
    CHECK_FALSE(in_cross_replica_context());
    return merged;
  });
  CHECK(calls == 1);
  CHECK(result[0].item<float>() == 30.0f);
  CHECK(result[1].item<float>() == 30.0f);
}

TEST_CASE("the replica context reports the replica's id, count, devices and strategy", "[strategies][replica_context]") {
  Runtime rt({.logical_cpu_devices = 3});
  MirroredStrategy strategy(rt, {"/cpu:2", "CPU:0"});
  auto result = strategy.run([&] {
    auto& ctx = get_replica_context();
    CHECK(&ctx.strategy() == &strategy);
    CHECK(ctx.num_replicas_in_sync() == 2);
    CHECK(ctx.devices() == std::vector<std::string>{ctx.replica_id_in_sync_group() == 0 ? "/device:CPU:2" : "/device:CPU:0"});
    return ctx.replica_id_in_sync_group();
  });
  CHECK(to_string(result[0]) == "<Tensor: shape=(), dtype=int32, value=0>");
  CHECK(to_string(result[1]) == "<Tensor: shape=(), dtype=int32, value=1>");
}

TEST_CASE("the default replica context outside any strategy has one replica and identity collectives",
          "[strategies][replica_context]") {
  auto& ctx = get_replica_context();
  CHECK(ctx.replica_id_in_sync_group() == 0);
  CHECK(ctx.num_replicas_in_sync() == 1);
  auto x = Tensor::from_vector<float>({1, 2});
  CHECK(array_equal(ctx.all_reduce(ReduceOp::SUM, x), x));
  CHECK(array_equal(ctx.all_gather(x, 0), x));
  CHECK(ctx.merge_call([](Strategy&, const PerReplica<int>& v) { return v[0] * 2; }, 21) == 42);
}

TEST_CASE("an exception in merge_call's function reaches every replica as it was thrown",
          "[strategies][merge_call]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = make_runtime(mode, 2);
  MirroredStrategy strategy(*rt, cpu_devices(2));
  std::atomic<int> seen{0};
  CHECK_THROWS_AS(strategy.run([&] {
    try {
      get_replica_context().merge_call([](Strategy&) -> int { throw std::out_of_range("no such shard"); });
    } catch (const std::out_of_range&) {
      ++seen;
      throw;
    }
  }), std::out_of_range);
  CHECK(seen == 2);
}

TEST_CASE("a replica's collectives called from outside its function are refused", "[strategies][replica_context]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  std::string message;
  strategy.run([&] {
    auto& ctx = get_replica_context();
    ctx.merge_call([&](Strategy&) {
      try {
        (void)ctx.all_reduce(ReduceOp::SUM, Tensor(1));
      } catch (const Error& e) {
        message = e.what();
      }
    });
  });
  CHECK_THAT(message, Catch::Matchers::Contains("all_reduce was called on replica 0's context from outside its function"));
}

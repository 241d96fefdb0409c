#include <catch2/catch.hpp>

#include <support/runtime_modes.hpp>

using namespace troupe;
using Catch::Matchers::Contains;
using troupe::testing::cpu_devices;

TEST_CASE("reduce without an axis combines the replicas elementwise", "[strategies][reduce]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  auto values = strategy.experimental_distribute_values_from_function([](const ValueContext& vc) {
    return Tensor::from_vector<float>({1.0f + vc.replica_id_in_sync_group, 10.0f});
  });
  CHECK(strategy.reduce(ReduceOp::SUM, values).to_vector<float>() == std::vector<float>{3, 20});
  CHECK(strategy.reduce(ReduceOp::MEAN, values).to_vector<float>() == std::vector<float>{1.5f, 10});
  // A non-distributed value is the same on every replica: averaging it is
  // fine, summing it over replicas is refused as in TensorFlow.
  CHECK(strategy.reduce(ReduceOp::MEAN, Tensor(2.0f)).item<float>() == 2.0f);
  CHECK_THROWS_WITH(strategy.reduce(ReduceOp::SUM, Tensor(2.0f)),
                    Contains("cannot be reduced with SUM over 2 replicas"));
  OneDeviceStrategy one(rt, "CPU:0");
  CHECK(one.reduce(ReduceOp::SUM, Tensor(2.0f)).item<float>() == 2.0f);
}

TEST_CASE("reduce MEAN along an axis divides by every replica's examples for uneven batches",
          "[strategies][reduce]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  // Replica 0 holds 3 examples, replica 1 holds 1 (a last, partial batch).
  PerReplica<Tensor> losses({Tensor::from_vector<float>({1, 2, 3}), Tensor::from_vector<float>({6})});
  CHECK(strategy.reduce(ReduceOp::MEAN, losses, 0).item<float>() == 3.0f);  // 12 / 4, not (2 + 6) / 2
  CHECK(strategy.reduce(ReduceOp::SUM, losses, 0).item<float>() == 12.0f);
  PerReplica<Tensor> rows({Tensor::from_vector<int64_t>({1, 2, 3, 4}, {2, 2}), Tensor::from_vector<int64_t>({5, 6}, {1, 2})});
  const auto mean_rows = strategy.reduce(ReduceOp::MEAN, rows, -2);
  CHECK(mean_rows.dtype() == DType::float64); // TensorFlow's truediv of integers
  CHECK(mean_rows.to_vector<double>() == std::vector<double>{3, 4});
}

TEST_CASE("reduce without an axis names the replicas whose shapes differ", "[strategies][reduce]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  PerReplica<Tensor> values({Tensor::from_vector<float>({1, 2}), Tensor::from_vector<float>({3})});
  CHECK_THROWS_WITH(strategy.reduce(ReduceOp::SUM, values),
                    Contains("replica 0 has a float32 tensor of shape (2,) but replica 1 has a float32 tensor of shape (1,)"));
}

TEST_CASE("gather and experimental_local_results return every replica's component", "[strategies][reduce]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  auto values = strategy.experimental_distribute_values_from_function([](const ValueContext& vc) {
    return Tensor::from_vector<int32_t>({vc.replica_id_in_sync_group, 7}, {1, 2});
  });
  CHECK(strategy.gather(values, 0).to_vector<int32_t>() == std::vector<int32_t>{0, 7, 1, 7});
  CHECK(strategy.gather(values, 1).shape() == Shape{1, 4});
  auto local = strategy.experimental_local_results(values);
  REQUIRE(local.size() == 2);
  CHECK(local[1].to_vector<int32_t>() == std::vector<int32_t>{1, 7});
  CHECK(strategy.experimental_local_results(Tensor(1)).size() == 1);
}

TEST_CASE("reduce accumulates small dtypes wide, so MEAN divides the exact sum", "[strategies][reduce]") {
  Runtime rt({.logical_cpu_devices = 2});
  MirroredStrategy strategy(rt, cpu_devices(2));
  PerReplica<Tensor> bytes({Tensor::from_vector<uint8_t>({200, 1}), Tensor::from_vector<uint8_t>({250, 2})});
  // (200 + 250) / 2 = 225 although 450 does not fit in uint8; the mean of
  // integers is TensorFlow's true division, float32 for uint8.
  const auto mean = strategy.reduce(ReduceOp::MEAN, bytes);
  CHECK(mean.dtype() == DType::float32);
  CHECK(mean.to_vector<float>() == std::vector<float>{225, 1.5f});
  // A mean over more than 255 examples of uint8 data along the batch axis.
  PerReplica<Tensor> rows({Tensor::full({300}, 3, DType::uint8), Tensor::full({100}, 7, DType::uint8)});
  CHECK(strategy.reduce(ReduceOp::MEAN, rows, 0).item<float>() == 4.0f); // (900 + 700) / 400
  CHECK(strategy.reduce(ReduceOp::SUM, rows, 0).dtype() == DType::uint8);
}

TEST_CASE("a MEAN of integers over several replicas is a true division in float64 or float32, as in TensorFlow",
          "[strategies][reduce]") {
  TROUPE_FOR_EACH_RUNTIME_MODE(mode);
  auto rt = testing::make_runtime(mode, 2);
  MirroredStrategy strategy(*rt, cpu_devices(2));
  // Replica r passes r + 1: TensorFlow 2.21 averages 1 and 2 to 1.5 (float64).
  auto ones = strategy.experimental_distribute_values_from_function(
    [](const ValueContext& vc) { return Tensor(static_cast<int32_t>(vc.replica_id_in_sync_group + 1)); });
  std::vector<std::vector<Tensor>> results(2);
  std::vector<Tensor> scattered(2);
  strategy.run(
    [&](const Tensor& x) {
      auto& context = get_replica_context();
      const auto r = static_cast<size_t>(context.replica_id_in_sync_group());
      // Integers and floats in one call: each keeps its own rule.
      results[r] = context.all_reduce(ReduceOp::MEAN, std::vector<Tensor>{x, x.cast(DType::int64), x.cast(DType::uint8),
                                                                          x.cast(DType::float32)});
      results[r].push_back(context.all_reduce(ReduceOp::MEAN, x));
      results[r].push_back(context.all_reduce(ReduceOp::SUM, x));
      // A sum that does not fit in uint8 does not wrap: (200 + 250) / 2 = 225.
      results[r].push_back(context.all_reduce(ReduceOp::MEAN, Tensor(static_cast<uint8_t>(r == 0 ? 200 : 250))));
      // Replica 0 passes [1, 3], replica 1 [2, 5]: the means are 1.5 and 4.
      const auto pair = Tensor::from_vector<int32_t>({x.item<int32_t>(), x.item<int32_t>() == 1 ? 3 : 5});
      scattered[r] = context.reduce_scatter(ReduceOp::MEAN, pair);
    },
    ones);
  const std::vector<DType> dtypes{DType::float64, DType::float64, DType::float32, DType::float32, DType::float64,
                                  DType::int32,   DType::float32};
  const std::vector<double> expected{1.5, 1.5, 1.5, 1.5, 1.5, 3.0, 225.0};
  for (size_t r = 0; r < 2; ++r) {
    CAPTURE(r);
    REQUIRE(results[r].size() == dtypes.size());
    for (size_t i = 0; i < dtypes.size(); ++i) {
      CAPTURE(i);
      CHECK(results[r][i].dtype() == dtypes[i]);
      CHECK(results[r][i].item<double>() == expected[i]);
    }
    CHECK(scattered[r].dtype() == DType::float64);
    CHECK(scattered[r].to_vector<double>() == std::vector<double>{r == 0 ? 1.5 : 4.0});
  }
  // strategy.reduce: the same rule; a non-distributed value keeps its dtype.
  const auto mean = strategy.reduce(ReduceOp::MEAN, ones);
  CHECK(mean.dtype() == DType::float64);
  CHECK(mean.item<double>() == 1.5);
  CHECK(strategy.reduce(ReduceOp::MEAN, Tensor(int32_t{2})).dtype() == DType::int32);
  CHECK(strategy.reduce(ReduceOp::SUM, ones).dtype() == DType::int32);
}

TEST_CASE("a MEAN of integers on one replica returns the value as it is, as in TensorFlow", "[strategies][reduce]") {
  Runtime rt({.logical_cpu_devices = 1});
  MirroredStrategy strategy(rt, cpu_devices(1));
  auto seven = strategy.run([](const Tensor& x) { return get_replica_context().all_reduce(ReduceOp::MEAN, x); },
                            Tensor(int32_t{7}));
  CHECK(seven[0].dtype() == DType::int32);
  CHECK(seven[0].item<int32_t>() == 7);
  CHECK(strategy.reduce(ReduceOp::MEAN, seven).dtype() == DType::int32);
  // Along an axis TensorFlow always divides truly.
  CHECK(strategy.reduce(ReduceOp::MEAN, PerReplica<Tensor>({Tensor::from_vector<int32_t>({1, 2})}), 0).item<double>()
        == 1.5);
}

#include <limits>

#include <catch2/catch.hpp>

#include <troupe/collectives/local_all_reduce.hpp>
#include <troupe/ops/tensor_ops.hpp>

using namespace troupe;
using troupe::internal::LocalAllReduce;

namespace {

std::vector<std::vector<Tensor>> inputs(int participants, const std::vector<int64_t>& sizes, DType dtype) {
  std::vector<std::vector<Tensor>> out(static_cast<size_t>(participants));
  for (int p = 0; p < participants; ++p)
    for (size_t t = 0; t < sizes.size(); ++t) {
      std::vector<double> v(static_cast<size_t>(sizes[t]));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<double>((p + 1) * 3 + static_cast<int>(i % 61) + static_cast<int>(t));
      out[static_cast<size_t>(p)].push_back(Tensor::from_vector(v).cast(dtype));
    }
  return out;
}

Tensor sum_of(const std::vector<std::vector<Tensor>>& in, size_t t) {
  Tensor total = in[0][t];
  for (size_t p = 1; p < in.size(); ++p)
    total = total + in[p][t];
  return total;
}

} // namespace

TEST_CASE("a split local all-reduce covers every element of every tensor exactly once",
          "[collectives][local_all_reduce]") {
  const auto parts = GENERATE(1, 2, 3, 4, 8);
  const std::vector<int64_t> sizes = GENERATE(std::vector<int64_t>{1}, std::vector<int64_t>{100'003},
                                              std::vector<int64_t>{17, 70'000, 5, 33'333});
  CAPTURE(parts, sizes);
  auto in = inputs(3, sizes, DType::float32);
  LocalAllReduce plan(ReduceOp::SUM, in, static_cast<size_t>(parts), 4096);
  CHECK(plan.num_parts() >= 1);
  CHECK(plan.num_parts() <= static_cast<size_t>(parts));
  // Parts may run in any order (here: reversed).
  for (size_t p = plan.num_parts(); p-- > 0;)
    plan.run_part(p);
  for (size_t t = 0; t < sizes.size(); ++t)
    CHECK(array_equal(plan.outputs()[t], sum_of(in, t)));
}

TEST_CASE("the local all-reduce kernel handles every numeric dtype, MEAN included",
          "[collectives][local_all_reduce]") {
  const auto dtype = GENERATE(DType::int32, DType::int64, DType::float16, DType::bfloat16,
                              DType::float32, DType::float64, DType::uint8);
  CAPTURE(name(dtype));
  auto in = inputs(4, {5000}, dtype);
  LocalAllReduce sum(ReduceOp::SUM, in, 2, 1024);
  for (size_t p = 0; p < sum.num_parts(); ++p)
    sum.run_part(p);
  CHECK(array_equal(sum.outputs()[0], sum_of(in, 0)));
  LocalAllReduce mean(ReduceOp::MEAN, in, 1, 1024);
  mean.run_part(0);
  auto expected = (sum_of(in, 0).cast(DType::float64) / 4.0);
  if (!is_floating(dtype)) {
    // The exact mean, from the same values in int64 (the uint8 sums reach 270
    // and wrap; the uint8 mean divides the unwrapped sum).
    const auto exact = sum_of(inputs(4, {5000}, DType::int64), 0) / 4;
    CHECK(array_equal(mean.outputs()[0], exact.cast(dtype)));
  } else {
    CHECK(all_close(mean.outputs()[0].cast(DType::float64), expected, 1e-2));
  }
}

TEST_CASE("16-bit floats accumulate in float32 before rounding once", "[collectives][local_all_reduce]") {
  // 2048 + 1 + 1 in float16 steps would round back to 2048 each time; in
  // float32 it is 2050, which float16 represents exactly.
  std::vector<std::vector<Tensor>> in{{Tensor(float16(2048.0f))}, {Tensor(float16(1.0f))}, {Tensor(float16(1.0f))}};
  LocalAllReduce plan(ReduceOp::SUM, in, 1, 1);
  plan.run_part(0);
  CHECK(plan.outputs()[0].item<float>() == 2050.0f);
}

TEST_CASE("integer all-reduce wraps around on overflow, as TensorFlow's kernels", "[collectives][local_all_reduce]") {
  const int32_t max = std::numeric_limits<int32_t>::max();
  std::vector<std::vector<Tensor>> in{{Tensor::from_vector<int32_t>({max, -7})}, {Tensor::from_vector<int32_t>({1, 2})}};
  LocalAllReduce sum(ReduceOp::SUM, in, 1, 1);
  sum.run_part(0);
  CHECK(sum.outputs()[0].to_vector<int32_t>() == std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -5});
  LocalAllReduce mean(ReduceOp::MEAN, in, 1, 1);
  mean.run_part(0);
  // (-7 + 2) / 2 truncates toward zero.
  CHECK(mean.outputs()[0].to_vector<int32_t>()[1] == -2);
}

TEST_CASE("uint8 all-reduce SUM wraps modulo 256 and MEAN divides the exact sum",
          "[collectives][local_all_reduce]") {
  std::vector<std::vector<Tensor>> in{{Tensor::from_vector<uint8_t>({250, 7, 255})},
                                      {Tensor::from_vector<uint8_t>({10, 3, 255})},
                                      {Tensor::from_vector<uint8_t>({0, 2, 255})}};
  LocalAllReduce sum(ReduceOp::SUM, in, 1, 1);
  sum.run_part(0);
  CHECK(sum.outputs()[0].dtype() == DType::uint8);
  CHECK(sum.outputs()[0].to_vector<uint8_t>() == std::vector<uint8_t>{4, 12, 253}); // 260, 12, 765
  LocalAllReduce mean(ReduceOp::MEAN, in, 1, 1);
  mean.run_part(0);
  CHECK(mean.outputs()[0].to_vector<uint8_t>() == std::vector<uint8_t>{86, 4, 255});
}

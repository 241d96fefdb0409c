// divide_elements: the MEAN of an in-place all-reduce across workers divides
// in the caller's memory and must give the bits ops' divide gives (the MEAN
// of all_reduce), for every floating dtype.

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_ops.hpp>

using namespace troupe;
using namespace troupe::internal;

TEST_CASE("divide_elements divides in place to the bits of ops' divide for every floating dtype", "[collectives]") {
  const auto dtype = GENERATE(DType::float16, DType::bfloat16, DType::float32, DType::float64);
  const double divisor = GENERATE(3.0, 6.0, 7.0);
  CAPTURE(name(dtype), divisor);
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i)
    values.push_back(static_cast<double>(i * i % 997) * 0.37 - 100.0);
  const auto input = Tensor::from_vector(values).cast(dtype);
  const auto want = input / divisor;
  auto mine = input.cast(DType::float64).cast(dtype); // a buffer of its own
  divide_elements(dtype, mine.mutable_raw_data(), mine.num_elements(), divisor);
  REQUIRE(std::memcmp(mine.raw_data(), want.raw_data(), want.nbytes()) == 0);
}

TEST_CASE("divide_elements names an integer dtype as an internal error", "[collectives]") {
  auto t = Tensor::zeros(Shape{2}, DType::int32);
  CHECK_THROWS_WITH(divide_elements(DType::int32, t.mutable_raw_data(), 2, 2.0),
                    Catch::Contains("int32 is not a floating dtype"));
}

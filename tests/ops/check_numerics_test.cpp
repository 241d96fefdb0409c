// check_numerics: TensorFlow's texts for NaN, Inf and both, every floating
// dtype, and its refusal of other dtypes.

#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/ops/check_numerics.hpp>
#include <troupe/ops/tensor_ops.hpp>

#include "support/error_code_of.hpp"

using namespace troupe;
using troupe::testing::error_code_of;
using troupe::testing::error_message_of;

TEST_CASE("check_numerics returns a finite tensor and names NaN, Inf or both as TensorFlow does", "[ops]") {
  const auto dtype = GENERATE(DType::float16, DType::bfloat16, DType::float32, DType::float64);
  CAPTURE(name(dtype));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto finite = Tensor::from_vector<double>({1.5, -2, 0, 65504}).cast(dtype);
  CHECK(array_equal(check_numerics(finite, "loss"), finite));
  CHECK(check_numerics(Tensor::zeros({0}, dtype), "empty").num_elements() == 0);
  CHECK(error_message_of([&] { (void) check_numerics(Tensor::from_vector<double>({1, nan, 2}).cast(dtype), "the loss"); })
        == "the loss : Tensor had NaN values");
  CHECK(error_message_of([&] { (void) check_numerics(Tensor::from_vector<double>({-inf, 1}).cast(dtype), "g"); })
        == "g : Tensor had Inf values");
  CHECK(error_message_of([&] { (void) check_numerics(Tensor::from_vector<double>({inf, 1, nan}).cast(dtype), "g"); })
        == "g : Tensor had Inf and NaN values");
  CHECK(error_code_of([&] { (void) check_numerics(Tensor::from_vector<double>({nan}).cast(dtype), "g"); })
        == Errc::invalid_argument);
}

TEST_CASE("check_numerics refuses integer and bool tensors and empty handles, naming the dtype", "[ops]") {
  CHECK_THAT(error_message_of([] { (void) check_numerics(Tensor(int32_t{1}), "count"); }),
             Catch::Matchers::Contains("check_numerics (count): the tensor is a int32 tensor of shape ()")
               && Catch::Matchers::Contains("only floating-point tensors"));
  CHECK(error_code_of([] { (void) check_numerics(Tensor(true), "flag"); }) == Errc::invalid_argument);
  CHECK(error_code_of([] { (void) check_numerics(Tensor{}, "nothing"); }) == Errc::invalid_argument);
}

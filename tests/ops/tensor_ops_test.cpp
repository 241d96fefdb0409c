#include <catch2/catch.hpp>

#include <support/error_code_of.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_ops.hpp>

using namespace troupe;
using troupe::testing::error_code_of;
using Catch::Contains;

namespace {

/// `values` (small integers, exact in every dtype) as a tensor of `dtype`.
Tensor make(const std::vector<double>& values, DType dtype, Shape shape) {
  return Tensor::from_vector(values, std::move(shape)).cast(dtype);
}

Tensor make(const std::vector<double>& values, DType dtype) {
  return make(values, dtype, Shape{static_cast<int64_t>(values.size())});
}

} // namespace

// -- elementwise arithmetic ----------------------------------------------------------

TEST_CASE("arithmetic works elementwise in every numeric dtype", "[core][tensor_ops]") {
  const auto dtype = GENERATE(DType::int32, DType::int64, DType::float16, DType::bfloat16,
                              DType::float32, DType::float64);
  CAPTURE(name(dtype));
  const auto a = make({6, -8, 10, 12}, dtype, Shape{2, 2});
  const auto b = make({2, 4, -5, 3}, dtype, Shape{2, 2});

  const auto sum = add(a, b);
  CHECK(sum.dtype() == dtype);
  CHECK(sum.shape() == Shape{2, 2});
  CHECK(sum.to_vector<double>() == std::vector<double>{8, -4, 5, 15});
  CHECK(subtract(a, b).to_vector<double>() == std::vector<double>{4, -12, 15, 9});
  CHECK(multiply(a, b).to_vector<double>() == std::vector<double>{12, -32, -50, 36});
  CHECK(divide(a, b).to_vector<double>() == std::vector<double>{3, -2, -2, 4});
  CHECK(negate(a).to_vector<double>() == std::vector<double>{-6, 8, -10, -12});
  CHECK((a + b - b).to_vector<double>() == a.to_vector<double>());
  CHECK((-a).to_vector<double>() == negate(a).to_vector<double>());
  // The operands are untouched.
  CHECK(a.to_vector<double>() == std::vector<double>{6, -8, 10, 12});
}

TEST_CASE("a rank-0 operand broadcasts against a tensor of any shape", "[core][tensor_ops]") {
  const auto dtype = GENERATE(DType::int32, DType::int64, DType::float16, DType::bfloat16,
                              DType::float32, DType::float64);
  CAPTURE(name(dtype));
  const auto v = make({2, 4, 8}, dtype);
  const auto two = scalar_like(2, dtype);
  CHECK(add(v, two).to_vector<double>() == std::vector<double>{4, 6, 10});
  CHECK(add(two, v).shape() == Shape{3});
  CHECK(subtract(two, v).to_vector<double>() == std::vector<double>{0, -2, -6});
  CHECK(multiply(v, two).to_vector<double>() == std::vector<double>{4, 8, 16});
  CHECK(divide(v, two).to_vector<double>() == std::vector<double>{1, 2, 4});
  CHECK(divide(scalar_like(16, dtype), v).to_vector<double>() == std::vector<double>{8, 4, 2});
  CHECK(add(two, two).shape() == Shape{});
  CHECK(add(two, two).item<double>() == 4);
}

TEST_CASE("C++ scalars take the tensor's dtype as a Python scalar does in tf.constant(list) * 2",
          "[core][tensor_ops]") {
  const auto v = Tensor::from_vector(std::vector<int32_t>{1, 2});
  const auto doubled = v * 2;
  CHECK(doubled.dtype() == DType::int32);
  CHECK(doubled.to_vector<int32_t>() == std::vector<int32_t>{2, 4});
  CHECK((1 + v).to_vector<int32_t>() == std::vector<int32_t>{2, 3});
  CHECK((10 - v).to_vector<int32_t>() == std::vector<int32_t>{9, 8});
  CHECK((v / 2).to_vector<int32_t>() == std::vector<int32_t>{0, 1});
  const auto f = Tensor::from_vector(std::vector<float>{1, 2});
  CHECK((f * 0.5).to_vector<float>() == std::vector<float>{0.5f, 1.0f});
  CHECK((4.0 / f).to_vector<float>() == std::vector<float>{4.0f, 2.0f});
}

TEST_CASE("integer division truncates toward zero", "[core][tensor_ops]") {
  const auto a = Tensor::from_vector(std::vector<int32_t>{7, -7, 7, -7});
  const auto b = Tensor::from_vector(std::vector<int32_t>{2, 2, -2, -2});
  CHECK(divide(a, b).to_vector<int32_t>() == std::vector<int32_t>{3, -3, -3, 3});
  const auto min = Tensor::from_vector(std::vector<int64_t>{INT64_MIN});
  CHECK(divide(min, Tensor{int64_t{-1}}).item<int64_t>() == INT64_MIN);
}

TEST_CASE("integer arithmetic wraps around on overflow as TensorFlow's kernels do",
          "[core][tensor_ops]") {
  const auto max = Tensor::from_vector(std::vector<int32_t>{INT32_MAX});
  CHECK(add(max, Tensor{int32_t{1}}).item<int32_t>() == INT32_MIN);
  CHECK(negate(Tensor{int32_t{INT32_MIN}}).item<int32_t>() == INT32_MIN);
  CHECK(multiply(Tensor{int64_t{INT64_MAX}}, Tensor{int64_t{2}}).item<int64_t>() == -2);
  const auto sum = reduce_sum(Tensor::from_vector(std::vector<int32_t>{INT32_MAX, 1, 1}));
  CHECK(sum.item<int32_t>() == INT32_MIN + 1);
}

TEST_CASE("uint8 arithmetic wraps modulo 256", "[core][tensor_ops]") {
  const auto a = Tensor::from_vector(std::vector<uint8_t>{200, 10, 255, 7});
  const auto b = Tensor::from_vector(std::vector<uint8_t>{100, 20, 1, 2});
  CHECK(add(a, b).dtype() == DType::uint8);
  CHECK(add(a, b).to_vector<uint8_t>() == std::vector<uint8_t>{44, 30, 0, 9});
  CHECK(subtract(a, b).to_vector<uint8_t>() == std::vector<uint8_t>{100, 246, 254, 5});
  CHECK(multiply(a, b).to_vector<uint8_t>() == std::vector<uint8_t>{32, 200, 255, 14});
  CHECK(divide(a, b).to_vector<uint8_t>() == std::vector<uint8_t>{2, 0, 255, 3});
  CHECK(negate(a).to_vector<uint8_t>() == std::vector<uint8_t>{56, 246, 1, 249});
  // C++ scalars take the uint8 dtype, and must fit it.
  CHECK((a + 56).to_vector<uint8_t>() == std::vector<uint8_t>{0, 66, 55, 63});
  CHECK((0 - b).to_vector<uint8_t>() == std::vector<uint8_t>{156, 236, 255, 254});
  CHECK((a / 2).to_vector<uint8_t>() == std::vector<uint8_t>{100, 5, 127, 3});
  CHECK(divide(scalar_like(255, DType::uint8), b).to_vector<uint8_t>()
        == std::vector<uint8_t>{2, 12, 255, 127});
  CHECK(error_code_of([&] { (void)(a + 256); }) == Errc::invalid_argument);
  CHECK(error_code_of([&] { (void)(a * 0.5); }) == Errc::invalid_argument);
  REQUIRE_THROWS_WITH(divide(a, Tensor{uint8_t{0}}),
                      Contains("division by zero") && Contains("uint8"));
  CHECK(error_code_of([&] { (void)divide(a, Tensor::zeros(Shape{4}, DType::uint8)); })
        == Errc::invalid_argument);
  CHECK(error_code_of([&] { (void)add(a, a.cast(DType::int32)); }) == Errc::dtype_mismatch);
}

TEST_CASE("integer division by zero is an error, float division gives infinity",
          "[core][tensor_ops]") {
  const auto a = Tensor::from_vector(std::vector<int32_t>{1, 2});
  REQUIRE_THROWS_WITH(divide(a, Tensor{int32_t{0}}), Contains("division by zero"));
  CHECK(error_code_of([&] { (void)divide(a, Tensor{int32_t{0}}); }) == Errc::invalid_argument);
  CHECK(std::isinf(divide(Tensor{1.0f}, Tensor{0.0f}).item<float>()));
}

TEST_CASE("mixing dtypes names both operands and says to cast", "[core][tensor_ops]") {
  const auto f = Tensor::from_vector(std::vector<float>{1, 2, 3});
  const auto i = Tensor::from_vector(std::vector<int32_t>{1, 2, 3});
  REQUIRE_THROWS_WITH(add(f, i), "add: cannot combine float32 tensor of shape (3,) with int32 "
                                 "tensor of shape (3,): cast one operand first");
  CHECK(error_code_of([&] { (void)multiply(f, i); }) == Errc::dtype_mismatch);
}

TEST_CASE("mismatched shapes name both operands", "[core][tensor_ops]") {
  const auto a = Tensor::zeros(Shape{3}, DType::float32);
  const auto b = Tensor::zeros(Shape{2, 2}, DType::float32);
  REQUIRE_THROWS_WITH(subtract(a, b),
                      Contains("subtract") && Contains("shape (3,)") && Contains("shape (2, 2)"));
  CHECK(error_code_of([&] { (void)subtract(a, b); }) == Errc::shape_mismatch);
  // A one-element rank-1 tensor is not a scalar.
  CHECK(error_code_of([&] { (void)add(a, Tensor::zeros(Shape{1}, DType::float32)); })
        == Errc::shape_mismatch);
}

TEST_CASE("bool tensors and empty handles are rejected by arithmetic", "[core][tensor_ops]") {
  const auto b = Tensor::from_vector(std::vector<bool>{true, false});
  REQUIRE_THROWS_WITH(add(b, b), Contains("bool") && Contains("cast"));
  CHECK(error_code_of([&] { (void)add(b, b); }) == Errc::not_supported);
  CHECK(error_code_of([&] { (void)negate(b); }) == Errc::not_supported);
  CHECK(error_code_of([&] { (void)add(Tensor{}, Tensor{1.0f}); }) == Errc::invalid_argument);
  REQUIRE_THROWS_WITH(negate(Tensor{}), Contains("empty Tensor"));
}

TEST_CASE("the result lives on the left operand's device", "[core][tensor_ops]") {
  const auto cpu1 = DeviceSpec::local("CPU", 1);
  const auto a = Tensor::from_vector(std::vector<float>{1, 2}).on_device(cpu1);
  const auto b = Tensor::from_vector(std::vector<float>{3, 4});
  CHECK(add(a, b).device() == cpu1);
  CHECK(add(b, a).device() == Tensor::default_device());
  CHECK(negate(a).device() == cpu1);
}

TEST_CASE("scalar_like rejects values the dtype cannot represent", "[core][tensor_ops]") {
  CHECK(scalar_like(2.5, DType::float32).item<float>() == 2.5f);
  CHECK(scalar_like(-3, DType::int32).item<int32_t>() == -3);
  CHECK(scalar_like(1, DType::bool_).item<bool>());
  CHECK(scalar_like(0.1, DType::float16).dtype() == DType::float16);
  REQUIRE_THROWS_WITH(scalar_like(2.5, DType::int32), Contains("2.5") && Contains("int32"));
  CHECK(error_code_of([] { (void)scalar_like(2.5, DType::int32); }) == Errc::invalid_argument);
  CHECK(error_code_of([] { (void)scalar_like(3e9, DType::int32); }) == Errc::invalid_argument);
  CHECK(error_code_of([] { (void)scalar_like(2, DType::bool_); }) == Errc::invalid_argument);
  CHECK(error_code_of([] { (void)scalar_like(1e5, DType::float16); }) == Errc::invalid_argument);
  CHECK(error_code_of([] { (void)scalar_like(1e300, DType::float32); }) == Errc::invalid_argument);
  const auto ints = Tensor::from_vector(std::vector<int32_t>{1, 2});
  CHECK(error_code_of([&] { (void)(ints * 0.5); }) == Errc::invalid_argument);
}

TEST_CASE("scalar_like takes uint8 values 0 to 255 only", "[core][tensor_ops]") {
  CHECK(scalar_like(0, DType::uint8).item<uint8_t>() == 0);
  CHECK(scalar_like(255, DType::uint8).item<uint8_t>() == 255);
  CHECK(scalar_like(255, DType::uint8).dtype() == DType::uint8);
  REQUIRE_THROWS_WITH(scalar_like(256, DType::uint8),
                      "scalar_like: 256 cannot be represented as uint8; cast the tensor to a "
                      "wider or floating dtype first");
  CHECK(error_code_of([] { (void)scalar_like(-1, DType::uint8); }) == Errc::invalid_argument);
  CHECK(error_code_of([] { (void)scalar_like(2.5, DType::uint8); }) == Errc::invalid_argument);
  CHECK(
    error_code_of([] { (void)scalar_like(std::numeric_limits<double>::quiet_NaN(), DType::uint8); })
    == Errc::invalid_argument);
}

// -- concat -------------------------------------------------------------------------

TEST_CASE("concat joins along axis 0 and axis 1", "[core][tensor_ops]") {
  const auto a = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}, Shape{2, 2});
  const auto b = Tensor::from_vector(std::vector<int32_t>{5, 6}, Shape{1, 2});
  const auto rows = concat({a, b}, 0);
  CHECK(rows.shape() == Shape{3, 2});
  CHECK(rows.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 4, 5, 6});

  const auto c = Tensor::from_vector(std::vector<int32_t>{7, 8, 9, 10, 11, 12}, Shape{2, 3});
  const auto cols = concat({a, c}, 1);
  CHECK(cols.shape() == Shape{2, 5});
  CHECK(cols.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 7, 8, 9, 3, 4, 10, 11, 12});
}

TEST_CASE("concat counts negative axes from the end", "[core][tensor_ops]") {
  const auto a = Tensor::from_vector(std::vector<double>{1, 2, 3, 4}, Shape{2, 1, 2});
  const auto b = Tensor::from_vector(std::vector<double>{5, 6}, Shape{2, 1, 1});
  const auto last = concat({a, b}, -1);
  CHECK(last.shape() == Shape{2, 1, 3});
  CHECK(last.to_vector<double>() == std::vector<double>{1, 2, 5, 3, 4, 6});
  const auto first = concat({a, a}, -3);
  CHECK(first.shape() == Shape{4, 1, 2});
  CHECK(first.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4});
}

TEST_CASE("concat handles every dtype, empty inputs and a single input", "[core][tensor_ops]") {
  const auto dtype = GENERATE(DType::bool_, DType::int32, DType::int64, DType::float16,
                              DType::bfloat16, DType::float32, DType::float64, DType::uint8);
  CAPTURE(name(dtype));
  const auto a = make({1, 0, 1}, dtype);
  const auto none = Tensor::zeros(Shape{0}, dtype);
  const auto joined = concat({a, none, a}, 0);
  CHECK(joined.dtype() == dtype);
  CHECK(joined.to_vector<double>() == std::vector<double>{1, 0, 1, 1, 0, 1});
  CHECK(array_equal(concat({a}, 0), a));
}

TEST_CASE("concat names the input that does not fit", "[core][tensor_ops]") {
  const auto a = Tensor::zeros(Shape{2, 2}, DType::float32);
  const auto b = Tensor::zeros(Shape{2, 3}, DType::float32);
  REQUIRE_THROWS_WITH(concat({a, b}, 0), Contains("input 1") && Contains("(2, 3)")
                                           && Contains("(2, 2)") && Contains("axis 0"));
  CHECK(error_code_of([&] { (void)concat({a, b}, 0); }) == Errc::shape_mismatch);
  CHECK(concat({a, b}, 1).shape() == Shape{2, 5});
  const auto ints = Tensor::zeros(Shape{2, 2}, DType::int32);
  REQUIRE_THROWS_WITH(concat({a, a, ints}, 0), Contains("input 2") && Contains("int32"));
  CHECK(error_code_of([&] { (void)concat({a, ints}, 0); }) == Errc::dtype_mismatch);
  CHECK(error_code_of([&] {
          (void)concat({a, Tensor::zeros(Shape{4}, DType::float32)}, 0);
        })
        == Errc::shape_mismatch);
  CHECK(error_code_of([] { (void)concat({}, 0); }) == Errc::invalid_argument);
  CHECK(error_code_of([] {
          (void)concat({Tensor{1.0f}, Tensor{2.0f}}, 0);
        })
        == Errc::invalid_argument);
  CHECK_THROWS_AS(concat({a, a}, 2), Error);
}

// -- reductions ----------------------------------------------------------------------

TEST_CASE("reduce_sum adds all elements or along one axis", "[core][tensor_ops]") {
  const auto dtype = GENERATE(DType::int32, DType::int64, DType::float16, DType::bfloat16,
                              DType::float32, DType::float64, DType::uint8);
  CAPTURE(name(dtype));
  const auto m = make({1, 2, 3, 4, 5, 6}, dtype, Shape{2, 3});
  const auto total = reduce_sum(m);
  CHECK(total.dtype() == dtype);
  CHECK(total.shape() == Shape{});
  CHECK(total.item<double>() == 21);
  const auto columns = reduce_sum(m, 0);
  CHECK(columns.shape() == Shape{3});
  CHECK(columns.to_vector<double>() == std::vector<double>{5, 7, 9});
  const auto rows = reduce_sum(m, 1);
  CHECK(rows.shape() == Shape{2});
  CHECK(rows.to_vector<double>() == std::vector<double>{6, 15});
  CHECK(reduce_sum(m, -1).to_vector<double>() == std::vector<double>{6, 15});
}

TEST_CASE("reduce_sum over a middle axis of a rank-3 tensor", "[core][tensor_ops]") {
  std::vector<double> values(24);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  const auto t = Tensor::from_vector(values, Shape{2, 3, 4});
  const auto s = reduce_sum(t, 1);
  CHECK(s.shape() == Shape{2, 4});
  CHECK(s.to_vector<double>() == std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57});
}

TEST_CASE("reduce_mean averages, truncating for integers", "[core][tensor_ops]") {
  const auto f = Tensor::from_vector(std::vector<float>{1, 2, 3, 5}, Shape{2, 2});
  CHECK(reduce_mean(f).item<float>() == 2.75f);
  CHECK(reduce_mean(f, 0).to_vector<float>() == std::vector<float>{2.0f, 3.5f});
  CHECK(reduce_mean(f, 1).to_vector<float>() == std::vector<float>{1.5f, 4.0f});
  const auto i = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 5}, Shape{2, 2});
  CHECK(reduce_mean(i).item<int32_t>() == 2);
  CHECK(reduce_mean(i, 1).to_vector<int32_t>() == std::vector<int32_t>{1, 4});
  const auto negative = Tensor::from_vector(std::vector<int64_t>{-3, -4});
  CHECK(reduce_mean(negative).item<int64_t>() == -3);
  const auto h = Tensor::from_vector(std::vector<float16>{float16{1.0f}, float16{2.0f}});
  CHECK(reduce_mean(h).item<float>() == 1.5f);
}

TEST_CASE("a uint8 sum keeps the dtype and wraps, a uint8 mean is exact", "[core][tensor_ops]") {
  const auto v = Tensor::from_vector(std::vector<uint8_t>{200, 100, 1});
  CHECK(reduce_sum(v).dtype() == DType::uint8);
  CHECK(reduce_sum(v).item<uint8_t>() == 45); // 301 mod 256
  const auto m =
    Tensor::from_vector(std::vector<uint8_t>{200, 100, 100, 200, 255, 255}, Shape{3, 2});
  CHECK(reduce_sum(m, 0).to_vector<uint8_t>() == std::vector<uint8_t>{43, 43}); // 555 mod 256
  CHECK(reduce_sum(m, 1).to_vector<uint8_t>() == std::vector<uint8_t>{44, 44, 254});
  // The mean divides the exact sum (as TensorFlow, which sums uint8 in uint64), truncating.
  CHECK(reduce_mean(m).dtype() == DType::uint8);
  CHECK(reduce_mean(m).item<uint8_t>() == 185); // 1110 / 6
  CHECK(reduce_mean(m, 0).to_vector<uint8_t>() == std::vector<uint8_t>{185, 185});
  CHECK(reduce_mean(m, 1).to_vector<uint8_t>() == std::vector<uint8_t>{150, 150, 255});
  CHECK(reduce_mean(Tensor::full(Shape{100000}, 255, DType::uint8)).item<uint8_t>() == 255);
  CHECK(reduce_sum(Tensor::zeros(Shape{0}, DType::uint8)).item<uint8_t>() == 0);
  CHECK(error_code_of([] { (void)reduce_mean(Tensor::zeros(Shape{0}, DType::uint8)); })
        == Errc::invalid_argument);
}

TEST_CASE("half-precision sums accumulate in float", "[core][tensor_ops]") {
  // 4096 ones: a float16 accumulator would stop at 2048.
  const auto ones = Tensor::ones(Shape{4096}, DType::float16);
  CHECK(reduce_sum(ones).item<float>() == 4096.0f);
}

TEST_CASE("reductions of empty tensors and their errors", "[core][tensor_ops]") {
  CHECK(reduce_sum(Tensor::zeros(Shape{0}, DType::int32)).item<int32_t>() == 0);
  CHECK(reduce_sum(Tensor::zeros(Shape{0, 3}, DType::float32), 0).to_vector<float>()
        == std::vector<float>{0, 0, 0});
  CHECK(std::isnan(reduce_mean(Tensor::zeros(Shape{0}, DType::float64)).item<double>()));
  CHECK(error_code_of([] { (void)reduce_mean(Tensor::zeros(Shape{0}, DType::int32)); })
        == Errc::invalid_argument);
  const auto b = Tensor::from_vector(std::vector<bool>{true});
  REQUIRE_THROWS_WITH(reduce_sum(b), Contains("bool"));
  CHECK(error_code_of([&] { (void)reduce_mean(b); }) == Errc::not_supported);
  CHECK_THROWS_AS(reduce_sum(Tensor::zeros(Shape{2}, DType::float32), 1), Error);
  CHECK(error_code_of([] { (void)reduce_sum(Tensor{}); }) == Errc::invalid_argument);
}

// -- comparisons ---------------------------------------------------------------------

TEST_CASE("array_equal compares dtype, shape and values", "[core][tensor_ops]") {
  const auto a = Tensor::from_vector(std::vector<float>{1, 2, 3});
  CHECK(array_equal(a, Tensor::from_vector(std::vector<float>{1, 2, 3})));
  CHECK_FALSE(array_equal(a, Tensor::from_vector(std::vector<float>{1, 2, 4})));
  CHECK_FALSE(array_equal(a, a.cast(DType::float64)));
  CHECK_FALSE(array_equal(a, a.reshape(Shape{3, 1})));
  CHECK(array_equal(Tensor{0.0f}, Tensor{-0.0f}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(array_equal(Tensor{nan}, Tensor{nan}));
  CHECK(array_equal(Tensor{}, Tensor{}));
  CHECK_FALSE(array_equal(Tensor{}, a));
  CHECK(array_equal(Tensor{true}, Tensor{true}));
  CHECK(array_equal(Tensor{float16{0.5f}}, Tensor{float16{0.5f}}));
  const auto bytes = Tensor::from_vector(std::vector<uint8_t>{0, 255});
  CHECK(array_equal(bytes, Tensor::from_vector(std::vector<uint8_t>{0, 255})));
  CHECK_FALSE(array_equal(bytes, bytes.cast(DType::int32)));
  CHECK(all_close(bytes, bytes.cast(DType::float32)));
}

TEST_CASE("all_close allows a relative and an absolute tolerance", "[core][tensor_ops]") {
  const auto a = Tensor::from_vector(std::vector<double>{1.0, 100.0});
  CHECK(all_close(a, Tensor::from_vector(std::vector<double>{1.0 + 1e-9, 100.0 + 1e-4})));
  CHECK_FALSE(all_close(a, Tensor::from_vector(std::vector<double>{1.001, 100.0})));
  CHECK(all_close(a, Tensor::from_vector(std::vector<double>{1.001, 100.0}), 1e-2));
  CHECK(all_close(a, a.cast(DType::float32)));
  CHECK_FALSE(all_close(a, a.reshape(Shape{2, 1})));
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(all_close(Tensor{inf}, Tensor{inf}));
  CHECK_FALSE(all_close(Tensor{inf}, Tensor{-inf}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(all_close(Tensor{nan}, Tensor{nan}));
}

#include <catch2/catch.hpp>

#include <support/error_code_of.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/ops/nn_ops.hpp>
#include <troupe/ops/random.hpp>
#include <troupe/ops/tensor_ops.hpp>

using namespace troupe;
using troupe::testing::error_code_of;
using Catch::Contains;

namespace {

Tensor make(const std::vector<double>& values, DType dtype, Shape shape) {
  return Tensor::from_vector(values, std::move(shape)).cast(dtype);
}

/// A row-major [rows, cols] matrix of small integers that differ per element
/// (exact in every dtype, and so are their products' sums here).
std::vector<double> pattern(int64_t rows, int64_t cols, int salt) {
  std::vector<double> values;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      values.push_back(static_cast<double>((r * 7 + c * 3 + salt) % 11 - 5));
  return values;
}

std::vector<double> transposed(const std::vector<double>& m, int64_t rows, int64_t cols) {
  std::vector<double> t(m.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[c * rows + r] = m[r * cols + c];
  return t;
}

std::vector<double> naive_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                 int64_t m, int64_t k, int64_t n) {
  std::vector<double> out(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        out[i * n + j] += a[i * k + p] * b[p * n + j];
  return out;
}

struct MatmulCase {
  const char* name;
  int64_t m, k, n;
};

/// Sum of the per-example losses, in double (for finite differences).
double total_loss(const Tensor& labels, const Tensor& logits) {
  double sum = 0;
  for (double x : sparse_softmax_cross_entropy_with_logits(labels, logits).to_vector<double>())
    sum += x;
  return sum;
}

} // namespace

// -- matmul ------------------------------------------------------------------------------

TEST_CASE("matmul matches a naive triple loop for every shape, transpose and dtype",
          "[core][nn_ops]") {
  const auto shape =
    GENERATE(MatmulCase{"square", 4, 4, 4}, MatmulCase{"wide", 3, 5, 7},
             MatmulCase{"row vector 1xN", 1, 6, 9}, MatmulCase{"column vector Nx1", 9, 6, 1},
             MatmulCase{"outer product", 5, 1, 4}, MatmulCase{"inner product", 1, 8, 1},
             MatmulCase{"beyond Eigen's small-product path", 17, 33, 19});
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::int32, DType::int64,
                              DType::float16, DType::bfloat16);
  const bool transpose_a = GENERATE(false, true);
  const bool transpose_b = GENERATE(false, true);
  CAPTURE(shape.name, name(dtype), transpose_a, transpose_b);
  const int64_t m = shape.m;
  const int64_t k = shape.k;
  const int64_t n = shape.n;
  const auto a = pattern(m, k, 1);
  const auto b = pattern(k, n, 4);
  const Tensor ta =
    transpose_a ? make(transposed(a, m, k), dtype, Shape{k, m}) : make(a, dtype, Shape{m, k});
  const Tensor tb =
    transpose_b ? make(transposed(b, k, n), dtype, Shape{n, k}) : make(b, dtype, Shape{k, n});
  const Tensor product = matmul(ta, tb, transpose_a, transpose_b);
  CHECK(product.dtype() == dtype);
  CHECK(product.shape() == Shape{m, n});
  // Exact sums rounded once to the dtype (bfloat16 holds integers to 256 only).
  CHECK(product.to_vector<double>()
        == make(naive_matmul(a, b, m, k, n), dtype, Shape{m, n}).to_vector<double>());
}

TEST_CASE("matmul of random float32 matrices agrees with a double-precision loop",
          "[core][nn_ops]") {
  RandomGenerator rng{7};
  const int64_t m = 33, k = 70, n = 45;
  const Tensor a = rng.uniform(Shape{m, k}, -1, 1);
  const Tensor b = rng.uniform(Shape{k, n}, -1, 1);
  const auto expected = naive_matmul(a.to_vector<double>(), b.to_vector<double>(), m, k, n);
  CHECK(all_close(matmul(a, b), Tensor::from_vector(expected, Shape{m, n}), 1e-5, 1e-5));
}

TEST_CASE("matmul with an empty inner dimension gives zeros", "[core][nn_ops]") {
  const Tensor a = Tensor::zeros(Shape{2, 0}, DType::float32);
  const Tensor b = Tensor::zeros(Shape{0, 3}, DType::float32);
  const Tensor product = matmul(a, b);
  CHECK(product.shape() == Shape{2, 3});
  CHECK(product.to_vector<double>() == std::vector<double>(6, 0.0));
  CHECK(
    matmul(Tensor::zeros(Shape{0, 4}, DType::float32), Tensor::zeros(Shape{4, 3}, DType::float32))
      .shape()
    == Shape{0, 3});
}

TEST_CASE("matmul names shapes, transposes and the fix when operands do not fit",
          "[core][nn_ops]") {
  const Tensor a = Tensor::ones(Shape{2, 3}, DType::float32);
  const Tensor b = Tensor::ones(Shape{4, 5}, DType::float32);
  REQUIRE_THROWS_WITH(matmul(a, b), Contains("(2, 3)") && Contains("(4, 5)")
                                      && Contains("inner dimensions 3 and 4")
                                      && Contains("transpose_a=false"));
  CHECK(error_code_of([&] { (void)matmul(a, b); }) == Errc::shape_mismatch);
  // Read transposed, a is [3, 2]: still no fit for [4, 5].
  REQUIRE_THROWS_WITH(matmul(a, b, true),
                      Contains("inner dimensions 2 and 4") && Contains("transpose_a=true"));
  CHECK(matmul(a, Tensor::ones(Shape{5, 3}, DType::float32), false, true).shape() == Shape{2, 5});

  const Tensor v = Tensor::ones(Shape{3}, DType::float32);
  REQUIRE_THROWS_WITH(matmul(a, v), Contains("rank 2") && Contains("shape (3,)"));
  CHECK(error_code_of([&] { (void)matmul(a, v); }) == Errc::invalid_argument);
  REQUIRE_THROWS_WITH(matmul(a, Tensor::ones(Shape{3, 2}, DType::float64)),
                      Contains("float32") && Contains("float64") && Contains("cast"));
  CHECK(error_code_of([&] {
          (void)matmul(a, Tensor::ones(Shape{3, 2}, DType::float64));
        })
        == Errc::dtype_mismatch);
  const Tensor bytes = Tensor::ones(Shape{2, 2}, DType::uint8);
  REQUIRE_THROWS_WITH(matmul(bytes, bytes), Contains("uint8") && Contains("cast"));
  CHECK(error_code_of([&] { (void)matmul(bytes, bytes); }) == Errc::not_supported);
  REQUIRE_THROWS_WITH(matmul(Tensor{}, a), Contains("empty Tensor"));
}

TEST_CASE("matmul leaves its operands untouched and lives on a's device", "[core][nn_ops]") {
  const Tensor a = make({1, 2, 3, 4}, DType::float32, Shape{2, 2});
  const Tensor b = make({5, 6, 7, 8}, DType::float32, Shape{2, 2});
  const Tensor product = matmul(a, b);
  CHECK(product.to_vector<double>() == std::vector<double>{19, 22, 43, 50});
  CHECK(a.to_vector<double>() == std::vector<double>{1, 2, 3, 4});
  const auto cpu1 = DeviceSpec::local("CPU", 1);
  CHECK(matmul(a.on_device(cpu1), b).device() == cpu1);
  CHECK(matmul(b, a.on_device(cpu1)).device() == Tensor::default_device());
}

// -- bias_add ----------------------------------------------------------------------------

TEST_CASE("bias_add adds the bias to every row", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::float16, DType::bfloat16,
                              DType::int32, DType::int64, DType::uint8);
  CAPTURE(name(dtype));
  const Tensor x = make({1, 2, 3, 4, 5, 6}, dtype, Shape{2, 3});
  const Tensor bias = make({10, 20, 30}, dtype, Shape{3});
  const Tensor y = bias_add(x, bias);
  CHECK(y.dtype() == dtype);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.to_vector<double>() == std::vector<double>{11, 22, 33, 14, 25, 36});
  // The bias gradient is the upstream gradient summed over the batch.
  CHECK(reduce_sum(y, 0).to_vector<double>() == std::vector<double>{25, 47, 69});
}

TEST_CASE("bias_add broadcasts over every leading axis and wraps integers", "[core][nn_ops]") {
  const Tensor x = make({0, 1, 2, 3, 4, 5, 6, 7}, DType::float32, Shape{2, 2, 2});
  CHECK(bias_add(x, make({100, 200}, DType::float32, Shape{2})).to_vector<double>()
        == std::vector<double>{100, 201, 102, 203, 104, 205, 106, 207});
  const Tensor bytes = make({250, 1}, DType::uint8, Shape{1, 2});
  CHECK(bias_add(bytes, make({10, 10}, DType::uint8, Shape{2})).to_vector<double>()
        == std::vector<double>{4, 11});
}

TEST_CASE("bias_add rejects a bias that does not match the last axis", "[core][nn_ops]") {
  const Tensor x = Tensor::ones(Shape{2, 3}, DType::float32);
  REQUIRE_THROWS_WITH(bias_add(x, Tensor::ones(Shape{4}, DType::float32)),
                      Contains("(4,)") && Contains("(2, 3)") && Contains("shape (3,)"));
  CHECK(error_code_of([&] {
          (void)bias_add(x, Tensor::ones(Shape{1, 3}, DType::float32));
        })
        == Errc::shape_mismatch);
  CHECK(error_code_of([&] { (void)bias_add(x, Tensor::ones(Shape{3}, DType::float64)); })
        == Errc::dtype_mismatch);
  REQUIRE_THROWS_WITH(
    bias_add(Tensor::ones(Shape{3}, DType::float32), Tensor::ones(Shape{3}, DType::float32)),
    Contains("rank 2") && Contains("reshape"));
}

// -- relu --------------------------------------------------------------------------------

TEST_CASE("relu clamps negatives to zero and relu_grad passes where features > 0",
          "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::float16, DType::bfloat16,
                              DType::int32, DType::int64);
  CAPTURE(name(dtype));
  const Tensor x = make({-3, -0.0, 0, 2, 5, -1}, dtype, Shape{2, 3});
  const Tensor y = relu(x);
  CHECK(y.dtype() == dtype);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.to_vector<double>() == std::vector<double>{0, 0, 0, 2, 5, 0});

  const Tensor upstream = make({10, 20, 30, 40, 50, 60}, dtype, Shape{2, 3});
  // TensorFlow's ReluGrad: the gradient at exactly 0 is 0.
  CHECK(relu_grad(upstream, x).to_vector<double>() == std::vector<double>{0, 0, 0, 40, 50, 0});
}

TEST_CASE("relu_grad checks that gradients and features agree", "[core][nn_ops]") {
  const Tensor g = Tensor::ones(Shape{2, 3}, DType::float32);
  REQUIRE_THROWS_WITH(relu_grad(g, Tensor::ones(Shape{3, 2}, DType::float32)),
                      Contains("(2, 3)") && Contains("(3, 2)"));
  CHECK(error_code_of([&] {
          (void)relu_grad(g, Tensor::ones(Shape{2, 3}, DType::float64));
        })
        == Errc::dtype_mismatch);
  CHECK(error_code_of([&] { (void)relu(Tensor::ones(Shape{2}, DType::bool_)); })
        == Errc::not_supported);
}

// -- softmax -----------------------------------------------------------------------------

TEST_CASE("softmax rows sum to one and match the textbook formula", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64);
  CAPTURE(name(dtype));
  const Tensor logits = make({1, 2, 3, -1, 0, 1, 5, 5, 5}, dtype, Shape{3, 3});
  const Tensor p = softmax(logits);
  CHECK(p.dtype() == dtype);
  const auto v = p.to_vector<double>();
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  CHECK(v[0] == Approx(std::exp(1.0) / z));
  CHECK(v[2] == Approx(std::exp(3.0) / z));
  // Softmax is shift-invariant: row 1 is row 0 shifted by -2.
  CHECK(v[3] == Approx(v[0]));
  CHECK(v[6] == Approx(1.0 / 3));
  for (double row : reduce_sum(p, 1).to_vector<double>())
    CHECK(row == Approx(1));
  CHECK(
    all_close(log_softmax(logits),
              make({std::log(v[0]), std::log(v[1]), std::log(v[2]), std::log(v[3]), std::log(v[4]),
                    std::log(v[5]), std::log(v[6]), std::log(v[7]), std::log(v[8])},
                   dtype, Shape{3, 3}),
              1e-6, 1e-6));
}

TEST_CASE("softmax and log_softmax stay finite for logits of 1000", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::float16, DType::bfloat16);
  CAPTURE(name(dtype));
  const Tensor logits = make({1000, 1000, 0, -1000, 999, 1000}, dtype, Shape{2, 3});
  const auto p = softmax(logits).to_vector<double>();
  for (double x : p)
    CHECK(std::isfinite(x));
  CHECK(p[0] == Approx(0.5).epsilon(1e-2));
  CHECK(p[1] == Approx(0.5).epsilon(1e-2));
  CHECK(p[2] == 0);
  CHECK(p[3] == 0);
  // 999 is 1000 in bfloat16: expect the logits as stored.
  const auto x = logits.to_vector<double>();
  CHECK(p[4] == Approx(1 / (1 + std::exp(x[5] - x[4]))).epsilon(1e-2));
  const auto lp = log_softmax(logits).to_vector<double>();
  for (double x : lp)
    CHECK(std::isfinite(x));
  CHECK(lp[0] == Approx(-std::log(2.0)).epsilon(1e-2));
  CHECK(lp[2] == Approx(-1000 - std::log(2.0)).epsilon(1e-2));
}

TEST_CASE("softmax works along the last axis of any rank and rejects integers", "[core][nn_ops]") {
  const Tensor v = make({0, 0, 0, 0}, DType::float32, Shape{4});
  CHECK(softmax(v).to_vector<double>() == std::vector<double>(4, 0.25));
  CHECK(softmax(make({0, 0, 1, 1}, DType::float64, Shape{2, 1, 2})).shape() == Shape{2, 1, 2});
  REQUIRE_THROWS_WITH(softmax(Tensor::ones(Shape{2, 2}, DType::int32)),
                      Contains("int32") && Contains("cast it to float32"));
  CHECK(error_code_of([&] { (void)softmax(Tensor{1.0f}); }) == Errc::invalid_argument);
}

// -- sparse softmax cross-entropy --------------------------------------------------------

TEST_CASE("sparse softmax cross-entropy matches hand-computed losses", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64);
  const auto label_dtype = GENERATE(DType::int32, DType::int64, DType::uint8);
  CAPTURE(name(dtype), name(label_dtype));
  const Tensor logits = make({1, 2, 3, 1, 1, 1}, dtype, Shape{2, 3});
  const Tensor labels = make({2, 0}, label_dtype, Shape{2});
  const Tensor loss = sparse_softmax_cross_entropy_with_logits(labels, logits);
  CHECK(loss.dtype() == dtype);
  CHECK(loss.shape() == Shape{2});
  const auto l = loss.to_vector<double>();
  // -log(e^3 / (e^1 + e^2 + e^3)) and -log(1/3).
  CHECK(l[0] == Approx(0.40760596444438));
  CHECK(l[1] == Approx(1.09861228866811));

  const auto grad =
    sparse_softmax_cross_entropy_with_logits_grad(labels, logits).to_vector<double>();
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  CHECK(grad[0] == Approx(std::exp(1.0) / z));
  CHECK(grad[1] == Approx(std::exp(2.0) / z));
  CHECK(grad[2] == Approx(std::exp(3.0) / z - 1));
  CHECK(grad[3] == Approx(1.0 / 3 - 1));
  CHECK(grad[4] == Approx(1.0 / 3));

  const auto both = sparse_softmax_cross_entropy_with_logits_and_grad(labels, logits);
  CHECK(array_equal(both.loss, loss));
  CHECK(both.backprop.to_vector<double>() == grad);
  // Each gradient row sums to zero (softmax sums to one, minus one one-hot entry).
  for (double row : reduce_sum(both.backprop, 1).to_vector<double>())
    CHECK(row == Approx(0).margin(1e-6));
}

TEST_CASE("the cross-entropy gradient agrees with finite differences", "[core][nn_ops]") {
  RandomGenerator rng{2024};
  const int64_t batch = 5;
  const int64_t classes = 7;
  const Tensor logits = rng.normal(Shape{batch, classes}, 0, 3, DType::float64);
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{0, 6, 3, 3, 1});
  const auto grad =
    sparse_softmax_cross_entropy_with_logits_grad(labels, logits).to_vector<double>();
  const auto base = logits.to_vector<double>();
  const double h = 1e-6;
  for (std::size_t i = 0; i < base.size(); ++i) {
    auto plus = base;
    auto minus = base;
    plus[i] += h;
    minus[i] -= h;
    const double numeric = (total_loss(labels, Tensor::from_vector(plus, Shape{batch, classes}))
                            - total_loss(labels, Tensor::from_vector(minus, Shape{batch, classes})))
                           / (2 * h);
    CAPTURE(i);
    CHECK(grad[i] == Approx(numeric).margin(1e-7));
  }
}

TEST_CASE("sparse softmax cross-entropy is stable for large logits and computes halves in float",
          "[core][nn_ops]") {
  const Tensor labels = Tensor::from_vector(std::vector<int32_t>{1, 0});
  const Tensor logits = make({1000, 0, 0, 1000}, DType::float32, Shape{2, 2});
  const auto l = sparse_softmax_cross_entropy_with_logits(labels, logits).to_vector<double>();
  CHECK(l[0] == Approx(1000));
  CHECK(l[1] == Approx(1000));
  const auto half = sparse_softmax_cross_entropy_with_logits_and_grad(
    labels, make({1, 2, 3, 1}, DType::float16, Shape{2, 2}));
  CHECK(half.loss.dtype() == DType::float16);
  CHECK(half.backprop.dtype() == DType::float16);
  CHECK(half.loss.to_vector<double>()[0] == Approx(std::log(1 + std::exp(-1.0))).epsilon(1e-3));
}

TEST_CASE("a label outside 0..C-1 names the label, its index and C", "[core][nn_ops]") {
  const Tensor logits = Tensor::zeros(Shape{3, 10}, DType::float32);
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{0, 9, 10});
  REQUIRE_THROWS_WITH(sparse_softmax_cross_entropy_with_logits(labels, logits),
                      Contains("label 10") && Contains("index 2") && Contains("[0, 10)")
                        && Contains("10 classes"));
  CHECK(error_code_of([&] { (void)sparse_softmax_cross_entropy_with_logits(labels, logits); })
        == Errc::invalid_argument);
  const Tensor negative = Tensor::from_vector(std::vector<int32_t>{0, -1, 2});
  REQUIRE_THROWS_WITH(sparse_softmax_cross_entropy_with_logits_grad(negative, logits),
                      Contains("label -1") && Contains("index 1"));
  REQUIRE_THROWS_WITH(accuracy_count(labels, logits), Contains("label 10"));
}

TEST_CASE("sparse softmax cross-entropy checks label shape and dtypes", "[core][nn_ops]") {
  const Tensor logits = Tensor::zeros(Shape{3, 10}, DType::float32);
  REQUIRE_THROWS_WITH(
    sparse_softmax_cross_entropy_with_logits(Tensor::zeros(Shape{4}, DType::int32), logits),
    Contains("(4,)") && Contains("(3, 10)") && Contains("here (3,)"));
  CHECK(error_code_of([&] {
          (void)sparse_softmax_cross_entropy_with_logits(Tensor::zeros(Shape{3, 1}, DType::int32),
                                                         logits);
        })
        == Errc::shape_mismatch);
  REQUIRE_THROWS_WITH(
    sparse_softmax_cross_entropy_with_logits(Tensor::zeros(Shape{3}, DType::float32), logits),
    Contains("labels") && Contains("int64"));
  REQUIRE_THROWS_WITH(
    sparse_softmax_cross_entropy_with_logits(Tensor::zeros(Shape{3}, DType::int32),
                                             Tensor::zeros(Shape{3, 10}, DType::int32)),
    Contains("logits") && Contains("float32"));
}

// -- argmax, equal, accuracy ----------------------------------------------------------------

TEST_CASE("argmax finds the first largest element along an axis", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::float16, DType::int32,
                              DType::int64, DType::uint8);
  CAPTURE(name(dtype));
  const Tensor x = make({1, 5, 5, 7, 0, 2}, dtype, Shape{2, 3});
  const Tensor rows = argmax(x, 1);
  CHECK(rows.dtype() == DType::int64);
  CHECK(rows.shape() == Shape{2});
  CHECK(rows.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(argmax(x, -1).to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(argmax(x, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0});
  const Tensor cube = make({0, 9, 3, 4, 8, 1, 2, 2}, dtype, Shape{2, 2, 2});
  CHECK(argmax(cube, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 1});
  CHECK(argmax(cube, 1).shape() == Shape{2, 2});
}

TEST_CASE("argmax rejects scalars, empty axes and bad axes", "[core][nn_ops]") {
  CHECK(error_code_of([&] { (void)argmax(Tensor{1.0f}, 0); }) == Errc::invalid_argument);
  REQUIRE_THROWS_WITH(argmax(Tensor::zeros(Shape{3, 0}, DType::float32), 1),
                      Contains("axis 1") && Contains("empty"));
  CHECK(argmax(Tensor::zeros(Shape{0, 3}, DType::float32), 1).shape() == Shape{0});
  CHECK_THROWS_AS(argmax(Tensor::zeros(Shape{2, 3}, DType::float32), 2), Error);
}

TEST_CASE("equal compares elementwise with scalar broadcasting", "[core][nn_ops]") {
  const Tensor a = Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 2});
  const Tensor b = Tensor::from_vector(std::vector<int64_t>{1, 0, 3, 0});
  const Tensor same = equal(a, b);
  CHECK(same.dtype() == DType::bool_);
  CHECK(same.to_vector<bool>() == std::vector<bool>{true, false, true, false});
  CHECK(equal(a, Tensor{int64_t{2}}).to_vector<bool>()
        == std::vector<bool>{false, true, false, true});
  CHECK(equal(Tensor{0.0}, Tensor{-0.0}).item<bool>());
  CHECK_FALSE(equal(Tensor{std::nan("")}, Tensor{std::nan("")}).item<bool>());
  CHECK(reduce_sum(equal(a, b).cast(DType::int64)).item<int64_t>() == 2);
  CHECK(error_code_of([&] {
          (void)equal(a, Tensor::from_vector(std::vector<int64_t>{1, 2}));
        })
        == Errc::shape_mismatch);
  CHECK(error_code_of([&] { (void)equal(a, a.cast(DType::int32)); }) == Errc::dtype_mismatch);
}

TEST_CASE("accuracy_count counts argmax predictions equal to the labels", "[core][nn_ops]") {
  const Tensor logits = make({0.1, 0.7, 0.2,   // predicts 1
                              0.9, 0.05, 0.05, // predicts 0
                              0.3, 0.3, 0.4,   // predicts 2
                              0.5, 0.5, 0.0},  // tie: predicts 0
                             DType::float32, Shape{4, 3});
  CHECK(accuracy_count(Tensor::from_vector(std::vector<int32_t>{1, 0, 2, 0}), logits) == 4);
  CHECK(accuracy_count(Tensor::from_vector(std::vector<int64_t>{1, 1, 1, 1}), logits) == 1);
  CHECK(accuracy_count(Tensor::from_vector(std::vector<uint8_t>{2, 2, 0, 1}), logits) == 0);
  CHECK(accuracy_count(Tensor::zeros(Shape{0}, DType::int32),
                       Tensor::zeros(Shape{0, 3}, DType::float32))
        == 0);
}

// -- elementwise math --------------------------------------------------------------------

TEST_CASE("square and sqrt work elementwise", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::float16, DType::bfloat16);
  CAPTURE(name(dtype));
  const Tensor x = make({0, 1, 4, 9}, dtype, Shape{2, 2});
  CHECK(sqrt(x).to_vector<double>() == std::vector<double>{0, 1, 2, 3});
  CHECK(square(x).to_vector<double>() == std::vector<double>{0, 1, 16, 81});
  CHECK(sqrt(x).dtype() == dtype);
  CHECK(std::isnan(sqrt(make({-1}, dtype, Shape{1})).item<double>()));
  CHECK(square(make({-3, 2}, DType::int32, Shape{2})).to_vector<double>()
        == std::vector<double>{9, 4});
  CHECK(square(make({16}, DType::uint8, Shape{1})).to_vector<double>() == std::vector<double>{0});
  REQUIRE_THROWS_WITH(sqrt(Tensor::ones(Shape{2}, DType::int32)), Contains("int32"));
}

TEST_CASE("sqrt is the correctly rounded IEEE square root on every CPU", "[core][nn_ops]") {
  // Estimate instructions (rsqrtps, rcpps) differ between CPU vendors and are
  // off by an ulp or more; the kernel must give what the exact sqrtss gives.
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(1e-3f, 1e6f);
  std::vector<float> values(4099); // not a multiple of any vector width: tails too
  for (auto& v : values)
    v = dist(gen);
  values[0] = 4.0f;
  const auto roots = sqrt(Tensor::from_vector(values)).to_vector<float>();
  int64_t inexact = 0;
  for (size_t i = 0; i < values.size(); ++i)
    inexact += roots[i] != std::sqrt(values[i]);
  CHECK(inexact == 0);
  CHECK(roots[0] == 2.0f);
  std::vector<double> doubles(values.begin(), values.end());
  const auto double_roots = sqrt(Tensor::from_vector(doubles)).to_vector<double>();
  for (size_t i = 0; i < doubles.size(); ++i)
    inexact += double_roots[i] != std::sqrt(doubles[i]);
  CHECK(inexact == 0);
}

// -- optimizer updates ---------------------------------------------------------------------

TEST_CASE("axpy_inplace adds alpha * x and copies a shared buffer first", "[core][nn_ops]") {
  Tensor y = make({1, 2, 3}, DType::float32, Shape{3});
  const Tensor alias = y;
  axpy_inplace(y, -0.5, make({2, 4, 6}, DType::float32, Shape{3}));
  CHECK(y.to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(alias.to_vector<double>() == std::vector<double>{1, 2, 3});
  // x aliasing y: y = y + 1 * y.
  axpy_inplace(y, 1.0, y);
  CHECK(y.to_vector<double>() == std::vector<double>{0, 0, 0});
  Tensor z = alias;
  axpy_inplace(z, 1.0, alias);
  CHECK(z.to_vector<double>() == std::vector<double>{2, 4, 6});
  CHECK(alias.to_vector<double>() == std::vector<double>{1, 2, 3});
  REQUIRE_THROWS_WITH(axpy_inplace(y, 1.0, Tensor::ones(Shape{4}, DType::float32)),
                      Contains("(3,)") && Contains("(4,)"));
  Tensor ints = Tensor::ones(Shape{3}, DType::int32);
  CHECK(error_code_of([&] { axpy_inplace(ints, 1.0, ints); }) == Errc::not_supported);
}

TEST_CASE("apply_momentum follows Keras SGD with and without Nesterov", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64, DType::bfloat16);
  const bool nesterov = GENERATE(false, true);
  CAPTURE(name(dtype), nesterov);
  const MomentumOptions options{.learning_rate = 0.5, .momentum = 0.5, .nesterov = nesterov};
  Tensor var = make({1, -2}, dtype, Shape{2});
  Tensor accum = Tensor::zeros(Shape{2}, dtype);
  const Tensor grad = make({1, 2}, dtype, Shape{2});
  std::vector<double> w{1, -2}, a{0, 0};
  const std::vector<double> g{1, 2};
  for (int step = 0; step < 3; ++step) {
    apply_momentum(var, accum, grad, options);
    for (int i = 0; i < 2; ++i) {
      a[i] = 0.5 * a[i] - 0.5 * g[i];
      w[i] += nesterov ? 0.5 * a[i] - 0.5 * g[i] : a[i];
    }
  }
  // Multiples of 1/64: exact in every dtype here.
  CHECK(var.to_vector<double>() == w);
  CHECK(accum.to_vector<double>() == a);
}

TEST_CASE("apply_adam follows the Keras Adam update", "[core][nn_ops]") {
  const auto dtype = GENERATE(DType::float32, DType::float64);
  CAPTURE(name(dtype));
  const AdamOptions options{.learning_rate = 0.01};
  RandomGenerator rng{3};
  Tensor var = rng.uniform(Shape{4, 5}, -1, 1, dtype);
  Tensor m = Tensor::zeros(var.shape(), dtype);
  Tensor v = Tensor::zeros(var.shape(), dtype);
  auto w = var.to_vector<double>();
  std::vector<double> m1(w.size(), 0.0), m2(w.size(), 0.0);
  for (int64_t step = 1; step <= 4; ++step) {
    const Tensor grad = rng.normal(var.shape(), 0, 1, dtype);
    const auto g = grad.to_vector<double>();
    apply_adam(var, m, v, grad, step, options);
    const double lr_t = 0.01 * std::sqrt(1 - std::pow(0.999, step)) / (1 - std::pow(0.9, step));
    for (std::size_t i = 0; i < w.size(); ++i) {
      m1[i] += (g[i] - m1[i]) * 0.1;
      m2[i] += (g[i] * g[i] - m2[i]) * 0.001;
      w[i] -= lr_t * m1[i] / (std::sqrt(m2[i]) + 1e-7);
    }
  }
  const double tol = dtype == DType::float32 ? 1e-5 : 1e-12;
  CHECK(all_close(var, Tensor::from_vector(w, var.shape()), tol, tol));
  CHECK(all_close(m, Tensor::from_vector(m1, var.shape()), tol, tol));
  CHECK(all_close(v, Tensor::from_vector(m2, var.shape()), tol, tol));
  REQUIRE_THROWS_WITH(apply_adam(var, m, v, var, 0, options), Contains("step is 0"));
  REQUIRE_THROWS_WITH(apply_adam(var, m, v, Tensor::ones(Shape{5, 4}, dtype), 1, options),
                      Contains("grad") && Contains("(5, 4)"));
}

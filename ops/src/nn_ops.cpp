// Eigen starts threads only under OpenMP; this keeps its products on the
// calling thread even if a build adds -fopenmp. In troupe the replicas are the
// parallelism, and a kernel that spawned threads would oversubscribe the cores
// they already share. It must precede every Eigen include.
#ifndef EIGEN_DONT_PARALLELIZE
#define EIGEN_DONT_PARALLELIZE
#endif

#include <troupe/ops/nn_ops.hpp>

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <troupe/ops/axis_split.hpp>
#include <troupe/ops/cpu_kernels.hpp>
#include <troupe/ops/eigen_gemm.hpp>
#include <troupe/ops/gpu_ops.hpp>
#include <troupe/ops/eigen_types.hpp>
#include <troupe/core/denormals.hpp>
#include <troupe/ops/tensor_checks.hpp>
#include <troupe/core/errors.hpp>

namespace troupe {

using internal::describe;
using internal::mutable_view;
using internal::require_floating;
using internal::require_numeric;
using internal::require_same_dtype;
using internal::require_same_shape;
using internal::require_valid;
using internal::Vector;
using internal::view;

using internal::compute_t;
using internal::eigen_t;
using internal::visit_floating;

namespace {

// -- element types ----------------------------------------------------------------------

template <class T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// The type comparisons and max() run in: float for the 16-bit floats, T
/// itself otherwise (unlike compute_t, signed integers stay signed).
template <class T>
using value_t = std::conditional_t<is_half_v<T>, float, T>;

template <class T>
value_t<T> value_of(T x) {
  if constexpr (is_half_v<T>)
    return static_cast<float>(x);
  else
    return x;
}


bool is_half(DType dtype) {
  return dtype == DType::float16 || dtype == DType::bfloat16;
}

// -- argument checks ----------------------------------------------------------------------

/// Checks the labels/logits pair of the sparse losses; returns the number of classes.
int64_t check_sparse_labels(const Tensor& labels, const Tensor& logits, const char* op,
                            bool floating_logits) {
  require_valid(labels, op, "labels");
  require_valid(logits, op, "logits");
  if (floating_logits)
    require_floating(logits, op, "logits");
  else
    require_numeric(logits, op, "logits");
  if (labels.dtype() != DType::int32 && labels.dtype() != DType::int64
      && labels.dtype() != DType::uint8)
    fail(Errc::not_supported, std::string{op} + ": labels must be class indices of dtype int32, "
                                + "int64 or uint8, but they are a " + describe(labels)
                                + "; cast them to int64 first");
  if (logits.rank() == 0)
    fail(Errc::invalid_argument, std::string{op} + ": logits must have rank 1 or more ([batch, "
                                   + "classes]), but they are a " + describe(logits));
  std::vector<int64_t> outer = logits.shape().dims();
  outer.pop_back();
  const Shape expected{std::move(outer)};
  if (labels.shape() != expected)
    fail(Errc::shape_mismatch, std::string{op} + ": labels of shape " + labels.shape().to_string()
                                 + " do not fit logits of shape " + logits.shape().to_string()
                                 + "; labels must have the logits' shape without the last "
                                 + "(class) axis, here " + expected.to_string());
  return logits.shape()[logits.rank() - 1];
}

/// Label i as int64, after checking that it is a class index in [0, classes).
template <class L>
int64_t checked_label(const L* labels, int64_t i, int64_t classes, const char* op) {
  const auto label = static_cast<int64_t>(labels[i]);
  if (label < 0 || label >= classes)
    fail(Errc::invalid_argument, std::string{op} + ": label " + std::to_string(label) + " at index "
                                   + std::to_string(i) + " is outside the valid range [0, "
                                   + std::to_string(classes) + ") of the logits' last axis ("
                                   + std::to_string(classes)
                                   + " classes); labels must be class indices, not one-hot rows");
  return label;
}

/// Calls fn(L{}) with the C++ type of a labels dtype checked by check_sparse_labels.
template <class Fn>
decltype(auto) visit_labels(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::int32: return fn(int32_t{});
    case DType::uint8: return fn(uint8_t{});
    default: break;
  }
  return fn(int64_t{});
}

/// Loss (and optionally backprop) for float32/float64 logits.
void cross_entropy(const Tensor& labels, const Tensor& logits, int64_t classes, Tensor& loss,
                   Tensor* backprop, const char* op) {
  const int64_t rows = labels.num_elements();
  std::vector<int64_t> checked(static_cast<std::size_t>(rows));
  visit_labels(labels.dtype(), [&](auto label_tag) {
    using L = decltype(label_tag);
    const L* l = labels.data<L>();
    for (int64_t r = 0; r < rows; ++r)
      checked[static_cast<std::size_t>(r)] = checked_label(l, r, classes, op);
  });
  if (rows == 0 || classes == 0)
    return;
  const auto& kernels = internal::cpu_kernels();
  if (logits.dtype() == DType::float64)
    kernels.cross_entropy_f64(checked.data(), logits.data<double>(), rows, classes,
                              loss.mutable_data<double>(),
                              backprop ? backprop->mutable_data<double>() : nullptr);
  else
    kernels.cross_entropy_f32(checked.data(), logits.data<float>(), rows, classes,
                              loss.mutable_data<float>(),
                              backprop ? backprop->mutable_data<float>() : nullptr);
}

SoftmaxCrossEntropy sparse_cross_entropy(const Tensor& labels, const Tensor& logits, bool with_loss,
                                         bool with_backprop, const char* op) {
  const ScopedFlushDenormals flush_denormals;
  const int64_t classes = check_sparse_labels(labels, logits, op, true);
  if (internal::any_on_gpu(labels, logits))
    return internal::gpu_cross_entropy(labels, logits, classes, with_loss, with_backprop, op);
  if (is_half(logits.dtype())) {
    auto result =
      sparse_cross_entropy(labels, logits.cast(DType::float32), with_loss, with_backprop, op);
    if (with_loss)
      result.loss = result.loss.cast(logits.dtype());
    if (with_backprop)
      result.backprop = result.backprop.cast(logits.dtype());
    return result;
  }
  SoftmaxCrossEntropy result;
  // The loss comes almost free with the backprop; it is always computed.
  result.loss = Tensor::empty(labels.shape(), logits.dtype(), logits.device());
  if (with_backprop)
    result.backprop = Tensor::empty(logits.shape(), logits.dtype(), logits.device());
  cross_entropy(labels, logits, classes, result.loss, with_backprop ? &result.backprop : nullptr,
                op);
  if (!with_loss)
    result.loss = Tensor{};
  return result;
}

Tensor softmax_impl(const Tensor& logits, bool log) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = log ? "log_softmax" : "softmax";
  require_valid(logits, op, "logits");
  require_floating(logits, op, "logits");
  if (logits.rank() == 0)
    fail(Errc::invalid_argument, std::string{op} + ": logits must have rank 1 or more (the last "
                                   + "axis holds the classes), but they are a " + describe(logits)
                                   + "; reshape them to (1,) first");
  if (internal::any_on_gpu(logits))
    return internal::gpu_softmax(logits, log);
  if (is_half(logits.dtype()))
    return softmax_impl(logits.cast(DType::float32), log).cast(logits.dtype());
  const int64_t cols = logits.shape()[logits.rank() - 1];
  const int64_t rows = cols == 0 ? 0 : logits.num_elements() / cols;
  Tensor result = Tensor::empty(logits.shape(), logits.dtype(), logits.device());
  if (rows == 0)
    return result;
  const auto& kernels = internal::cpu_kernels();
  if (logits.dtype() == DType::float64)
    kernels.softmax_f64(logits.data<double>(), result.mutable_data<double>(), rows, cols, log);
  else
    kernels.softmax_f32(logits.data<float>(), result.mutable_data<float>(), rows, cols, log);
  return result;
}

// -- argmax ------------------------------------------------------------------------------------

/// Argmax of `x` viewed as [outer, length, inner] along the middle axis into `out` [outer, inner].
template <class T>
void argmax_kernel(const T* x, int64_t outer, int64_t length, int64_t inner, int64_t* out) {
  std::vector<value_t<T>> best(static_cast<std::size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* block = x + o * length * inner;
    int64_t* index = out + o * inner;
    // Walk the axis in memory order, keeping the best so far for each inner position.
    for (int64_t i = 0; i < inner; ++i) {
      best[i] = value_of(block[i]);
      index[i] = 0;
    }
    for (int64_t l = 1; l < length; ++l) {
      const T* row = block + l * inner;
      for (int64_t i = 0; i < inner; ++i) {
        const auto v = value_of(row[i]);
        if (v > best[i]) {
          best[i] = v;
          index[i] = l;
        }
      }
    }
  }
}

/// Index of the largest of `n` values (ties: the first).
template <class T>
int64_t argmax_row(const T* x, int64_t n) {
  int64_t index = 0;
  auto best = value_of(x[0]);
  for (int64_t i = 1; i < n; ++i) {
    const auto v = value_of(x[i]);
    if (v > best) {
      best = v;
      index = i;
    }
  }
  return index;
}

} // namespace

// -- matrix products ------------------------------------------------------------------

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = "matmul";
  require_valid(a, op, "a");
  require_valid(b, op, "b");
  require_same_dtype(a, "a", b, "b", op);
  if (a.rank() != 2 || b.rank() != 2)
    fail(Errc::invalid_argument, "matmul: both operands must have rank 2, but a is a " + describe(a)
                                   + " and b is a " + describe(b)
                                   + "; reshape vectors to (1, n) or (n, 1) first");
  switch (a.dtype()) {
    case DType::bool_:
    case DType::uint8:
      fail(Errc::not_supported, "matmul: does not multiply " + std::string{name(a.dtype())}
                                  + " tensors (a is a " + describe(a) + "); cast both operands "
                                  + "to int32 or float32 first");
    default: break;
  }
  const int64_t k = transpose_a ? a.shape()[0] : a.shape()[1];
  const int64_t k_b = transpose_b ? b.shape()[1] : b.shape()[0];
  if (k != k_b)
    fail(Errc::shape_mismatch,
         "matmul: cannot multiply a of shape " + a.shape().to_string() + " by b of shape "
           + b.shape().to_string() + " (transpose_a=" + (transpose_a ? "true" : "false")
           + ", transpose_b=" + (transpose_b ? "true" : "false") + "): the inner dimensions "
           + std::to_string(k) + " and " + std::to_string(k_b)
           + " differ; transpose or reshape an operand so that [M, K] x [K, N]");
  const int64_t m = transpose_a ? a.shape()[1] : a.shape()[0];
  const int64_t n = transpose_b ? b.shape()[0] : b.shape()[1];
  if (internal::any_on_gpu(a, b))
    return internal::gpu_matmul(a, b, transpose_a, transpose_b, m, n, k);
  if (is_half(a.dtype()))
    return matmul(a.cast(DType::float32), b.cast(DType::float32), transpose_a, transpose_b)
      .cast(a.dtype());
  Tensor result = Tensor::empty(Shape{m, n}, a.dtype(), a.device());
  if (m == 0 || n == 0)
    return result;
  if (k == 0) {
    std::memset(result.mutable_raw_data(), 0, result.nbytes());
    return result;
  }
  const internal::GemmArgs args{a.raw_data(), b.raw_data(), result.mutable_raw_data(),
                                a.shape()[0], a.shape()[1], b.shape()[0], b.shape()[1],
                                transpose_a, transpose_b, m, n, k};
  switch (a.dtype()) {
    case DType::float32: internal::cpu_kernels().gemm_f32(args); break;
    case DType::float64: internal::cpu_kernels().gemm_f64(args); break;
    // Integers multiply as their unsigned counterparts (same bits, defined
    // wrap-around), as TensorFlow's integer kernels wrap.
    case DType::int32: internal::eigen_gemm<uint32_t>(args); break;
    default: internal::eigen_gemm<uint64_t>(args); break;
  }
  return result;
}

Tensor bias_add(const Tensor& value, const Tensor& bias) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = "bias_add";
  require_valid(value, op, "value");
  require_valid(bias, op, "bias");
  require_same_dtype(value, "value", bias, "bias", op);
  require_numeric(value, op, "value");
  if (value.rank() < 2)
    fail(Errc::invalid_argument, "bias_add: value must have rank 2 or more ([batch, ..., "
                                 "channels]), but it is a "
                                   + describe(value) + "; reshape it to (1, n) first");
  const int64_t cols = value.shape()[value.rank() - 1];
  if (bias.rank() != 1 || bias.shape()[0] != cols)
    fail(Errc::shape_mismatch, "bias_add: bias of shape " + bias.shape().to_string()
                                 + " does not fit value of shape " + value.shape().to_string()
                                 + "; bias must be a vector of the last dimension, shape ("
                                 + std::to_string(cols) + ",)");
  if (internal::any_on_gpu(value, bias))
    return internal::gpu_bias_add(value, bias);
  Tensor result = Tensor::empty(value.shape(), value.dtype(), value.device());
  const int64_t rows = cols == 0 ? 0 : value.num_elements() / cols;
  if (result.num_elements() == 0)
    return result;
  if (value.dtype() == DType::float32) {
    internal::cpu_kernels().bias_add_f32(value.data<float>(), bias.data<float>(),
                                         result.mutable_data<float>(), rows, cols);
    return result;
  }
  visit_dtype(value.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using E = eigen_t<T>;
      using C = compute_t<T>;
      using Rows = Eigen::Array<E, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const Eigen::Map<const Rows> x{reinterpret_cast<const E*>(value.raw_data()), rows, cols};
      const Eigen::Map<const Eigen::Array<E, 1, Eigen::Dynamic>> b{
        reinterpret_cast<const E*>(bias.raw_data()), cols};
      Eigen::Map<Rows> out{reinterpret_cast<E*>(result.mutable_raw_data()), rows, cols};
      out = (x.template cast<C>().rowwise() + b.template cast<C>()).template cast<E>();
    }
  });
  return result;
}

// -- activations ------------------------------------------------------------------------

Tensor relu(const Tensor& features) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = "relu";
  require_valid(features, op, "features");
  require_numeric(features, op, "features");
  if (internal::any_on_gpu(features))
    return internal::gpu_unary(internal::GpuUnaryOp::relu, features, op);
  Tensor result = Tensor::empty(features.shape(), features.dtype(), features.device());
  if (features.dtype() == DType::float32) {
    internal::cpu_kernels().relu_f32(features.data<float>(), result.mutable_data<float>(),
                                     features.num_elements());
    return result;
  }
  visit_dtype(features.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using V = value_t<T>;
      mutable_view<T>(result) =
        view<T>(features).template cast<V>().max(V{0}).template cast<eigen_t<T>>();
    }
  });
  return result;
}

Tensor relu_grad(const Tensor& gradients, const Tensor& features) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = "relu_grad";
  require_valid(gradients, op, "gradients");
  require_valid(features, op, "features");
  require_same_dtype(gradients, "gradients", features, "features", op);
  require_same_shape(gradients, "gradients", features, "features", op);
  require_numeric(features, op, "features");
  if (internal::any_on_gpu(gradients, features))
    return internal::gpu_relu_grad(gradients, features);
  Tensor result = Tensor::empty(features.shape(), features.dtype(), gradients.device());
  if (features.dtype() == DType::float32) {
    internal::cpu_kernels().relu_grad_f32(gradients.data<float>(), features.data<float>(),
                                          result.mutable_data<float>(), features.num_elements());
    return result;
  }
  visit_dtype(features.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using V = value_t<T>;
      // TensorFlow's formula, gradients * (features > 0): branch-free, so
      // random signs cost no mispredictions.
      const auto g = view<T>(gradients);
      const auto f = view<T>(features);
      mutable_view<T>(result) =
        (g.template cast<V>() * (f.template cast<V>() > V{0}).template cast<V>())
          .template cast<eigen_t<T>>();
    }
  });
  return result;
}

Tensor softmax(const Tensor& logits) {
  return softmax_impl(logits, false);
}

Tensor log_softmax(const Tensor& logits) {
  return softmax_impl(logits, true);
}

// -- losses -------------------------------------------------------------------------------

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits) {
  return sparse_cross_entropy(labels, logits, true, false,
                              "sparse_softmax_cross_entropy_with_logits")
    .loss;
}

Tensor sparse_softmax_cross_entropy_with_logits_grad(const Tensor& labels, const Tensor& logits) {
  return sparse_cross_entropy(labels, logits, false, true,
                              "sparse_softmax_cross_entropy_with_logits_grad")
    .backprop;
}

SoftmaxCrossEntropy sparse_softmax_cross_entropy_with_logits_and_grad(const Tensor& labels,
                                                                      const Tensor& logits) {
  return sparse_cross_entropy(labels, logits, true, true,
                              "sparse_softmax_cross_entropy_with_logits_and_grad");
}

// -- comparisons and metrics -------------------------------------------------------------

Tensor argmax(const Tensor& input, int axis) {
  const ScopedFlushDenormals flush_denormals;
  require_valid(input, "argmax", "input");
  if (input.rank() == 0)
    fail(Errc::invalid_argument, "argmax: input must have rank 1 or more, but it is a "
                                   + describe(input) + "; reshape it to (1,) first");
  const auto [outer, length, inner, shape] = internal::split_at_axis(input.shape(), axis);
  if (length == 0 && shape.num_elements() > 0)
    fail(Errc::invalid_argument, "argmax: axis " + std::to_string(axis) + " of the "
                                   + describe(input) + " is empty, so it has no largest element");
  Tensor result = Tensor::empty(shape, DType::int64, input.device());
  if (shape.num_elements() == 0)
    return result;
  visit_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    argmax_kernel(reinterpret_cast<const T*>(input.raw_data()), outer, length, inner,
                  result.mutable_data<int64_t>());
  });
  return result;
}

Tensor equal(const Tensor& a, const Tensor& b) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = "equal";
  require_valid(a, op, "a");
  require_valid(b, op, "b");
  require_same_dtype(a, "a", b, "b", op);
  if (a.shape() != b.shape() && a.rank() != 0 && b.rank() != 0)
    fail(Errc::shape_mismatch, "equal: cannot compare a of shape " + a.shape().to_string()
                                 + " with b of shape " + b.shape().to_string()
                                 + "; shapes must be equal or one operand must be a scalar");
  const Shape& shape = a.rank() == 0 ? b.shape() : a.shape();
  Tensor result = Tensor::empty(shape, DType::bool_, a.device());
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto* x = reinterpret_cast<const T*>(a.raw_data());
    const auto* y = reinterpret_cast<const T*>(b.raw_data());
    const int64_t x_step = a.rank() == 0 ? 0 : 1;
    const int64_t y_step = b.rank() == 0 ? 0 : 1;
    bool* out = result.mutable_data<bool>();
    for (int64_t i = 0; i < result.num_elements(); ++i)
      out[i] = value_of(x[i * x_step]) == value_of(y[i * y_step]);
  });
  return result;
}

int64_t accuracy_count(const Tensor& labels, const Tensor& logits) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = "accuracy_count";
  const int64_t classes = check_sparse_labels(labels, logits, op, false);
  if (internal::any_on_gpu(labels, logits))
    return internal::gpu_accuracy_count(labels, logits, classes);
  const int64_t rows = labels.num_elements();
  int64_t correct = 0;
  visit_labels(labels.dtype(), [&](auto label_tag) {
    using L = decltype(label_tag);
    const L* l = labels.data<L>();
    visit_dtype(logits.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const auto* x = reinterpret_cast<const T*>(logits.raw_data());
      for (int64_t r = 0; r < rows; ++r) {
        // The label first: it also proves that the row is not empty.
        const int64_t label = checked_label(l, r, classes, op);
        correct += label == argmax_row(x + r * classes, classes);
      }
    });
  });
  return correct;
}

// -- elementwise math ---------------------------------------------------------------------

Tensor square(const Tensor& x) {
  const ScopedFlushDenormals flush_denormals;
  require_valid(x, "square", "x");
  require_numeric(x, "square", "x");
  if (internal::any_on_gpu(x))
    return internal::gpu_unary(internal::GpuUnaryOp::square, x, "square");
  Tensor result = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = compute_t<T>;
      mutable_view<T>(result) = view<T>(x).template cast<C>().square().template cast<eigen_t<T>>();
    }
  });
  return result;
}

Tensor sqrt(const Tensor& x) {
  const ScopedFlushDenormals flush_denormals;
  require_valid(x, "sqrt", "x");
  require_floating(x, "sqrt", "x");
  if (internal::any_on_gpu(x))
    return internal::gpu_unary(internal::GpuUnaryOp::sqrt, x, "sqrt");
  Tensor result = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_floating(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    mutable_view<T>(result) = view<T>(x).template cast<C>().sqrt().template cast<eigen_t<T>>();
  });
  return result;
}

} // namespace troupe

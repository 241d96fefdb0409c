#include <troupe/ops/tensor_ops.hpp>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <Eigen/Core>

#include <troupe/ops/axis_split.hpp>
#include <troupe/ops/eigen_types.hpp>
#include <troupe/core/denormals.hpp>
#include <troupe/ops/tensor_checks.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/ops/gpu_ops.hpp>

namespace troupe {

using internal::describe;
using internal::mutable_view;
using internal::require_numeric;
using internal::require_valid;
using internal::Vector;
using internal::view;

using internal::compute_t;
using internal::eigen_t;

namespace {



// -- argument checks ------------------------------------------------------------------



/// The result shape of an elementwise op on `a` and `b`, after checking that they combine.
Shape check_binary(const Tensor& a, const Tensor& b, const char* op) {
  require_valid(a, op);
  require_valid(b, op);
  if (a.dtype() != b.dtype())
    fail(Errc::dtype_mismatch, std::string{op} + ": cannot combine " + describe(a) + " with "
                                 + describe(b) + ": cast one operand first");
  if (a.shape() != b.shape() && a.rank() != 0 && b.rank() != 0)
    fail(Errc::shape_mismatch, std::string{op} + ": cannot combine " + describe(a) + " with "
                                 + describe(b)
                                 + ": shapes must be equal or one operand must be a scalar "
                                   "(reshape or slice one operand first)");
  require_numeric(a, op, "an operand");
  return a.rank() == 0 ? b.shape() : a.shape();
}

// -- elementwise ops -------------------------------------------------------------------

/// `fn(x, y)` over Eigen expressions in compute_t<T>, with a rank-0 operand
/// broadcast as a constant. Not for integer division, whose unsigned form differs.
template <class Fn>
Tensor binary(const Tensor& a, const Tensor& b, const char* op, internal::GpuBinaryOp gpu_op, Fn fn) {
  const ScopedFlushDenormals flush_denormals;
  const Shape shape = check_binary(a, b, op);
  if (internal::any_on_gpu(a, b))
    return internal::gpu_binary(gpu_op, a, b, shape, op);
  Tensor result = Tensor::empty(shape, a.dtype(), a.device());
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = compute_t<T>;
      auto out = mutable_view<T>(result);
      auto apply = [&](const auto& x, const auto& y) {
        out = fn(x.template cast<C>(), y.template cast<C>()).template cast<eigen_t<T>>();
      };
      const auto n = result.num_elements();
      if (a.shape() == b.shape())
        apply(view<T>(a), view<T>(b));
      else if (a.rank() == 0)
        apply(Vector<T>::Constant(n, view<T>(a)[0]), view<T>(b));
      else
        apply(view<T>(a), Vector<T>::Constant(n, view<T>(b)[0]));
    }
  });
  return result;
}

/// Integer division truncating toward zero, with the cases C++ leaves undefined handled.
template <class T>
Tensor integer_divide(const Tensor& a, const Tensor& b, const Shape& shape) {
  Tensor result = Tensor::empty(shape, a.dtype(), a.device());
  T* out = result.mutable_data<T>();
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  const bool x_scalar = a.rank() == 0;
  const bool y_scalar = b.rank() == 0;
  for (int64_t i = 0; i < result.num_elements(); ++i) {
    const T lhs = x[x_scalar ? 0 : i];
    const T rhs = y[y_scalar ? 0 : i];
    if (rhs == 0)
      fail(Errc::invalid_argument,
           "divide: integer division by zero (" + describe(a) + " / " + describe(b) + ")");
    if constexpr (std::is_signed_v<T>) {
      // min / -1 overflows; two's complement wraps it to min, as TensorFlow's kernel does.
      out[i] = rhs == -1 ? static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(lhs))
                         : static_cast<T>(lhs / rhs);
    } else {
      out[i] = static_cast<T>(lhs / rhs);
    }
  }
  return result;
}

// -- scalar_like ---------------------------------------------------------------------

std::string number_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string{buffer, result.ptr};
}

/// Whether `value` survives the conversion to `dtype` (exactly for integers
/// and bool; for floats, without overflowing to infinity).
bool representable(double value, DType dtype) {
  switch (dtype) {
    case DType::bool_: return value == 0 || value == 1;
    case DType::int32:
      return std::trunc(value) == value && value >= -2147483648.0 && value <= 2147483647.0;
    case DType::int64:
      // 2^63 itself is out of range; every double below it is exact.
      return std::trunc(value) == value && value >= -9223372036854775808.0
             && value < 9223372036854775808.0;
    case DType::uint8: return std::trunc(value) == value && value >= 0 && value <= 255;
    case DType::float16:
      return !std::isfinite(value)
             || std::isfinite(static_cast<float>(float16{static_cast<float>(value)}));
    case DType::bfloat16:
      return !std::isfinite(value)
             || std::isfinite(static_cast<float>(bfloat16{static_cast<float>(value)}));
    case DType::float32: return !std::isfinite(value) || std::isfinite(static_cast<float>(value));
    case DType::float64: break;
  }
  return true;
}

// -- reductions ----------------------------------------------------------------------

/// Sums `x` viewed as [outer, length, inner] over the middle axis into `out`
/// ([outer, inner]), accumulating in compute_t<T>; divides by `length` when
/// `mean` is set.
template <class T>
void reduce_middle(const Tensor& x, int64_t outer, int64_t length, int64_t inner, bool mean,
                   Tensor& out) {
  using E = eigen_t<T>;
  using C = compute_t<T>;
  using Rows = Eigen::Array<E, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Row = Eigen::Array<E, 1, Eigen::Dynamic>;
  const auto* in = reinterpret_cast<const E*>(x.raw_data());
  auto* dst = reinterpret_cast<E*>(out.mutable_raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    const Eigen::Map<const Rows> block{in + o * length * inner, length, inner};
    Eigen::Map<Row> result{dst + o * inner, inner};
    if (length == 0) {
      // An empty sum is 0 and an empty float mean NaN (integer ones were rejected earlier).
      if constexpr (std::is_integral_v<T>)
        result.setZero();
      else
        result.setConstant(static_cast<E>(mean ? std::numeric_limits<float>::quiet_NaN() : 0.0f));
    } else if constexpr (std::is_unsigned_v<T>) {
      // uint8: sum exactly in 64 bits and divide before narrowing, so a mean
      // is exact (TensorFlow's mean kernel widens uint8 to uint64 for the same
      // reason); a plain sum then wraps modulo 256 as it narrows to the dtype.
      Eigen::Array<uint64_t, 1, Eigen::Dynamic> sum =
        block.template cast<uint64_t>().colwise().sum();
      if (mean)
        sum /= static_cast<uint64_t>(length);
      result = sum.template cast<E>();
    } else if constexpr (std::is_integral_v<T>) {
      result = block.template cast<C>().colwise().sum().template cast<E>();
      // Divide the signed sum: integer means truncate toward zero, as tf.reduce_mean does.
      if (mean)
        result /= static_cast<E>(length);
    } else {
      Eigen::Array<C, 1, Eigen::Dynamic> sum = block.template cast<C>().colwise().sum();
      if (mean)
        sum /= static_cast<C>(length);
      result = sum.template cast<E>();
    }
  }
}

Tensor reduce(const Tensor& x, std::optional<int> axis, bool mean) {
  const ScopedFlushDenormals flush_denormals;
  const char* op = mean ? "reduce_mean" : "reduce_sum";
  require_valid(x, op);
  if (x.dtype() == DType::bool_)
    fail(Errc::not_supported, std::string{op} + ": bool tensors cannot be "
                                + (mean ? "averaged" : "summed") + " (" + describe(x)
                                + "); cast to int32 first");
  int64_t outer = 1;
  int64_t length = x.num_elements();
  int64_t inner = 1;
  Shape shape;
  if (axis) {
    auto split = internal::split_at_axis(x.shape(), *axis);
    outer = split.outer;
    length = split.length;
    inner = split.inner;
    shape = std::move(split.kept);
  }
  if (mean && length == 0 && !is_floating(x.dtype()))
    fail(Errc::invalid_argument,
         "reduce_mean: cannot average zero elements of an " + describe(x)
           + (axis ? " along axis " + std::to_string(*axis) : std::string{}));
  if (internal::any_on_gpu(x))
    return internal::gpu_reduce_sum(x, outer, length, inner, shape,
                                    mean ? 1.0f / static_cast<float>(length) : 1.0f, op);
  Tensor result = Tensor::empty(shape, x.dtype(), x.device());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      reduce_middle<T>(x, outer, length, inner, mean, result);
  });
  return result;
}

} // namespace

// -- arithmetic ----------------------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) {
  return binary(a, b, "add", internal::GpuBinaryOp::add, [](const auto& x, const auto& y) { return x + y; });
}

Tensor subtract(const Tensor& a, const Tensor& b) {
  return binary(a, b, "subtract", internal::GpuBinaryOp::subtract, [](const auto& x, const auto& y) { return x - y; });
}

Tensor multiply(const Tensor& a, const Tensor& b) {
  return binary(a, b, "multiply", internal::GpuBinaryOp::multiply, [](const auto& x, const auto& y) { return x * y; });
}

Tensor divide(const Tensor& a, const Tensor& b) {
  const Shape shape = check_binary(a, b, "divide");
  if (internal::any_on_gpu(a, b))
    return internal::gpu_binary(internal::GpuBinaryOp::divide, a, b, shape, "divide");
  switch (a.dtype()) {
    case DType::int32: return integer_divide<int32_t>(a, b, shape);
    case DType::int64: return integer_divide<int64_t>(a, b, shape);
    case DType::uint8: return integer_divide<uint8_t>(a, b, shape);
    default: return binary(a, b, "divide", internal::GpuBinaryOp::divide, [](const auto& x, const auto& y) { return x / y; });
  }
}

Tensor negate(const Tensor& a) {
  const ScopedFlushDenormals flush_denormals;
  require_valid(a, "negate");
  require_numeric(a, "negate", "its operand");
  if (internal::any_on_gpu(a))
    return internal::gpu_unary(internal::GpuUnaryOp::negate, a, "negate");
  Tensor result = Tensor::empty(a.shape(), a.dtype(), a.device());
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = compute_t<T>;
      mutable_view<T>(result) = (-view<T>(a).template cast<C>()).template cast<eigen_t<T>>();
    }
  });
  return result;
}

Tensor scalar_like(double value, DType dtype) {
  if (!representable(value, dtype))
    fail(Errc::invalid_argument, "scalar_like: " + number_text(value) + " cannot be represented as "
                                   + std::string{name(dtype)}
                                   + "; cast the tensor to a wider or floating dtype first");
  return Tensor::full(Shape{}, value, dtype);
}

// -- concat --------------------------------------------------------------------------

Tensor concat(const std::vector<Tensor>& values, int axis) {
  if (values.empty())
    fail(Errc::invalid_argument, "concat: needs at least one tensor");
  for (const auto& v : values)
    require_valid(v, "concat");
  const Tensor& first = values.front();
  if (first.rank() == 0)
    fail(Errc::invalid_argument,
         "concat: cannot concatenate scalars (input 0 has shape ()); reshape them to rank 1 first");
  const int a = first.shape().normalize_axis(axis);
  int64_t total = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Tensor& v = values[i];
    if (v.dtype() != first.dtype())
      fail(Errc::dtype_mismatch, "concat: input " + std::to_string(i) + " is a " + describe(v)
                                   + " but input 0 is a " + describe(first) + "; cast it to "
                                   + std::string{name(first.dtype())} + " first");
    if (v.rank() != first.rank() || v.shape().with_dim(a, first.shape()[a]) != first.shape())
      fail(Errc::shape_mismatch, "concat: input " + std::to_string(i) + " has shape "
                                   + v.shape().to_string() + " but input 0 has shape "
                                   + first.shape().to_string() + "; all dimensions except axis "
                                   + std::to_string(a) + " must agree");
    total += v.shape()[a];
  }
  if (values.size() == 1)
    return first;

  // Row-major: each input contributes one contiguous chunk per index of the axes before `a`.
  int64_t outer = 1;
  for (int i = 0; i < a; ++i)
    outer *= first.shape()[i];
  Tensor result = Tensor::empty(first.shape().with_dim(a, total), first.dtype(), first.device());
  std::byte* out = result.mutable_raw_data();
  std::vector<std::size_t> chunk(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    chunk[i] = outer == 0 ? 0 : values[i].nbytes() / static_cast<std::size_t>(outer);
  for (int64_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (chunk[i] == 0)
        continue;
      std::memcpy(out, values[i].raw_data() + static_cast<std::size_t>(o) * chunk[i], chunk[i]);
      out += chunk[i];
    }
  }
  return result;
}

// -- reductions ----------------------------------------------------------------------

Tensor reduce_sum(const Tensor& x, std::optional<int> axis) {
  return reduce(x, axis, false);
}

Tensor reduce_mean(const Tensor& x, std::optional<int> axis) {
  return reduce(x, axis, true);
}

// -- comparisons ---------------------------------------------------------------------

bool array_equal(const Tensor& a, const Tensor& b) {
  if (!a.valid() || !b.valid())
    return a.valid() == b.valid();
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  return visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto* x = reinterpret_cast<const T*>(a.raw_data());
    const auto* y = reinterpret_cast<const T*>(b.raw_data());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      // Compare values, not bits: -0 == +0 and NaN != NaN.
      if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        if (static_cast<float>(x[i]) != static_cast<float>(y[i]))
          return false;
      } else if (x[i] != y[i]) {
        return false;
      }
    }
    return true;
  });
}

bool all_close(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (!a.valid() || !b.valid())
    return a.valid() == b.valid();
  if (a.shape() != b.shape())
    return false;
  // Doubles hold every element exactly, except int64 beyond 2^53 (close enough here).
  const std::vector<double> x = a.to_vector<double>();
  const std::vector<double> y = b.to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    // Infinities are close only to themselves; NaN is close to nothing
    // (numpy's equal_nan=False).
    if (x[i] == y[i])
      continue;
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])
        || !(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i])))
      return false;
  }
  return true;
}

} // namespace troupe

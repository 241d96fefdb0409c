#include <troupe/ops/check_numerics.hpp>

#include <cmath>
#include <type_traits>

#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_checks.hpp>

namespace troupe {

namespace {

struct NonFinite {
  bool nan = false;
  bool inf = false;
};

template <class T>
NonFinite scan(const Tensor& host) {
  // float16 and bfloat16 widen to float exactly, NaN and Inf included.
  using Wide = std::conditional_t<std::is_same_v<T, double>, double, float>;
  NonFinite found;
  const T* values = host.data<T>();
  for (int64_t i = 0, n = host.num_elements(); i < n && !(found.nan && found.inf); ++i) {
    const auto v = static_cast<Wide>(values[i]);
    found.nan = found.nan || std::isnan(v);
    found.inf = found.inf || std::isinf(v);
  }
  return found;
}

} // namespace

Tensor check_numerics(const Tensor& x, const std::string& message) {
  internal::require_valid(x, "check_numerics", "the tensor to check");
  if (!is_floating(x.dtype()))
    fail(Errc::invalid_argument, "check_numerics (" + message + "): the tensor is a " + internal::describe(x)
                                   + "; only floating-point tensors (float16, bfloat16, float32, float64) can "
                                     "hold NaN or Inf: check them, or cast first");
  const Tensor host = x.on_host() ? x : x.to("CPU:0");
  NonFinite found;
  switch (x.dtype()) {
    case DType::float16: found = scan<float16>(host); break;
    case DType::bfloat16: found = scan<bfloat16>(host); break;
    case DType::float32: found = scan<float>(host); break;
    default: found = scan<double>(host); break;
  }
  if (found.nan || found.inf)
    fail(Errc::invalid_argument, message + " : Tensor had "
                                   + (found.nan && found.inf ? "Inf and NaN" : found.inf ? "Inf" : "NaN")
                                   + " values");
  return x;
}

} // namespace troupe

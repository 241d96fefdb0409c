#include <troupe/ops/tensor_checks.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

std::string describe(const Tensor& t) {
  return std::string{name(t.dtype())} + " tensor of shape " + t.shape().to_string();
}

void require_valid(const Tensor& t, const char* op, const char* what) {
  if (!t.valid())
    fail(Errc::invalid_argument, std::string{op} + ": " + what
                                   + " is an empty Tensor handle (default-constructed); create it with a "
                                     "constructor or factory first");
}

void require_floating(const Tensor& t, const char* op, const char* what) {
  if (!is_floating(t.dtype()))
    fail(Errc::not_supported, std::string{op} + ": " + what + " must be float16, bfloat16, "
                                + "float32 or float64, but it is a " + describe(t)
                                + "; cast it to float32 first");
}

void require_numeric(const Tensor& t, const char* op, const char* what) {
  if (t.dtype() == DType::bool_)
    fail(Errc::not_supported, std::string{op} + ": " + what + " cannot be a bool tensor ("
                                + describe(t) + "); cast it to int32 or float32 first");
}

void require_same_dtype(const Tensor& a, const char* what_a, const Tensor& b, const char* what_b,
                        const char* op) {
  if (a.dtype() != b.dtype())
    fail(Errc::dtype_mismatch, std::string{op} + ": " + what_a + " is a " + describe(a) + " but "
                                 + what_b + " is a " + describe(b) + "; cast " + what_b + " to "
                                 + std::string{name(a.dtype())} + " first");
}

void require_same_shape(const Tensor& a, const char* what_a, const Tensor& b, const char* what_b,
                        const char* op) {
  if (a.shape() != b.shape())
    fail(Errc::shape_mismatch, std::string{op} + ": " + what_a + " has shape "
                                 + a.shape().to_string() + " but " + what_b + " has shape "
                                 + b.shape().to_string() + "; they must have the same shape");
}

void require_same_device(const Tensor& written, const char* written_name, const Tensor& other,
                         const char* other_name, const char* op) {
  if (written.device() != other.device())
    fail(Errc::invalid_argument, std::string{op} + ": " + written_name + " is on " + written.device().short_name()
                                   + " but " + other_name + " is on " + other.device().short_name()
                                   + "; the tensors an update writes must live on one device (create them "
                                     "there, or copy with .to())");
}

} // namespace troupe::internal

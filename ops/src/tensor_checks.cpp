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

} // namespace troupe::internal

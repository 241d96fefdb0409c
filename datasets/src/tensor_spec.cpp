#include <troupe/datasets/tensor_spec.hpp>

#include <ostream>

#include <troupe/core/tensor.hpp>

namespace troupe {

TensorSpec TensorSpec::of(const Tensor& tensor) {
  return TensorSpec{tensor.shape(), tensor.dtype()};
}

bool TensorSpec::is_compatible_with(const Tensor& tensor) const {
  if (!tensor.valid() || tensor.dtype() != dtype || tensor.rank() != shape.rank())
    return false;
  for (int axis = 0; axis < shape.rank(); ++axis)
    if (shape[axis] >= 0 && shape[axis] != tensor.shape()[axis])
      return false;
  return true;
}

std::string TensorSpec::to_string() const {
  // TensorFlow's TensorShape repr: "(None, 784)", "(3,)", "()".
  std::string dims = "(";
  for (int axis = 0; axis < shape.rank(); ++axis) {
    if (axis > 0)
      dims += ", ";
    dims += shape[axis] < 0 ? std::string("None") : std::to_string(shape[axis]);
  }
  dims += shape.rank() == 1 ? ",)" : ")";
  return "TensorSpec(shape=" + dims + ", dtype=" + std::string(name(dtype)) + ")";
}

std::string ElementSpec::to_string() const {
  if (!tuple)
    return components.empty() ? std::string("()") : components.front().to_string();
  std::string result = "(";
  for (std::size_t i = 0; i < components.size(); ++i)
    result += (i == 0 ? "" : ", ") + components[i].to_string();
  result += components.size() == 1 ? ",)" : ")";
  return result;
}

std::ostream& operator<<(std::ostream& out, const TensorSpec& spec) {
  return out << spec.to_string();
}

std::ostream& operator<<(std::ostream& out, const ElementSpec& spec) {
  return out << spec.to_string();
}

} // namespace troupe

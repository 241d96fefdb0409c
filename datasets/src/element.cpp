#include <troupe/datasets/element.hpp>

#include <ostream>
#include <string>

#include <troupe/core/errors.hpp>
#include <troupe/ops/tensor_ops.hpp>

namespace troupe {

Element::Element(Tensor tensor) {
  components_.push_back(std::move(tensor));
}

Element Element::tuple(std::vector<Tensor> components) {
  if (components.empty())
    fail(Errc::invalid_argument,
         "Element::tuple: a tuple element needs at least one component tensor");
  Element result;
  result.components_ = std::move(components);
  result.tuple_ = true;
  return result;
}

const Tensor& Element::operator[](std::size_t i) const {
  if (i >= components_.size())
    fail(Errc::out_of_range,
         "element index " + std::to_string(i) + " is out of range: this element has "
           + std::to_string(components_.size()) + " tensor" + (components_.size() == 1 ? "" : "s"));
  return components_[i];
}

const Tensor& Element::tensor() const {
  if (tuple_)
    fail(Errc::invalid_argument, "this element is a tuple of " + std::to_string(components_.size())
                                   + " tensors; index it (element[0]) instead of using it as "
                                     "one tensor");
  if (components_.empty())
    fail(Errc::invalid_argument, "this element is empty (default-constructed); it holds no tensor");
  return components_.front();
}

bool operator==(const Element& a, const Element& b) {
  if (a.tuple_ != b.tuple_ || a.components_.size() != b.components_.size())
    return false;
  for (std::size_t i = 0; i < a.components_.size(); ++i)
    if (!array_equal(a.components_[i], b.components_[i]))
      return false;
  return true;
}

std::ostream& operator<<(std::ostream& out, const Element& element) {
  if (!element.valid())
    return out << "<Element: empty>";
  if (!element.is_tuple())
    return out << element.components().front();
  out << '(';
  const auto& components = element.components();
  for (std::size_t i = 0; i < components.size(); ++i)
    out << (i == 0 ? "" : ", ") << components[i];
  // Python writes a one-element tuple as `(x,)`.
  return out << (components.size() == 1 ? ",)" : ")");
}

} // namespace troupe

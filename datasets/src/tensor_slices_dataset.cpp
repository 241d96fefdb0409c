#include <troupe/datasets/tensor_slices_dataset.hpp>

#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/pipeline_util.hpp>

namespace troupe::internal {

namespace {

/// `shape` without its first dimension.
Shape row_shape(const Shape& shape) {
  return Shape(std::vector<int64_t>(shape.dims().begin() + 1, shape.dims().end()));
}

class TensorSlicesIterator : public detail::ElementIterator {
public:
  TensorSlicesIterator(const Element& element, int64_t rows) : element_(element), rows_(rows) {
    row_shapes_.reserve(element.size());
    for (const auto& component : element.components())
      row_shapes_.push_back(row_shape(component.shape()));
  }

  std::optional<Element> next() override {
    if (row_ >= rows_)
      return std::nullopt;
    std::vector<Tensor> slices;
    slices.reserve(element_.size());
    for (std::size_t i = 0; i < element_.size(); ++i)
      slices.push_back(element_[i].slice(row_, row_ + 1).reshape(row_shapes_[i]));
    ++row_;
    if (element_.is_tuple())
      return Element::tuple(std::move(slices));
    return Element(std::move(slices.front()));
  }

private:
  Element element_;
  std::vector<Shape> row_shapes_;
  int64_t rows_;
  int64_t row_ = 0;
};

} // namespace

TensorSlicesDataset::TensorSlicesDataset(Element element) : element_(std::move(element)) {
  if (!element_.valid())
    fail(Errc::invalid_argument,
         "from_tensor_slices: the element is empty (default-constructed); pass a Tensor or "
         "Element::tuple(...)");
  for (std::size_t i = 0; i < element_.size(); ++i) {
    const Tensor& component = element_[i];
    const std::string which = element_.is_tuple() ? "component " + std::to_string(i) : "the tensor";
    if (!component.valid())
      fail(Errc::invalid_argument,
           "from_tensor_slices: " + which + " is an empty Tensor handle (default-constructed)");
    if (component.rank() == 0)
      fail(Errc::invalid_argument,
           "from_tensor_slices: " + which
             + " is a scalar (shape ()), which has no axis 0 to slice; use from_tensors for a "
               "single element, or reshape it to rank 1");
    if (i > 0 && component.shape()[0] != rows_)
      fail(Errc::shape_mismatch,
           "from_tensor_slices: every component needs the same size of axis 0, but component 0 "
           "has shape "
             + element_[0].shape().to_string() + " (" + std::to_string(rows_)
             + " rows) and component " + std::to_string(i) + " has shape "
             + component.shape().to_string() + " (" + std::to_string(component.shape()[0])
             + " rows); pass one row per element in every component");
    if (i == 0)
      rows_ = component.shape()[0];
  }
}

std::unique_ptr<detail::ElementIterator> TensorSlicesDataset::iterator() const {
  return std::make_unique<TensorSlicesIterator>(element_, rows_);
}

ElementSpec TensorSlicesDataset::element_spec() const {
  ElementSpec spec = spec_of(element_);
  for (auto& component : spec.components)
    component.shape = row_shape(component.shape);
  return spec;
}

std::string TensorSlicesDataset::describe() const {
  return "from_tensor_slices(" + spec_of(element_).to_string() + ")";
}

std::shared_ptr<const detail::DatasetNode>
TensorSlicesDataset::with_input(std::shared_ptr<const detail::DatasetNode>) const {
  return std::make_shared<TensorSlicesDataset>(*this);
}

} // namespace troupe::internal

#include <troupe/datasets/tensor_dataset.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/pipeline_util.hpp>

namespace troupe::internal {

namespace {

class TensorIterator : public detail::ElementIterator {
public:
  explicit TensorIterator(const Element& element) : element_(element) {}

  std::optional<Element> next() override {
    if (!element_)
      return std::nullopt;
    auto result = std::move(element_);
    element_.reset();
    return result;
  }

private:
  std::optional<Element> element_;
};

} // namespace

TensorDataset::TensorDataset(Element element) : element_(std::move(element)) {
  if (!element_.valid())
    fail(Errc::invalid_argument,
         "from_tensors: the element is empty (default-constructed); pass a Tensor or "
         "Element::tuple(...)");
  for (std::size_t i = 0; i < element_.size(); ++i)
    if (!element_[i].valid())
      fail(Errc::invalid_argument, "from_tensors: component " + std::to_string(i)
                                     + " is an empty Tensor handle (default-constructed)");
}

std::unique_ptr<detail::ElementIterator> TensorDataset::iterator() const {
  return std::make_unique<TensorIterator>(element_);
}

ElementSpec TensorDataset::element_spec() const {
  return spec_of(element_);
}

std::string TensorDataset::describe() const {
  return "from_tensors(" + element_spec().to_string() + ")";
}

std::shared_ptr<const detail::DatasetNode>
TensorDataset::with_input(std::shared_ptr<const detail::DatasetNode>) const {
  return std::make_shared<TensorDataset>(*this);
}

} // namespace troupe::internal

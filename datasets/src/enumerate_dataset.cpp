#include <troupe/datasets/enumerate_dataset.hpp>

#include <vector>

#include <troupe/core/tensor.hpp>

namespace troupe::internal {

namespace {

class EnumerateIterator : public detail::ElementIterator {
public:
  EnumerateIterator(std::unique_ptr<detail::ElementIterator> input, int64_t start)
    : input_(std::move(input)), index_(start) {}

  std::optional<Element> next() override {
    auto element = input_->next();
    if (!element)
      return std::nullopt;
    std::vector<Tensor> components;
    components.reserve(element->size() + 1);
    components.emplace_back(index_++);
    for (const auto& component : element->components())
      components.push_back(component);
    return Element::tuple(std::move(components));
  }

private:
  std::unique_ptr<detail::ElementIterator> input_;
  int64_t index_;
};

} // namespace

EnumerateDataset::EnumerateDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t start)
  : UnaryDataset(std::move(input), "enumerate"), start_(start) {}

std::unique_ptr<detail::ElementIterator> EnumerateDataset::iterator() const {
  return std::make_unique<EnumerateIterator>(input_->iterator(), start_);
}

ElementSpec EnumerateDataset::element_spec() const {
  const ElementSpec input = input_->element_spec();
  ElementSpec spec;
  spec.tuple = true;
  spec.components.reserve(input.components.size() + 1);
  spec.components.push_back(TensorSpec{Shape{}, DType::int64});
  spec.components.insert(spec.components.end(), input.components.begin(), input.components.end());
  return spec;
}

std::string EnumerateDataset::describe() const {
  return "enumerate(start=" + std::to_string(start_) + ")";
}

std::shared_ptr<const detail::DatasetNode>
EnumerateDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<EnumerateDataset>(std::move(input), start_);
}

} // namespace troupe::internal

#include <troupe/datasets/batch_dataset.hpp>

#include <cstring>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

namespace {

/// Checks that component `c` of every element matches the first element's.
void check_component(std::span<const Element> elements, std::size_t c) {
  const Tensor& first = elements[0][c];
  for (std::size_t i = 1; i < elements.size(); ++i) {
    const Tensor& other = elements[i][c];
    if (other.dtype() != first.dtype())
      fail(Errc::dtype_mismatch,
           "batch: cannot batch tensors with different dtypes in component " + std::to_string(c)
             + ". The first element had dtype " + std::string(name(first.dtype())) + " and element "
             + std::to_string(i) + " had dtype " + std::string(name(other.dtype()))
             + "; cast them to one dtype with map() before batch()");
    if (other.shape() != first.shape())
      fail(Errc::shape_mismatch,
           "batch: cannot batch tensors with different shapes in component " + std::to_string(c)
             + ". The first element had shape " + first.shape().to_string() + " and element "
             + std::to_string(i) + " had shape " + other.shape().to_string()
             + "; pad or slice the elements to one shape with map() before batch()");
  }
}

class BatchIterator : public detail::ElementIterator {
public:
  BatchIterator(std::unique_ptr<detail::ElementIterator> input, int64_t batch_size,
                bool drop_remainder)
    : input_(std::move(input)), batch_size_(static_cast<std::size_t>(batch_size)),
      drop_remainder_(drop_remainder) {}

  std::optional<Element> next() override {
    if (done_)
      return std::nullopt;
    pending_.clear();
    while (pending_.size() < batch_size_) {
      auto element = input_->next();
      if (!element) {
        done_ = true;
        break;
      }
      pending_.push_back(std::move(*element));
    }
    if (pending_.empty() || (drop_remainder_ && pending_.size() < batch_size_)) {
      pending_.clear();
      return std::nullopt;
    }
    Element batch = stack_elements(pending_);
    // Release the inputs now rather than on the next call.
    pending_.clear();
    return batch;
  }

private:
  std::unique_ptr<detail::ElementIterator> input_;
  std::size_t batch_size_;
  bool drop_remainder_;
  bool done_ = false;
  std::vector<Element> pending_;
};

} // namespace

Element stack_elements(std::span<const Element> elements) {
  if (elements.empty())
    fail(Errc::internal, "batch: stack_elements called with no elements");
  const Element& first = elements[0];
  for (std::size_t i = 1; i < elements.size(); ++i)
    if (elements[i].is_tuple() != first.is_tuple() || elements[i].size() != first.size())
      fail(Errc::invalid_argument,
           "batch: cannot batch elements with different structures. The first element was "
             + describe_structure(first) + " and element " + std::to_string(i) + " was "
             + describe_structure(elements[i])
             + "; every element of a dataset must have the same structure");

  const auto count = static_cast<int64_t>(elements.size());
  std::vector<Tensor> stacked;
  stacked.reserve(first.size());
  for (std::size_t c = 0; c < first.size(); ++c) {
    check_component(elements, c);
    const Tensor& head = first[c];
    std::vector<int64_t> dims;
    dims.reserve(static_cast<std::size_t>(head.rank()) + 1);
    dims.push_back(count);
    dims.insert(dims.end(), head.shape().dims().begin(), head.shape().dims().end());
    Tensor out = Tensor::empty(Shape(std::move(dims)), head.dtype(), head.device());
    const std::size_t row_bytes = head.nbytes();
    if (row_bytes > 0) {
      std::byte* dst = out.mutable_raw_data();
      for (const auto& element : elements) {
        std::memcpy(dst, element[c].raw_data(), row_bytes);
        dst += row_bytes;
      }
    }
    stacked.push_back(std::move(out));
  }
  if (first.is_tuple())
    return Element::tuple(std::move(stacked));
  return Element(std::move(stacked.front()));
}

BatchDataset::BatchDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t batch_size,
                           bool drop_remainder)
  : UnaryDataset(std::move(input), "batch"), batch_size_(batch_size),
    drop_remainder_(drop_remainder) {
  if (batch_size <= 0)
    fail(Errc::invalid_argument,
         "batch: batch_size must be positive, got " + std::to_string(batch_size));
}

std::unique_ptr<detail::ElementIterator> BatchDataset::iterator() const {
  return std::make_unique<BatchIterator>(input_->iterator(), batch_size_, drop_remainder_);
}

ElementSpec BatchDataset::element_spec() const {
  ElementSpec spec = input_->element_spec();
  for (auto& component : spec.components) {
    std::vector<int64_t> dims;
    dims.reserve(component.shape.dims().size() + 1);
    // Without drop_remainder the last batch may be smaller: the size is unknown (None).
    dims.push_back(drop_remainder_ ? batch_size_ : -1);
    dims.insert(dims.end(), component.shape.dims().begin(), component.shape.dims().end());
    component.shape = Shape(std::move(dims));
  }
  return spec;
}

std::string BatchDataset::describe() const {
  return "batch(" + std::to_string(batch_size_)
         + ", drop_remainder=" + (drop_remainder_ ? "true" : "false") + ")";
}

std::shared_ptr<const detail::DatasetNode>
BatchDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<BatchDataset>(std::move(input), batch_size_, drop_remainder_);
}

} // namespace troupe::internal

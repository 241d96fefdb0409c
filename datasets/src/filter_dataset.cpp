#include <troupe/datasets/filter_dataset.hpp>

#include <troupe/core/denormals.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

class FilterIterator : public detail::ElementIterator {
public:
  FilterIterator(std::unique_ptr<detail::ElementIterator> input,
                 std::shared_ptr<FilterDataset::Predicate> predicate)
    : input_(std::move(input)), predicate_(std::move(predicate)) {}

  std::optional<Element> next() override {
    while (auto element = input_->next()) {
      // Dataset functions compute as kernels do, on whatever thread pulls the element.
      const ScopedFlushDenormals flush_denormals;
      if ((*predicate_)(*element))
        return element;
    }
    return std::nullopt;
  }

private:
  std::unique_ptr<detail::ElementIterator> input_;
  std::shared_ptr<FilterDataset::Predicate> predicate_;
};

} // namespace

FilterDataset::FilterDataset(std::shared_ptr<const detail::DatasetNode> input, Predicate predicate)
  : FilterDataset(std::move(input), std::make_shared<Predicate>(std::move(predicate))) {}

FilterDataset::FilterDataset(std::shared_ptr<const detail::DatasetNode> input,
                             std::shared_ptr<Predicate> predicate)
  : UnaryDataset(std::move(input), "filter"), predicate_(std::move(predicate)) {
  if (!predicate_ || !*predicate_)
    fail(Errc::invalid_argument, "filter: the predicate is empty; pass a callable");
}

std::unique_ptr<detail::ElementIterator> FilterDataset::iterator() const {
  return std::make_unique<FilterIterator>(input_->iterator(), predicate_);
}

std::shared_ptr<const detail::DatasetNode>
FilterDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<FilterDataset>(std::move(input), predicate_);
}

} // namespace troupe::internal

#include <troupe/datasets/filter_dataset.hpp>

#include <troupe/core/denormals.hpp>

namespace troupe::internal {

FilterDataset::FilterDataset(std::shared_ptr<const detail::DatasetNode> input, Predicate predicate)
  : FilterDataset(std::move(input), std::make_shared<Predicate>(std::move(predicate))) {}

FilterDataset::FilterDataset(std::shared_ptr<const detail::DatasetNode> input,
                             std::shared_ptr<Predicate> predicate)
  : FunctionDataset(std::move(input), std::move(predicate), "filter", "predicate") {}

std::optional<Element> FilterDataset::next_element(detail::ElementIterator& input,
                                                   const Predicate& predicate) {
  while (auto element = input.next()) {
    // Dataset functions compute as kernels do, on whatever thread pulls the element.
    const ScopedFlushDenormals flush_denormals;
    if (predicate(*element))
      return element;
  }
  return std::nullopt;
}

} // namespace troupe::internal

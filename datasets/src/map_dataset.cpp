#include <troupe/datasets/map_dataset.hpp>

#include <troupe/core/denormals.hpp>

namespace troupe::internal {

MapDataset::MapDataset(std::shared_ptr<const detail::DatasetNode> input, Function fn)
  : MapDataset(std::move(input), std::make_shared<Function>(std::move(fn))) {}

MapDataset::MapDataset(std::shared_ptr<const detail::DatasetNode> input,
                       std::shared_ptr<Function> fn)
  : FunctionDataset(std::move(input), std::move(fn), "map", "function") {}

std::optional<Element> MapDataset::next_element(detail::ElementIterator& input,
                                                const Function& fn) {
  auto element = input.next();
  if (!element)
    return std::nullopt;
  // Dataset functions compute as kernels do, on whatever thread pulls the element.
  const ScopedFlushDenormals flush_denormals;
  return fn(*element);
}

} // namespace troupe::internal

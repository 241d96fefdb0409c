#include <troupe/datasets/map_dataset.hpp>

#include <troupe/core/denormals.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

class MapIterator : public detail::ElementIterator {
public:
  MapIterator(std::unique_ptr<detail::ElementIterator> input,
              std::shared_ptr<MapDataset::Function> fn)
    : input_(std::move(input)), fn_(std::move(fn)) {}

  std::optional<Element> next() override {
    auto element = input_->next();
    if (!element)
      return std::nullopt;
    // Dataset functions compute as kernels do, on whatever thread pulls the element.
    const ScopedFlushDenormals flush_denormals;
    return (*fn_)(*element);
  }

private:
  std::unique_ptr<detail::ElementIterator> input_;
  std::shared_ptr<MapDataset::Function> fn_;
};

} // namespace

MapDataset::MapDataset(std::shared_ptr<const detail::DatasetNode> input, Function fn)
  : MapDataset(std::move(input), std::make_shared<Function>(std::move(fn))) {}

MapDataset::MapDataset(std::shared_ptr<const detail::DatasetNode> input,
                       std::shared_ptr<Function> fn)
  : UnaryDataset(std::move(input), "map"), fn_(std::move(fn)) {
  if (!fn_ || !*fn_)
    fail(Errc::invalid_argument, "map: the function is empty; pass a callable");
}

std::unique_ptr<detail::ElementIterator> MapDataset::iterator() const {
  return std::make_unique<MapIterator>(input_->iterator(), fn_);
}

std::shared_ptr<const detail::DatasetNode>
MapDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<MapDataset>(std::move(input), fn_);
}

} // namespace troupe::internal

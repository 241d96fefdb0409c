#include <troupe/datasets/prefetch_dataset.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

PrefetchDataset::PrefetchDataset(std::shared_ptr<const detail::DatasetNode> input,
                                 int64_t buffer_size)
  : UnaryDataset(std::move(input), "prefetch"), requested_(buffer_size) {
  if (buffer_size <= 0 && buffer_size != kAutotune)
    fail(Errc::invalid_argument, "prefetch: buffer_size must be positive, or -1 for AUTOTUNE, got "
                                   + std::to_string(buffer_size));
}

std::string PrefetchDataset::describe() const {
  if (requested_ == kAutotune)
    return "prefetch(AUTOTUNE)";
  return "prefetch(" + std::to_string(requested_) + ")";
}

std::shared_ptr<const detail::DatasetNode>
PrefetchDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<PrefetchDataset>(std::move(input), requested_);
}

} // namespace troupe::internal

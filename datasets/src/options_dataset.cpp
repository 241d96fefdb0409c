#include <troupe/datasets/options_dataset.hpp>

namespace troupe::internal {

OptionsDataset::OptionsDataset(std::shared_ptr<const detail::DatasetNode> input,
                               DatasetOptions options)
  : UnaryDataset(std::move(input), "with_options"), options_(options) {}

std::string OptionsDataset::describe() const {
  return "with_options(auto_shard_policy=" + std::string(name(options_.auto_shard_policy))
         + ", deterministic=" + (options_.deterministic ? "true" : "false") + ")";
}

std::shared_ptr<const detail::DatasetNode>
OptionsDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<OptionsDataset>(std::move(input), options_);
}

} // namespace troupe::internal

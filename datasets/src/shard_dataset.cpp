#include <troupe/datasets/shard_dataset.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

class ShardIterator : public detail::ElementIterator {
public:
  ShardIterator(std::unique_ptr<detail::ElementIterator> input, int64_t num_shards, int64_t index)
    : input_(std::move(input)), num_shards_(num_shards), index_(index) {}

  std::optional<Element> next() override {
    while (!done_) {
      auto element = input_->next();
      if (!element) {
        done_ = true;
        break;
      }
      if (position_++ % num_shards_ == index_)
        return element;
    }
    return std::nullopt;
  }

private:
  std::unique_ptr<detail::ElementIterator> input_;
  int64_t num_shards_;
  int64_t index_;
  int64_t position_ = 0;
  bool done_ = false;
};

} // namespace

ShardDataset::ShardDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t num_shards,
                           int64_t index)
  : UnaryDataset(std::move(input), "shard"), num_shards_(num_shards), index_(index) {
  if (num_shards <= 0)
    fail(Errc::invalid_argument,
         "shard: num_shards must be positive, got " + std::to_string(num_shards));
  if (index < 0 || index >= num_shards)
    fail(Errc::invalid_argument, "shard: index " + std::to_string(index)
                                   + " is out of range for num_shards " + std::to_string(num_shards)
                                   + "; pass 0 <= index < num_shards (0.."
                                   + std::to_string(num_shards - 1) + ")");
}

std::unique_ptr<detail::ElementIterator> ShardDataset::iterator() const {
  return std::make_unique<ShardIterator>(input_->iterator(), num_shards_, index_);
}

std::string ShardDataset::describe() const {
  return "shard(" + std::to_string(num_shards_) + ", index=" + std::to_string(index_) + ")";
}

std::shared_ptr<const detail::DatasetNode>
ShardDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<ShardDataset>(std::move(input), num_shards_, index_);
}

} // namespace troupe::internal

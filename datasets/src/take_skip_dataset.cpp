#include <troupe/datasets/take_skip_dataset.hpp>

namespace troupe::internal {

namespace {

class TakeIterator : public detail::ElementIterator {
public:
  TakeIterator(std::shared_ptr<const detail::DatasetNode> node, int64_t count)
    : node_(std::move(node)), remaining_(count) {}

  std::optional<Element> next() override {
    if (remaining_ == 0)
      return std::nullopt;
    // Made on first use, so take(0) never opens the input (e.g. a file).
    if (!input_)
      input_ = node_->iterator();
    auto element = input_->next();
    if (!element) {
      remaining_ = 0;
      return std::nullopt;
    }
    if (remaining_ > 0)
      --remaining_;
    return element;
  }

private:
  std::shared_ptr<const detail::DatasetNode> node_;
  std::unique_ptr<detail::ElementIterator> input_;
  int64_t remaining_; // negative: unlimited
};

class SkipIterator : public detail::ElementIterator {
public:
  SkipIterator(std::unique_ptr<detail::ElementIterator> input, int64_t count)
    : input_(std::move(input)), to_skip_(count) {}

  std::optional<Element> next() override {
    if (done_)
      return std::nullopt;
    // A negative count skips everything: read the input to its end.
    while (to_skip_ != 0) {
      if (!input_->next()) {
        done_ = true;
        return std::nullopt;
      }
      if (to_skip_ > 0)
        --to_skip_;
    }
    auto element = input_->next();
    done_ = !element;
    return element;
  }

private:
  std::unique_ptr<detail::ElementIterator> input_;
  int64_t to_skip_;
  bool done_ = false;
};

} // namespace

TakeDataset::TakeDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t count)
  : UnaryDataset(std::move(input), "take"), count_(count) {}

std::unique_ptr<detail::ElementIterator> TakeDataset::iterator() const {
  return std::make_unique<TakeIterator>(input_, count_);
}

std::string TakeDataset::describe() const {
  return "take(" + std::to_string(count_) + ")";
}

std::shared_ptr<const detail::DatasetNode>
TakeDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<TakeDataset>(std::move(input), count_);
}

SkipDataset::SkipDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t count)
  : UnaryDataset(std::move(input), "skip"), count_(count) {}

std::unique_ptr<detail::ElementIterator> SkipDataset::iterator() const {
  return std::make_unique<SkipIterator>(input_->iterator(), count_);
}

std::string SkipDataset::describe() const {
  return "skip(" + std::to_string(count_) + ")";
}

std::shared_ptr<const detail::DatasetNode>
SkipDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<SkipDataset>(std::move(input), count_);
}

} // namespace troupe::internal

#include <troupe/datasets/repeat_dataset.hpp>

namespace troupe::internal {

namespace {

class RepeatIterator : public detail::ElementIterator {
public:
  RepeatIterator(std::shared_ptr<const detail::DatasetNode> input, int64_t count)
    : node_(std::move(input)), count_(count) {}

  std::optional<Element> next() override {
    while (count_ < 0 || pass_ < count_) {
      if (!input_) {
        input_ = node_->iterator();
        pass_is_empty_ = true;
      }
      if (auto element = input_->next()) {
        pass_is_empty_ = false;
        return element;
      }
      input_.reset();
      ++pass_;
      // An empty pass would repeat as empty forever (TensorFlow's ForeverIterator stops too).
      if (pass_is_empty_)
        break;
    }
    count_ = 0;
    pass_ = 0;
    return std::nullopt;
  }

private:
  std::shared_ptr<const detail::DatasetNode> node_;
  std::unique_ptr<detail::ElementIterator> input_;
  int64_t count_;
  int64_t pass_ = 0;
  bool pass_is_empty_ = true;
};

} // namespace

RepeatDataset::RepeatDataset(std::shared_ptr<const detail::DatasetNode> input, int64_t count)
  : UnaryDataset(std::move(input), "repeat"), count_(count) {}

std::unique_ptr<detail::ElementIterator> RepeatDataset::iterator() const {
  return std::make_unique<RepeatIterator>(input_, count_);
}

std::string RepeatDataset::describe() const {
  return "repeat(" + std::to_string(count_) + ")";
}

std::shared_ptr<const detail::DatasetNode>
RepeatDataset::with_input(std::shared_ptr<const detail::DatasetNode> input) const {
  return std::make_shared<RepeatDataset>(std::move(input), count_);
}

} // namespace troupe::internal

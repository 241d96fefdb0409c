#include <troupe/datasets/range_dataset.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

namespace {

class RangeIterator : public detail::ElementIterator {
public:
  RangeIterator(int64_t start, int64_t stop, int64_t step)
    : next_(start), stop_(stop), step_(step) {}

  std::optional<Element> next() override {
    if (done_ || (step_ > 0 ? next_ >= stop_ : next_ <= stop_))
      return std::nullopt;
    const int64_t value = next_;
    // Past INT64_MAX (or MIN) the range is over; stepping must not overflow.
    done_ = __builtin_add_overflow(next_, step_, &next_);
    return Element(Tensor(value));
  }

private:
  int64_t next_;
  int64_t stop_;
  int64_t step_;
  bool done_ = false;
};

} // namespace

RangeDataset::RangeDataset(int64_t start, int64_t stop, int64_t step)
  : start_(start), stop_(stop), step_(step) {
  if (step == 0)
    fail(Errc::invalid_argument, "range: step must not be 0 (got range(" + std::to_string(start)
                                   + ", " + std::to_string(stop)
                                   + ", 0)); use a positive step to count up or a negative "
                                     "one to count down");
}

std::unique_ptr<detail::ElementIterator> RangeDataset::iterator() const {
  return std::make_unique<RangeIterator>(start_, stop_, step_);
}

ElementSpec RangeDataset::element_spec() const {
  return ElementSpec{{TensorSpec{Shape{}, DType::int64}}, false};
}

std::string RangeDataset::describe() const {
  return "range(" + std::to_string(start_) + ", " + std::to_string(stop_) + ", "
         + std::to_string(step_) + ")";
}

std::shared_ptr<const detail::DatasetNode>
RangeDataset::with_input(std::shared_ptr<const detail::DatasetNode>) const {
  return std::make_shared<RangeDataset>(*this);
}

} // namespace troupe::internal

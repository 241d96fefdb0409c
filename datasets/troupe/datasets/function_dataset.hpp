#pragma once

// The base of transformations that apply a user function (internal: not installed).

#include <memory>
#include <optional>
#include <utility>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// A transformation that applies a user function `Fn` to its input's elements
/// (map, filter). The function is shared by every iterator and by the nodes
/// with_input makes (so is its state, for a mutable lambda) and called on the
/// iterating thread; what it throws propagates unchanged. `Derived` is
/// constructible from (input, std::shared_ptr<Fn>) and pulls its next element
/// with `static std::optional<Element> next_element(detail::ElementIterator&, const Fn&)`.
template <class Derived, class Fn>
class FunctionDataset : public UnaryDataset {
public:
  using Function = Fn;

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override {
    return std::make_unique<Iterator>(input_->iterator(), fn_);
  }

  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override {
    return std::make_shared<Derived>(std::move(input), fn_);
  }

  /// What a user function makes is known only by running it: learned from
  /// the first element (DatasetNode's way), not taken from the input.
  [[nodiscard]] ElementSpec element_spec() const override { return detail::DatasetNode::element_spec(); }

protected:
  /// Error(invalid_argument) "<operation>: the <role> is empty" for an empty function.
  FunctionDataset(std::shared_ptr<const detail::DatasetNode> input, std::shared_ptr<Fn> fn,
                  const char* operation, const char* role)
    : UnaryDataset(std::move(input), operation), fn_(std::move(fn)) {
    require_callable(fn_ && *fn_, operation, role);
  }

private:
  class Iterator : public detail::ElementIterator {
  public:
    Iterator(std::unique_ptr<detail::ElementIterator> input, std::shared_ptr<Fn> fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}

    std::optional<Element> next() override { return Derived::next_element(*input_, *fn_); }

  private:
    std::unique_ptr<detail::ElementIterator> input_;
    std::shared_ptr<Fn> fn_;
  };

  std::shared_ptr<Fn> fn_;
};

} // namespace troupe::internal

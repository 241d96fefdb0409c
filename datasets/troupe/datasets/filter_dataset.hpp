#pragma once

// The node behind Dataset::filter (internal: not installed).

#include <functional>

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// The input elements for which `predicate` is true (tf.data's FilterDataset).
/// The predicate is shared by every iterator and called on the iterating
/// thread; what it throws propagates unchanged.
class FilterDataset : public UnaryDataset {
public:
  using Predicate = std::function<bool(const Element&)>;

  /// Error(invalid_argument) for an empty predicate.
  FilterDataset(std::shared_ptr<const detail::DatasetNode> input, Predicate predicate);
  /// Shares `predicate` (its state, for a mutable lambda) with another node.
  FilterDataset(std::shared_ptr<const detail::DatasetNode> input,
                std::shared_ptr<Predicate> predicate);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override;
  [[nodiscard]] ElementSpec element_spec() const override { return input_->element_spec(); }
  [[nodiscard]] std::string describe() const override { return "filter(predicate)"; }
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;

private:
  std::shared_ptr<Predicate> predicate_;
};

} // namespace troupe::internal

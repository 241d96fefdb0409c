#pragma once

// The node behind Dataset::with_options (internal: not installed).

#include <troupe/datasets/unary_dataset.hpp>

namespace troupe::internal {

/// The input's elements with options attached (tf.data's OptionsDataset):
/// options() answers them for this node and every node built on it, until
/// another with_options overrides them.
class OptionsDataset : public UnaryDataset {
public:
  OptionsDataset(std::shared_ptr<const detail::DatasetNode> input, DatasetOptions options);

  [[nodiscard]] std::unique_ptr<detail::ElementIterator> iterator() const override {
    return input_->iterator();
  }
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> input) const override;
  [[nodiscard]] DatasetOptions options() const override { return options_; }

private:
  DatasetOptions options_;
};

} // namespace troupe::internal

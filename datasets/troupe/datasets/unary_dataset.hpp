#pragma once

// The base of transformations with one input (internal: not installed).

#include <memory>
#include <utility>

#include <troupe/datasets/dataset_node.hpp>
#include <troupe/datasets/pipeline_util.hpp>

namespace troupe::internal {

/// A transformation of one input node; options and the element spec come
/// from the input (a subclass that changes the elements, as map and batch
/// do, overrides element_spec).
class UnaryDataset : public detail::DatasetNode {
public:
  [[nodiscard]] std::shared_ptr<const detail::DatasetNode> input() const override { return input_; }
  [[nodiscard]] ElementSpec element_spec() const override { return input_->element_spec(); }

protected:
  UnaryDataset(std::shared_ptr<const detail::DatasetNode> input, const char* operation)
    : input_(std::move(input)) {
    require_input(input_, operation);
  }

  std::shared_ptr<const detail::DatasetNode> input_;
};

} // namespace troupe::internal

#pragma once

// Helpers shared by the pipeline's node classes (internal: not installed).

#include <memory>
#include <string>

#include <troupe/datasets/dataset_node.hpp>
#include <troupe/datasets/element.hpp>
#include <troupe/datasets/tensor_spec.hpp>

namespace troupe::internal {

/// The chain ending at `node`, source first: "range(0, 6, 1) -> batch(4, drop_remainder=false)".
[[nodiscard]] std::string describe_pipeline(const detail::DatasetNode& node);

/// The spec of one element (every dimension known).
[[nodiscard]] ElementSpec spec_of(const Element& element);

/// "a tensor" or "a tuple of 2 tensors", for messages about an element's structure.
[[nodiscard]] std::string describe_structure(const Element& element);

/// Throws Error(invalid_argument) naming `operation` when `input` is null.
void require_input(const std::shared_ptr<const detail::DatasetNode>& input, const char* operation);

/// Throws Error(invalid_argument) "<operation>: the <role> is empty; pass a
/// callable" unless `callable` (a transformation's user function is set).
void require_callable(bool callable, const char* operation, const char* role);

/// Marks the current thread as peeking at one element to learn a dataset's
/// element spec (DatasetNode::element_spec's default). Seeded nodes use it to
/// leave their per-iteration state alone, so asking for the spec never changes
/// the order a later pass produces.
class ElementSpecPeek {
public:
  ElementSpecPeek() noexcept;
  ~ElementSpecPeek();
  ElementSpecPeek(const ElementSpecPeek&) = delete;
  ElementSpecPeek& operator=(const ElementSpecPeek&) = delete;

  /// True while an ElementSpecPeek lives on this thread.
  [[nodiscard]] static bool active() noexcept;
};

} // namespace troupe::internal

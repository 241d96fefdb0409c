#include <troupe/datasets/dataset_node.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/pipeline_util.hpp>

namespace troupe::detail {

ElementIterator::~ElementIterator() = default;

DatasetNode::~DatasetNode() = default;

ElementSpec DatasetNode::element_spec() const {
  // Nodes that cannot know their spec without running (map) learn it from
  // their first element, as TensorFlow's tracing would.
  internal::ElementSpecPeek peek;
  auto first = iterator()->next();
  if (!first)
    fail(Errc::invalid_argument,
         "element_spec: cannot infer the element spec of `" + internal::describe_pipeline(*this)
           + "` because it produced no elements (troupe runs one element through the "
             "pipeline to learn it); check that the input is not empty");
  return internal::spec_of(*first);
}

DatasetOptions DatasetNode::options() const {
  const auto in = input();
  return in ? in->options() : DatasetOptions{};
}

} // namespace troupe::detail

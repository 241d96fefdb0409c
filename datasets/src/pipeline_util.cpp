#include <troupe/datasets/pipeline_util.hpp>

#include <vector>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

thread_local int peek_depth = 0;

} // namespace

std::string describe_pipeline(const detail::DatasetNode& node) {
  std::vector<std::string> parts;
  for (const detail::DatasetNode* n = &node; n != nullptr; n = n->input().get())
    parts.push_back(n->describe());
  std::string result;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it)
    result += (result.empty() ? "" : " -> ") + *it;
  return result;
}

ElementSpec spec_of(const Element& element) {
  ElementSpec spec;
  spec.tuple = element.is_tuple();
  spec.components.reserve(element.size());
  for (const auto& component : element.components())
    spec.components.push_back(TensorSpec::of(component));
  return spec;
}

std::string describe_structure(const Element& element) {
  if (!element.is_tuple())
    return "a tensor";
  return "a tuple of " + std::to_string(element.size()) + " tensor"
         + (element.size() == 1 ? "" : "s");
}

void require_input(const std::shared_ptr<const detail::DatasetNode>& input, const char* operation) {
  if (!input)
    fail(Errc::invalid_argument,
         std::string(operation) + ": the input dataset is null; build it from a Dataset");
}

void require_callable(bool callable, const char* operation, const char* role) {
  if (!callable)
    fail(Errc::invalid_argument,
         std::string(operation) + ": the " + role + " is empty; pass a callable");
}

ElementSpecPeek::ElementSpecPeek() noexcept {
  ++peek_depth;
}

ElementSpecPeek::~ElementSpecPeek() {
  --peek_depth;
}

bool ElementSpecPeek::active() noexcept {
  return peek_depth > 0;
}

} // namespace troupe::internal

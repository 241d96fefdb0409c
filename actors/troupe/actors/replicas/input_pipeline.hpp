#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/actors/replicas/step_source.hpp>

namespace troupe::internal {

/// The edge's handle to one pass over a distributed dataset.
///
/// With a runtime, an input actor runs the StepSource and keeps up to
/// `buffer_steps` steps ready ahead of the consumer (prefetching while the
/// replicas compute); without one (the default strategy), steps are produced
/// on the calling thread. Destroying the handle stops the actor.
class InputPipeline {
public:
  InputPipeline(Runtime* runtime, std::unique_ptr<StepSource> source, int buffer_steps);
  ~InputPipeline();
  InputPipeline(const InputPipeline&) = delete;
  InputPipeline& operator=(const InputPipeline&) = delete;

  /// The next step, or nothing at the end of the data. Blocks the calling
  /// (non-actor) thread until the step is ready; rethrows the pipeline's error
  /// (and again on every later call).
  [[nodiscard]] std::optional<std::vector<Element>> next();
  /// Up to `n` steps in one request (fewer only at the end of the data, or
  /// before a pipeline error, which the next call rethrows); from then on the
  /// input actor keeps n steps ready ahead.
  [[nodiscard]] std::vector<std::vector<Element>> next_steps(std::size_t n);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace troupe::internal

#pragma once

// TPUStrategy's input rule (not installed): every step gives every replica a
// batch of the same, static size.

#include <memory>
#include <optional>
#include <vector>

#include <troupe/actors/replicas/step_source.hpp>

namespace troupe::internal {

/// Passes `inner`'s steps on when every replica's batch has the full size
/// (the first step's largest); a partial step (the dataset's last, partial
/// batch, or a global batch that does not split evenly) is
/// Error(invalid_argument) naming drop_remainder=True, or, with
/// `pad_partial_batches` (RunOptions::experimental_enable_dynamic_batch_size),
/// is padded with zero rows at the end of each short batch, and a log line
/// names the padded rows of each replica.
class StaticShapeSteps final : public StepSource {
public:
  StaticShapeSteps(std::unique_ptr<StepSource> inner, bool pad_partial_batches)
    : inner_(std::move(inner)), pad_(pad_partial_batches) {}

  std::optional<std::vector<Element>> next_step() override;

private:
  std::unique_ptr<StepSource> inner_;
  bool pad_;
  int64_t batch_ = -1; // the per-replica batch size, from the first step
  int64_t step_ = 0;
};

} // namespace troupe::internal

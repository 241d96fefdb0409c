#pragma once

#include <deque>
#include <exception>
#include <memory>
#include <vector>

#include <troupe/actors/replicas/input_pipeline_messages.hpp>
#include <troupe/actors/replicas/step_source.hpp>

namespace troupe::internal {

/// Runs one pass of a distributed dataset's pipeline and prefetches.
///
/// It produces one step per InputFillMsg, so fetches are answered between
/// steps, and keeps at most `buffer_steps` steps ready, or as many as the
/// largest fetch asked for (a multi-step loop's n steps come in one message).
/// A fetch is answered from the buffer at once, or as soon as enough steps
/// are produced. The end of the data and pipeline errors are remembered and
/// given to every later fetch.
class InputPipelineActor final : public InputPipelineActorHandle::base {
public:
  InputPipelineActor(caf::actor_config& cfg, std::shared_ptr<StepSource> source, int buffer_steps);

  behavior_type make_behavior() override;
  [[nodiscard]] const char* name() const override { return "troupe.input_pipeline"; }

private:
  void on_fetch(std::shared_ptr<FetchSlot> slot);
  void on_fill();
  [[nodiscard]] bool can_answer(const FetchSlot& slot) const;
  void answer(FetchSlot& slot);
  void schedule_fill();

  std::shared_ptr<StepSource> source_;
  std::size_t buffer_steps_;
  std::deque<std::vector<Element>> ready_;
  std::deque<std::shared_ptr<FetchSlot>> waiting_;
  bool ended_ = false;
  std::exception_ptr error_;
  bool fill_scheduled_ = false;
};

} // namespace troupe::internal

#pragma once

#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/replicas/step_source.hpp>

namespace troupe::internal {

/// Where the input actor leaves the steps the edge asked for.
struct FetchSlot {
  /// Steps asked for; fewer come only at the end of the data or before a
  /// pipeline error (which the next fetch then gets).
  std::size_t wanted = 1;
  std::vector<std::vector<Element>> steps; ///< empty at the end of the data
  std::exception_ptr error;
  Completion done;
};

/// Edge -> input actor: fill `slot` with the next `slot->wanted` steps.
struct InputFetchMsg {
  std::shared_ptr<FetchSlot> slot;
};

/// Input actor -> itself: produce one more step ahead.
struct InputFillMsg {};

/// Runs one pass of a distributed dataset's pipeline and prefetches.
///
/// It produces one step per InputFillMsg, so fetches are answered between
/// steps, and keeps at most `buffer_steps` steps ready, or as many as the
/// largest fetch asked for (a multi-step loop's n steps come in one message).
/// A fetch is answered from the buffer at once, or as soon as enough steps
/// are produced. The end of the data and pipeline errors are remembered and
/// given to every later fetch.
class InputPipelineActor final : public caf::event_based_actor {
public:
  InputPipelineActor(caf::actor_config& cfg, std::shared_ptr<StepSource> source, int buffer_steps);

  caf::behavior make_behavior() override;
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

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::InputFetchMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::InputFillMsg)

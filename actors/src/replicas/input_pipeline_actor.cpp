#include <troupe/actors/replicas/input_pipeline_actor.hpp>

#include <algorithm>

#include <caf/all.hpp>

namespace troupe::internal {

InputPipelineActor::InputPipelineActor(caf::actor_config& cfg, std::shared_ptr<StepSource> source,
                                       int buffer_steps)
  : InputPipelineActorHandle::base(cfg), source_(std::move(source)),
    buffer_steps_(static_cast<std::size_t>(std::max(buffer_steps, 1))) {
}

InputPipelineActor::behavior_type InputPipelineActor::make_behavior() {
  schedule_fill(); // start prefetching before the first fetch
  return {
    [this](InputFetchMsg& msg) { on_fetch(std::move(msg.slot)); },
    [this](const InputFillMsg&) { on_fill(); },
  };
}

void InputPipelineActor::schedule_fill() {
  if (fill_scheduled_ || ended_ || error_)
    return;
  if (ready_.size() >= buffer_steps_ && waiting_.empty())
    return;
  fill_scheduled_ = true;
  send(this, InputFillMsg{});
}

bool InputPipelineActor::can_answer(const FetchSlot& slot) const {
  return ready_.size() >= slot.wanted || ended_ || error_;
}

void InputPipelineActor::answer(FetchSlot& slot) {
  while (!ready_.empty() && slot.steps.size() < slot.wanted) {
    slot.steps.push_back(std::move(ready_.front()));
    ready_.pop_front();
  }
  // The steps before a pipeline error come first; the error with the next fetch.
  if (slot.steps.empty() && error_)
    slot.error = error_;
  // Otherwise the data has ended: the slot holds what was left, maybe nothing.
  slot.done.set();
}

void InputPipelineActor::on_fetch(std::shared_ptr<FetchSlot> slot) {
  buffer_steps_ = std::max(buffer_steps_, slot->wanted);
  if (waiting_.empty() && can_answer(*slot))
    answer(*slot);
  else
    waiting_.push_back(std::move(slot));
  schedule_fill();
}

void InputPipelineActor::on_fill() {
  fill_scheduled_ = false;
  try {
    if (auto step = source_->next_step())
      ready_.push_back(std::move(*step));
    else
      ended_ = true;
  } catch (...) {
    error_ = std::current_exception();
  }
  while (!waiting_.empty() && can_answer(*waiting_.front())) {
    answer(*waiting_.front());
    waiting_.pop_front();
  }
  schedule_fill();
}

} // namespace troupe::internal

#include <troupe/actors/input_pipeline_actor.hpp>

#include <caf/all.hpp>

namespace troupe::internal {

InputPipelineActor::InputPipelineActor(caf::actor_config& cfg, std::shared_ptr<StepSource> source,
                                       int buffer_steps)
  : caf::event_based_actor(cfg), source_(std::move(source)),
    buffer_steps_(static_cast<std::size_t>(std::max(buffer_steps, 1))) {
}

caf::behavior InputPipelineActor::make_behavior() {
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

void InputPipelineActor::answer(FetchSlot& slot) {
  if (!ready_.empty()) {
    slot.step = std::move(ready_.front());
    ready_.pop_front();
  } else if (error_) {
    slot.error = error_;
  }
  // Otherwise the data has ended: the slot stays empty.
  slot.done.set();
}

void InputPipelineActor::on_fetch(std::shared_ptr<FetchSlot> slot) {
  if (!ready_.empty() || ended_ || error_)
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
  while (!waiting_.empty() && (!ready_.empty() || ended_ || error_)) {
    answer(*waiting_.front());
    waiting_.pop_front();
  }
  schedule_fill();
}

} // namespace troupe::internal

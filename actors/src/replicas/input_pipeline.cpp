#include <troupe/actors/replicas/input_pipeline.hpp>

#include <caf/all.hpp>

#include <troupe/actors/replicas/input_pipeline_actor.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/timeline.hpp>

namespace troupe::internal {

struct InputPipeline::Impl {
  Executor* runtime = nullptr;
  InputPipelineActorHandle actor;
  std::unique_ptr<StepSource> inline_source; // no runtime: produce on the calling thread
  std::exception_ptr inline_error;
};

InputPipeline::InputPipeline(Runtime* runtime, std::unique_ptr<StepSource> source, int buffer_steps)
  : impl_(std::make_unique<Impl>()) {
  if (runtime == nullptr) {
    impl_->inline_source = std::move(source);
    return;
  }
  impl_->runtime = &runtime->executor();
  impl_->runtime->add_user();
  impl_->actor = impl_->runtime->system().spawn<InputPipelineActor>(
    std::shared_ptr<StepSource>(std::move(source)), buffer_steps);
}

InputPipeline::~InputPipeline() {
  if (impl_->actor) {
    caf::anon_send_exit(impl_->actor, caf::exit_reason::user_shutdown);
    impl_->actor = nullptr;
    impl_->runtime->drain();
    impl_->runtime->release_user();
  }
}

std::optional<std::vector<Element>> InputPipeline::next() {
  auto steps = next_steps(1);
  if (steps.empty())
    return std::nullopt;
  return std::move(steps.front());
}

std::vector<std::vector<Element>> InputPipeline::next_steps(std::size_t n) {
  if (!impl_->actor) {
    if (impl_->inline_error)
      std::rethrow_exception(impl_->inline_error);
    std::vector<std::vector<Element>> steps;
    try {
      while (steps.size() < n)
        if (auto step = impl_->inline_source->next_step())
          steps.push_back(std::move(*step));
        else
          break;
    } catch (...) {
      impl_->inline_error = std::current_exception();
      if (steps.empty())
        throw;
    }
    return steps;
  }
  auto slot = std::make_shared<FetchSlot>();
  slot->wanted = n;
  const auto asked = impl_->runtime->now();
  caf::anon_send(impl_->actor, InputFetchMsg{slot});
  impl_->runtime->wait(slot->done, "the next steps of a distributed dataset");
  if (auto& timeline = Timeline::process(); timeline.on())
    timeline.span(impl_->runtime->trace_pid(), Timeline::input_track, "input wait", "input", asked,
                  impl_->runtime->now(), "\"steps\": " + std::to_string(slot->steps.size()));
  if (slot->error)
    std::rethrow_exception(slot->error);
  return std::move(slot->steps);
}

} // namespace troupe::internal

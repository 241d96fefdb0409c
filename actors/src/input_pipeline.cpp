#include <troupe/actors/input_pipeline.hpp>

#include <caf/all.hpp>

#include <troupe/actors/input_pipeline_actor.hpp>
#include <troupe/actors/runtime_impl.hpp>

namespace troupe::internal {

struct InputPipeline::Impl {
  RuntimeImpl* runtime = nullptr;
  caf::actor actor;
  std::unique_ptr<StepSource> inline_source; // no runtime: produce on the calling thread
  std::exception_ptr inline_error;
};

InputPipeline::InputPipeline(Runtime* runtime, std::unique_ptr<StepSource> source, int buffer_steps)
  : impl_(std::make_unique<Impl>()) {
  if (runtime == nullptr) {
    impl_->inline_source = std::move(source);
    return;
  }
  impl_->runtime = &runtime->impl();
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
  if (!impl_->actor) {
    if (impl_->inline_error)
      std::rethrow_exception(impl_->inline_error);
    try {
      return impl_->inline_source->next_step();
    } catch (...) {
      impl_->inline_error = std::current_exception();
      throw;
    }
  }
  auto slot = std::make_shared<FetchSlot>();
  caf::anon_send(impl_->actor, InputFetchMsg{slot});
  impl_->runtime->wait(slot->done, "the next step of a distributed dataset");
  if (slot->error)
    std::rethrow_exception(slot->error);
  return std::move(slot->step);
}

} // namespace troupe::internal

#include <troupe/strategies/strategy_scope.hpp>

#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/strategies/default_strategy.hpp>
#include <troupe/strategies/strategy.hpp>

namespace troupe {

namespace detail {

ContextFrame* current_context_frame() noexcept {
  return static_cast<ContextFrame*>(internal::current_frame());
}

FrameInstaller::FrameInstaller(ContextFrame* frame) noexcept : previous_(current_context_frame()) {
  internal::set_current_frame(frame);
}

FrameInstaller::~FrameInstaller() {
  internal::set_current_frame(previous_);
}

// TensorFlow's _require_cross_replica_or_default_context_extended, with its messages.
void require_cross_replica(const Strategy& strategy, const char* method) {
  const auto* frame = current_context_frame();
  if (frame == nullptr || (frame->strategy == &strategy && frame->replica == nullptr))
    return;
  if (frame->strategy != &strategy)
    fail(Errc::failed_precondition, std::string(method) + ": Mixing different tf.distribute.Strategy objects: "
                                      + frame->strategy->describe() + " is not " + strategy.describe());
  fail(Errc::failed_precondition,
       std::string(method) + ": Method requires being in cross-replica context, use "
                             "get_replica_context().merge_call()");
}

// TensorFlow's _require_strategy_scope_extended, with its messages.
void require_strategy_scope(const Strategy& strategy, const char* method) {
  if (current_context_frame() == nullptr && &strategy != &internal::DefaultStrategy::instance())
    fail(Errc::failed_precondition, std::string(method) + ": Need to be inside \"with strategy.scope()\" for "
                                      + strategy.describe() + " (in C++: auto scope = strategy.scope();)");
  require_cross_replica(strategy, method);
}

} // namespace detail

StrategyScope::StrategyScope(Strategy& strategy) {
  detail::require_cross_replica(strategy, "scope");
  previous_ = detail::current_context_frame();
  frame_ = std::make_unique<detail::ContextFrame>(detail::ContextFrame{&strategy, nullptr});
  internal::set_current_frame(frame_.get());
}

StrategyScope::StrategyScope(StrategyScope&& other) noexcept
  : frame_(std::move(other.frame_)), previous_(other.previous_) {
}

StrategyScope::~StrategyScope() {
  if (frame_)
    internal::set_current_frame(previous_);
}

ReplicaContext& get_replica_context() {
  auto* frame = detail::current_context_frame();
  if (frame == nullptr)
    return internal::DefaultStrategy::instance().replica_context();
  if (frame->replica == nullptr)
    fail(Errc::failed_precondition,
         "get_replica_context() was called in cross-replica context (inside scope() of "
           + frame->strategy->describe()
           + ", outside strategy.run()), where TensorFlow returns None: call it inside the function "
             "passed to strategy.run(), or check in_cross_replica_context() first");
  return *frame->replica;
}

bool in_cross_replica_context() noexcept {
  const auto* frame = detail::current_context_frame();
  return frame != nullptr && frame->replica == nullptr;
}

Strategy& get_strategy() {
  auto* frame = detail::current_context_frame();
  return frame ? *frame->strategy : internal::DefaultStrategy::instance();
}

bool has_strategy() noexcept {
  return detail::current_context_frame() != nullptr;
}

} // namespace troupe

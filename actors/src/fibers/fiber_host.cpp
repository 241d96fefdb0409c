#include <troupe/actors/fibers/fiber_host.hpp>

#include <memory>
#include <utility>

#include <boost/context/protected_fixedsize_stack.hpp>

#include <troupe/core/denormals.hpp>

namespace troupe::internal {

FiberHost::FiberHost(std::size_t stack_bytes, std::function<void()> task)
  : stack_bytes_(stack_bytes), task_(std::move(task)) {
}

FiberHost::~FiberHost() = default;

void FiberHost::await(const Completion& done) {
  wait_for(done);
  yield_to_actor(); // until FiberWakeMsg
}

void FiberHost::ensure_fiber() {
  if (user_)
    return;
  boost::context::protected_fixedsize_stack stack(stack_bytes_);
  user_ = boost::context::fiber(std::allocator_arg, stack, [this](boost::context::fiber&& caller) {
    caller_ = std::move(caller);
    // A fiber keeps its own MXCSR across switches (Boost.Context saves it):
    // set the mode here too, for actor systems an application passed in.
    flush_denormals_on_this_thread();
    for (;;) {
      task_();
      yield_to_actor();
    }
    return std::move(caller_);
  });
}

void FiberHost::yield_to_actor() {
  caller_ = std::move(caller_).resume();
}

void FiberHost::drop_fiber() noexcept {
  user_ = boost::context::fiber{};
}

} // namespace troupe::internal

#include <troupe/actors/replicas/replica_handle.hpp>

namespace troupe::internal {

namespace {

thread_local void* tl_frame = nullptr;

} // namespace

// Out of line on purpose: a fiber may resume on another thread, and an inlined
// thread_local address could be reused across the switch.
void* current_frame() noexcept {
  return tl_frame;
}

void set_current_frame(void* frame) noexcept {
  tl_frame = frame;
}

} // namespace troupe::internal

#include <troupe/collectives/frames_in_flight.hpp>

namespace troupe::internal {

FrameBytes FramesInFlight::track(FrameBytes bytes) {
  frames_.fetch_add(1);
  auto* held = new std::shared_ptr<const void>(std::move(bytes.owner));
  bytes.owner = std::shared_ptr<const void>(held, [self = shared_from_this()](const std::shared_ptr<const void>* p) {
    delete p;
    self->dropped();
  });
  return bytes;
}

bool FramesInFlight::settled() {
  if (frames_.load() == 0)
    return true;
  waiting_.store(true);
  // The last frame may have gone since the load: whoever clears `waiting_`
  // first goes on (this call, or `released` for the caller).
  return frames_.load() == 0 && waiting_.exchange(false);
}

void FramesInFlight::dropped() {
  if (frames_.fetch_sub(1) == 1 && waiting_.exchange(false) && released_)
    released_();
}

} // namespace troupe::internal

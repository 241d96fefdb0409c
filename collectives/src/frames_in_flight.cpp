#include <troupe/collectives/frames_in_flight.hpp>

namespace troupe::internal {

/// The owner of one tracked frame: the bytes' own owner, and the count it
/// goes down in when the last copy of the frame is dropped.
struct FramesInFlight::Tracked {
  std::shared_ptr<const void> owner;
  std::shared_ptr<FramesInFlight> in_flight;

  Tracked(std::shared_ptr<const void> bytes_owner, std::shared_ptr<FramesInFlight> counted)
    : owner(std::move(bytes_owner)), in_flight(std::move(counted)) {}
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;
  ~Tracked() {
    owner.reset(); // the bytes go before anyone is told they went
    in_flight->dropped();
  }
};

FrameBytes FramesInFlight::track(FrameBytes bytes) {
  frames_.fetch_add(1);
  bytes.owner = std::make_shared<Tracked>(std::move(bytes.owner), shared_from_this());
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

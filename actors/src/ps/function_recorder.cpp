#include <troupe/actors/ps/function_recorder.hpp>

#include <algorithm>

#include <troupe/collectives/flight_recorder.hpp>

namespace troupe::internal {

void FunctionRecorder::dispatched(uint64_t id, uint32_t attempt, const std::string& function,
                                  const std::string& worker, int64_t now_ns) {
  if (ring_.empty())
    return;
  auto& e = ring_[next_];
  e = Entry{id, attempt, function, worker, now_ns, 0, true, {}};
  next_ = (next_ + 1) % ring_.size();
  count_ = std::min(count_ + 1, ring_.size());
}

void FunctionRecorder::ended(uint64_t id, uint32_t attempt, std::string how, int64_t now_ns) {
  for (std::size_t i = 0; i < count_; ++i) {
    auto& e = ring_[(next_ + ring_.size() - 1 - i) % ring_.size()];
    if (e.id == id && e.attempt == attempt && e.open) {
      e.open = false;
      e.end_ns = now_ns;
      e.how = std::move(how);
      return;
    }
  }
}

std::string FunctionRecorder::render(const std::string& why, int64_t now_ns, const std::string& task) const {
  std::string out = "flight recorder of " + task + " (" + why + "): the last " + std::to_string(count_)
                    + " scheduled functions, oldest first";
  for (std::size_t i = 0; i < count_; ++i) {
    const auto& e = ring_[(next_ + ring_.size() - count_ + i) % ring_.size()];
    out += "\n  closure " + std::to_string(e.id) + " attempt " + std::to_string(e.attempt) + " " + e.function
           + " on " + e.worker + ": ";
    out += e.open ? "running for " + flight_record_milliseconds(now_ns - e.start_ns)
                  : e.how + " after " + flight_record_milliseconds(e.end_ns - e.start_ns);
  }
  return out;
}

} // namespace troupe::internal

#include <troupe/core/hop_trace.hpp>

#include <chrono>
#include <memory>

namespace troupe::internal {

namespace hop_trace_detail {

std::atomic<bool> enabled{false};

namespace {
std::unique_ptr<HopEvent[]> events;
std::size_t capacity = 0;
std::atomic<std::size_t> next{0};
} // namespace

void record(Hop hop, uint8_t frame_type, uint64_t run) noexcept {
  const auto i = next.fetch_add(1, std::memory_order_relaxed);
  if (i >= capacity)
    return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  events[i] = HopEvent{hop, frame_type, run, ns};
}

} // namespace hop_trace_detail

std::string_view hop_name(Hop hop) noexcept {
  switch (hop) {
    case Hop::replica_issued: return "replica issued";
    case Hop::group_contribution: return "group has contribution";
    case Hop::group_send: return "group sends frame";
    case Hop::link_send: return "link takes frame";
    case Hop::wire_send: return "on the wire";
    case Hop::wire_receive: return "off the wire";
    case Hop::link_dispatch: return "link dispatches";
    case Hop::group_frame: return "group has frame";
    case Hop::group_deliver: return "group delivers";
    case Hop::replica_resumed: return "replica has result";
  }
  return "?";
}

void start_hop_trace(std::size_t capacity) {
  using namespace hop_trace_detail;
  enabled = false;
  events = std::make_unique<HopEvent[]>(capacity);
  hop_trace_detail::capacity = capacity;
  next = 0;
  enabled = true;
}

std::vector<HopEvent> stop_hop_trace() {
  using namespace hop_trace_detail;
  enabled = false;
  const auto n = std::min(next.load(), hop_trace_detail::capacity);
  return std::vector<HopEvent>(events.get(), events.get() + n);
}

} // namespace troupe::internal

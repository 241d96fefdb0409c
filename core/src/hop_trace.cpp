#include <troupe/core/hop_trace.hpp>

#include <algorithm>
#include <chrono>

namespace troupe::internal {

namespace hop_trace_detail {

std::atomic<bool> enabled{false};

namespace {

// One trace's room. Never freed: a thread that read the previous one just
// before a restart may still write into it (a few bytes per trace, in
// benchmarks only).
struct Buffer {
  explicit Buffer(std::size_t n) : events(new HopEvent[n]), capacity(n) {}
  HopEvent* events;
  std::size_t capacity;
  std::atomic<std::size_t> next{0};
};

std::atomic<Buffer*> current{nullptr};

} // namespace

void record(Hop hop, uint8_t frame_type, uint64_t run) noexcept {
  Buffer* buffer = current.load(std::memory_order_acquire);
  if (buffer == nullptr)
    return;
  const auto i = buffer->next.fetch_add(1, std::memory_order_relaxed);
  if (i >= buffer->capacity)
    return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
  buffer->events[i] = HopEvent{hop, frame_type, run, ns};
}

} // namespace hop_trace_detail

std::string_view hop_name(Hop hop) noexcept {
  switch (hop) {
    case Hop::run_started: return "strategy.run starts";
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
    case Hop::run_returned: return "strategy.run returns";
  }
  return "?";
}

void start_hop_trace(std::size_t capacity) {
  using namespace hop_trace_detail;
  enabled.store(false, std::memory_order_release);
  current.store(new Buffer(capacity), std::memory_order_release);
  enabled.store(true, std::memory_order_release);
}

std::vector<HopEvent> stop_hop_trace() {
  using namespace hop_trace_detail;
  enabled.store(false, std::memory_order_release);
  Buffer* buffer = current.exchange(nullptr, std::memory_order_acq_rel);
  if (buffer == nullptr)
    return {};
  // A point that passed its check just before may still be writing: what
  // this returns is for benchmarks, read after their collectives finished.
  const auto n = std::min(buffer->next.load(std::memory_order_acquire), buffer->capacity);
  return std::vector<HopEvent>(buffer->events, buffer->events + n);
}

} // namespace troupe::internal

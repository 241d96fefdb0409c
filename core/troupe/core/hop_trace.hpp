#pragma once

// A timestamp per hand-off of a collective, for benchmarks that ask where the
// time of a small collective goes (bench/allreduce_cluster --hops). Off
// unless a benchmark turns it on: then each point costs one atomic increment
// and one clock read. Internal: not installed.

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

namespace troupe::internal {

/// Where a collective's bytes are handed on, in the order of one collective.
enum class Hop : uint8_t {
  run_started,        ///< strategy.run handed the run to the replicas (caller's thread)
  replica_issued,     ///< the replica's fiber sent its contribution to the group actor
  group_contribution, ///< the group actor has it
  group_send,         ///< the group actor asked the link to send a frame
  link_send,          ///< the data-plane broker took the frame
  wire_send,          ///< the transport handed it to the wire (socket or UCX)
  wire_receive,       ///< the transport read a frame from the wire
  link_dispatch,      ///< the broker passes it to its group
  group_frame,        ///< the group actor has the frame
  group_deliver,      ///< the group actor sends the result to its replicas
  replica_resumed,    ///< the replica actor has the result
  run_returned,       ///< strategy.run's caller has every replica's return (caller's thread)
};

[[nodiscard]] std::string_view hop_name(Hop hop) noexcept;

struct HopEvent {
  Hop hop;
  uint8_t frame_type; ///< FrameType of a frame's hop, else 0
  uint64_t run;       ///< the strategy.run
  int64_t ns;         ///< steady clock (CLOCK_MONOTONIC: comparable across processes of one host)
};

namespace hop_trace_detail {
extern std::atomic<bool> enabled;
void record(Hop hop, uint8_t frame_type, uint64_t run) noexcept;
} // namespace hop_trace_detail

/// Records `hop` when tracing is on.
inline void trace_hop(Hop hop, uint64_t run, uint8_t frame_type = 0) noexcept {
  if (hop_trace_detail::enabled.load(std::memory_order_acquire))
    hop_trace_detail::record(hop, frame_type, run);
}

/// Starts tracing into room for `capacity` events (later ones are dropped);
/// clears what was recorded.
void start_hop_trace(std::size_t capacity);
/// Stops tracing and returns what was recorded.
[[nodiscard]] std::vector<HopEvent> stop_hop_trace();

} // namespace troupe::internal

// The hop trace of bench/allreduce_cluster --hops: off by default, then one
// event per hand-off, in order, bounded by its capacity.

#include <catch2/catch.hpp>

#include <troupe/core/hop_trace.hpp>

using namespace troupe::internal;

TEST_CASE("the hop trace records nothing until started and at most its capacity after", "[hop_trace]") {
  trace_hop(Hop::replica_issued, 1); // off: dropped
  start_hop_trace(3);
  trace_hop(Hop::replica_issued, 7);
  trace_hop(Hop::group_send, 7, 2);
  trace_hop(Hop::replica_resumed, 7);
  trace_hop(Hop::group_deliver, 8); // past the capacity
  const auto events = stop_hop_trace();
  REQUIRE(events.size() == 3);
  CHECK(events[0].hop == Hop::replica_issued);
  CHECK(events[0].run == 7);
  CHECK(events[1].hop == Hop::group_send);
  CHECK(events[1].frame_type == 2);
  CHECK(events[2].hop == Hop::replica_resumed);
  CHECK(events[0].ns <= events[1].ns);
  CHECK(events[1].ns <= events[2].ns);
  trace_hop(Hop::replica_issued, 9); // stopped again
  start_hop_trace(4);
  CHECK(stop_hop_trace().empty());
  CHECK(hop_name(Hop::wire_receive) == "off the wire");
}

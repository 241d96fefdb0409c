// The flight recorder: the last K collectives, oldest first, each with how it
// ended or whom it still waits for.

#include <catch2/catch.hpp>

#include <string>

#include <troupe/collectives/flight_recorder.hpp>
#include <troupe/core/tensor.hpp>

using namespace troupe;
using namespace troupe::internal;
using Catch::Matchers::Contains;

namespace {

CollectiveFingerprint sum_of(int64_t elements) {
  return CollectiveFingerprint::of(CollectiveKind::all_reduce, ReduceOp::SUM, 0,
                                   {Tensor::zeros({elements}, DType::float32)});
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("the flight recorder keeps the last K collectives and says how each ended", "[collectives][flight]") {
  FlightRecorder recorder(3);
  REQUIRE(recorder.enabled());
  CHECK(recorder.size() == 0);
  for (uint32_t seq = 0; seq < 5; ++seq)
    recorder.begin(CollectiveKey{1, 7, seq}, sum_of(256), 1'000'000 * seq);
  CHECK(recorder.size() == 3);
  recorder.end(CollectiveKey{1, 7, 2}, 2'500'000, std::nullopt);
  recorder.end(CollectiveKey{1, 7, 3}, 4'000'000, Errc::timeout);
  const auto waiting = [](const CollectiveKey& key) { return "rank " + std::to_string(key.seq); };
  const auto block = recorder.render("a test", waiting, 10'000'000);
  CHECK_THAT(block, Contains("flight recorder (a test): the last 3 collectives, oldest first"));
  CHECK(count(block, "\n  ") == 3);
  CHECK_FALSE(block.find("collective #1 of") != std::string::npos); // the oldest two are gone
  const std::string entry = " of run 7 (group 1) all_reduce(SUM) of 1 tensor, 1024 bytes: ";
  CHECK_THAT(block, Contains("collective #2" + entry + "done in 0.500 ms"));
  CHECK_THAT(block, Contains("collective #3" + entry + "failed (timeout) after 1.000 ms"));
  CHECK_THAT(block, Contains("collective #4" + entry + "open for 6.000 ms, waiting for rank 4"));
  CHECK(block.find("#2") < block.find("#3"));
  CHECK(block.find("#3") < block.find("#4"));
}

TEST_CASE("a flight recorder of no entries records nothing", "[collectives][flight]") {
  FlightRecorder off(0);
  CHECK_FALSE(off.enabled());
  off.begin(CollectiveKey{1, 1, 0}, sum_of(4), 0);
  off.end(CollectiveKey{1, 1, 0}, 1, std::nullopt);
  CHECK(off.size() == 0);
  CHECK_THAT(off.render("why", nullptr, 2), Contains("the last 0 collectives"));
  // A task's block says whose it is (a SimulatedCluster's tasks share one process's log).
  CHECK_THAT(off.render("why", nullptr, 2, "worker:1"), Contains("flight recorder of worker:1 (why): the last 0"));
  CHECK(write_flight_record("", "worker:0", "block").empty()); // no directory: the log only
  CHECK_THAT(write_flight_record("/nonexistent/troupe", "worker:0", "block"), Contains("cannot open"));
}

// FramesInFlight: an in-place all-reduce learns when the links dropped the
// frames it sent out of its caller's memory, once, from any thread.

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include <troupe/collectives/frames_in_flight.hpp>

using namespace troupe::internal;

namespace {

FrameBytes frame_of(const std::shared_ptr<std::vector<std::byte>>& buffer) {
  return FrameBytes{buffer, buffer->data(), buffer->size()};
}

} // namespace

TEST_CASE("frames in flight settle when the link dropped every copy, and say so once", "[collectives]") {
  int released = 0;
  auto in_flight = std::make_shared<FramesInFlight>([&] { ++released; });
  auto buffer = std::make_shared<std::vector<std::byte>>(16);
  CHECK(in_flight->settled()); // nothing sent yet
  auto a = in_flight->track(frame_of(buffer));
  auto b = in_flight->track(frame_of(buffer));
  CHECK(a.data == buffer->data());
  CHECK(a.size == 16);
  auto copy_of_a = a; // a link may hold several copies of one frame
  REQUIRE_FALSE(in_flight->settled());
  a = {};
  b = {};
  CHECK(released == 0); // a copy of `a` is still held
  copy_of_a = {};
  CHECK(released == 1);
  CHECK(in_flight->settled());
  CHECK(released == 1);
  // The bytes outlive the frames only through their own owner.
  CHECK(buffer.use_count() == 1);
}

TEST_CASE("frames dropped before anyone waits do not call back", "[collectives]") {
  int released = 0;
  auto in_flight = std::make_shared<FramesInFlight>([&] { ++released; });
  auto buffer = std::make_shared<std::vector<std::byte>>(4);
  { auto frame = in_flight->track(frame_of(buffer)); }
  CHECK(in_flight->settled());
  CHECK(released == 0);
}

TEST_CASE("frames dropped on other threads while the owner waits call back exactly once per wait",
          "[collectives]") {
  for (int round = 0; round < 200; ++round) {
    std::atomic<int> released{0};
    auto in_flight = std::make_shared<FramesInFlight>([&] { released.fetch_add(1); });
    auto buffer = std::make_shared<std::vector<std::byte>>(4);
    std::vector<FrameBytes> frames;
    for (int i = 0; i < 4; ++i)
      frames.push_back(in_flight->track(frame_of(buffer)));
    std::vector<std::thread> links;
    for (auto& f : frames)
      links.emplace_back([frame = std::move(f)]() mutable { frame = {}; });
    const bool settled = in_flight->settled();
    for (auto& t : links)
      t.join();
    // Either this wait saw the last drop, or the callback tells it, never both.
    CHECK(released.load() == (settled ? 0 : 1));
  }
}

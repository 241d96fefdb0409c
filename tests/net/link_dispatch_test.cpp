#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <caf/all.hpp>

#include <troupe/net/link/link_dispatch.hpp>
#include <troupe/core/caf_types.hpp>

using namespace troupe::internal;

namespace {

struct Recorder {
  std::vector<std::string> events;
  LinkDispatch dispatch{[this](const caf::actor&, LinkFrameMsg msg) { events.push_back("frame " + std::to_string(msg.header.seq)); },
                        [this](const caf::actor&, PeerLostMsg msg) { events.push_back("lost " + std::to_string(msg.rank)); }};
};

LinkFrameMsg frame(uint64_t group, uint32_t seq) {
  LinkFrameMsg msg;
  msg.from = 1;
  msg.header.group = group;
  msg.header.seq = seq;
  return msg;
}

} // namespace

TEST_CASE("a group registered late gets a peer's frames before the news of its loss", "[actors][link]") {
  caf::actor_system_config cfg;
  troupe::add_core_types(cfg);
  caf::actor_system sys{cfg};
  // An argument keeps clear of CAF's no-argument spawn path, which UBSan flags (tests/ubsan.supp).
  auto group = sys.spawn([](int) { return caf::behavior{[](int) {}}; }, 0);
  Recorder r;
  r.dispatch.on_frame(frame(7, 0));
  r.dispatch.on_frame(frame(7, 1));
  r.dispatch.on_peer_lost(1, "it shut down", true);
  r.dispatch.on_frame(frame(8, 0)); // another group's frame stays queued
  r.dispatch.on_register(LinkRegisterMsg{7, group});
  CHECK(r.events == std::vector<std::string>{"frame 0", "frame 1", "lost 1"});
  r.events.clear();
  r.dispatch.on_peer_lost(1, "again", false); // reported once only
  CHECK(r.events.empty());
  r.dispatch.on_register(LinkRegisterMsg{7, nullptr});
  r.dispatch.on_register(LinkRegisterMsg{8, group});
  CHECK(r.events == std::vector<std::string>{"frame 0", "lost 1"});
  caf::anon_send_exit(group, caf::exit_reason::user_shutdown);
}

TEST_CASE("early frames past the byte bound are dropped and their sender is lost to the group, not silently", "[actors][link]") {
  caf::actor_system_config cfg;
  troupe::add_core_types(cfg);
  caf::actor_system sys{cfg};
  auto group = sys.spawn([](int) { return caf::behavior{[](int) {}}; }, 0);
  std::vector<std::string> events;
  LinkDispatch dispatch{[&](const caf::actor&, LinkFrameMsg msg) { events.push_back("frame " + std::to_string(msg.from)); },
                        [&](const caf::actor&, PeerLostMsg msg) { events.push_back("lost " + std::to_string(msg.rank) + ": " + msg.why); },
                        /*max_early_bytes=*/100};
  auto sized = [](int from, std::size_t bytes) {
    auto payload = std::make_shared<std::vector<std::byte>>(bytes);
    LinkFrameMsg msg;
    msg.from = from;
    msg.header.group = 7;
    msg.bytes = FrameBytes{payload, payload->data(), payload->size()};
    return msg;
  };
  dispatch.on_frame(sized(1, 60));
  dispatch.on_frame(sized(2, 30));
  dispatch.on_frame(sized(1, 60)); // 150 bytes: over the bound
  dispatch.on_frame(sized(1, 1));  // rank 1's later frames are dropped too
  dispatch.on_frame(sized(2, 60)); // rank 2 still fits once rank 1's frames are gone
  dispatch.on_register(LinkRegisterMsg{7, group});
  REQUIRE(events.size() == 3);
  CHECK(events[0] == "frame 2");
  CHECK(events[1] == "frame 2");
  CHECK_THAT(events[2], Catch::StartsWith("lost 1: it sent more than") && Catch::Contains("strategy group 7 before this worker created"));
  caf::anon_send_exit(group, caf::exit_reason::user_shutdown);
}

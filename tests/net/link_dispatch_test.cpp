#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <troupe/net/link/link_dispatch.hpp>
#include <troupe/core/caf_types.hpp>

using namespace troupe::internal;

namespace {

struct Recorder {
  std::vector<std::string> events;
  LinkDispatch dispatch{[this](const LinkReceiverHandle&, LinkFrameMsg msg) { events.push_back("frame " + std::to_string(msg.header.seq)); },
                        [this](const LinkReceiverHandle&, PeerLostMsg msg) { events.push_back("lost " + std::to_string(msg.rank)); }};
};

/// An actor system with an idle actor standing in for a strategy's collective
/// group; the actor is told to exit when the test ends.
struct GroupActor {
  caf::actor_system_config cfg;
  caf::actor_system sys{with_core_types(cfg)};
  // An argument keeps clear of CAF's no-argument spawn path, which UBSan flags (tests/ubsan.supp).
  // Cast unchecked: the tests' dispatches record instead of sending to it.
  LinkReceiverHandle group =
    caf::actor_cast<LinkReceiverHandle>(sys.spawn([](int) { return caf::behavior{[](int) {}}; }, 0));

  ~GroupActor() { caf::anon_send_exit(group, caf::exit_reason::user_shutdown); }

private:
  static caf::actor_system_config& with_core_types(caf::actor_system_config& config) {
    troupe::add_core_types(config);
    return config;
  }
};

/// A frame from `from` to `group` carrying `bytes` bytes.
LinkFrameMsg sized_frame(int from, uint64_t group, std::size_t bytes) {
  auto payload = std::make_shared<std::vector<std::byte>>(bytes);
  LinkFrameMsg msg;
  msg.from = from;
  msg.header.group = group;
  msg.bytes = FrameBytes{payload, payload->data(), payload->size()};
  return msg;
}

LinkFrameMsg frame(uint64_t group, uint32_t seq) {
  LinkFrameMsg msg;
  msg.from = 1;
  msg.header.group = group;
  msg.header.seq = seq;
  return msg;
}

} // namespace

TEST_CASE("a group registered late gets a peer's frames before the news of its loss", "[actors][link]") {
  GroupActor g;
  const auto& group = g.group;
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
  r.dispatch.on_register(LinkRegisterMsg{7, {}});
  r.dispatch.on_register(LinkRegisterMsg{8, group});
  CHECK(r.events == std::vector<std::string>{"frame 0", "lost 1"});
}

TEST_CASE("early frames past the byte bound are dropped and their sender is lost to the group, not silently", "[actors][link]") {
  GroupActor g;
  const auto& group = g.group;
  std::vector<std::string> events;
  LinkDispatch dispatch{[&](const LinkReceiverHandle&, LinkFrameMsg msg) { events.push_back("frame " + std::to_string(msg.from)); },
                        [&](const LinkReceiverHandle&, PeerLostMsg msg) { events.push_back("lost " + std::to_string(msg.rank) + ": " + msg.why); },
                        /*reply=*/{}, /*max_early_bytes=*/100};
  auto sized = [](int from, std::size_t bytes) { return sized_frame(from, 7, bytes); };
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
}

TEST_CASE("frames of a group this worker unregistered are dropped, not kept for a group that never comes", "[actors][link]") {
  GroupActor g;
  const auto& group = g.group;
  Recorder r;
  r.dispatch.on_register(LinkRegisterMsg{7, group});
  r.dispatch.on_register(LinkRegisterMsg{7, {}});
  r.dispatch.on_frame(frame(7, 0)); // a peer still finishing a collective of that strategy
  r.dispatch.on_frame(frame(7, 1));
  r.dispatch.on_register(LinkRegisterMsg{7, group}); // had they been kept, they would come now
  CHECK(r.events.empty());
}

TEST_CASE("the early-frame bound covers every unregistered group together", "[actors][link]") {
  GroupActor g;
  const auto& group = g.group;
  std::vector<std::string> events;
  LinkDispatch dispatch{[&](const LinkReceiverHandle&, LinkFrameMsg msg) { events.push_back("frame " + std::to_string(msg.header.group)); },
                        [&](const LinkReceiverHandle&, PeerLostMsg msg) { events.push_back("lost " + std::to_string(msg.rank)); },
                        /*reply=*/{}, /*max_early_bytes=*/100};
  auto sized = [](uint64_t group_id, std::size_t bytes) { return sized_frame(1, group_id, bytes); };
  // 60 bytes each for two groups: within a per-group bound, past the total one.
  dispatch.on_frame(sized(7, 60));
  dispatch.on_frame(sized(8, 60));
  dispatch.on_register(LinkRegisterMsg{8, group});
  CHECK(events == std::vector<std::string>{"lost 1"});
  events.clear();
  dispatch.on_register(LinkRegisterMsg{7, group});
  CHECK(events == std::vector<std::string>{"frame 7"});
}

TEST_CASE("a peer's announce for a retired group is answered with the group's abort, other frames are dropped",
          "[actors][link]") {
  GroupActor g;
  std::vector<LinkSendMsg> replies;
  std::vector<std::string> events;
  LinkDispatch dispatch{[&](const LinkReceiverHandle&, LinkFrameMsg msg) { events.push_back("frame " + std::to_string(msg.header.seq)); },
                        [&](const LinkReceiverHandle&, PeerLostMsg msg) { events.push_back("lost " + std::to_string(msg.rank)); },
                        [&](LinkSendMsg msg) { replies.push_back(std::move(msg)); }};
  auto payload = std::make_shared<std::vector<std::byte>>(5, std::byte{9});
  dispatch.on_register(LinkRegisterMsg{7, g.group});
  dispatch.on_register(LinkRegisterMsg{7, {}, FrameBytes{payload, payload->data(), payload->size()}});
  dispatch.on_register(LinkRegisterMsg{8, g.group});
  dispatch.on_register(LinkRegisterMsg{8, {}}); // retired without an abort: silence
  auto announce = frame(7, 3);
  announce.from = 2;
  announce.header.type = troupe::internal::FrameType::announce;
  announce.header.run = 11;
  dispatch.on_frame(announce);
  dispatch.on_frame(frame(7, 4)); // a data frame: dropped
  auto other = announce;
  other.header.group = 8;
  dispatch.on_frame(other);
  CHECK(events.empty());
  REQUIRE(replies.size() == 1);
  CHECK(replies[0].to == 2);
  CHECK(replies[0].header.type == troupe::internal::FrameType::abort);
  CHECK(replies[0].header.group == 7);
  CHECK(replies[0].header.run == 11);
  CHECK(replies[0].header.seq == 3);
  CHECK(replies[0].header.size == 5);
  CHECK(replies[0].bytes.data == payload->data());
}

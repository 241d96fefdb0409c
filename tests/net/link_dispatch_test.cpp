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

// TROUPE_TRANSPORT's choice, which every task makes alike from the hellos.

#include <catch2/catch.hpp>

#include <troupe/net/link/transport_choice.hpp>

using namespace troupe::internal;
using Catch::Contains;

namespace {

TransportOffer offer(const std::string& task, const std::string& transport = "auto", bool ucx = true,
                     const std::string& domain = "host-a") {
  return TransportOffer{task, transport, ucx, ucx ? "" : "UCX cannot start", domain};
}

} // namespace

TEST_CASE("auto runs over UCX when every worker offers it on one host", "[net][transport]") {
  const auto choice = choose_transport({offer("worker:0"), offer("worker:1"), offer("worker:2", "ucx")});
  CHECK(choice.ucx);
  CHECK(choice.error.empty());
}

TEST_CASE("auto runs over TCP when one worker cannot take UCX, naming it", "[net][transport]") {
  SECTION("another host") {
    const auto choice = choose_transport({offer("worker:0"), offer("worker:1", "auto", true, "host-b")});
    CHECK_FALSE(choice.ucx);
    CHECK(choice.error.empty());
    CHECK_THAT(choice.why, Contains("tasks worker:0 and worker:1 share no memory"));
  }
  SECTION("no offer") {
    const auto choice = choose_transport({offer("worker:0"), offer("worker:1", "auto", false)});
    CHECK_FALSE(choice.ucx);
    CHECK_THAT(choice.why, Contains("task worker:1 offers no UCX data plane: UCX cannot start"));
  }
  SECTION("tcp asked for") {
    const auto choice = choose_transport({offer("worker:0", "tcp", false), offer("worker:1")});
    CHECK_FALSE(choice.ucx);
    CHECK_THAT(choice.why, Contains("task worker:0 runs with TROUPE_TRANSPORT=tcp"));
  }
}

TEST_CASE("ucx asked for where it cannot carry every worker is an error every task names alike", "[net][transport]") {
  const std::vector<TransportOffer> offers = {offer("worker:0", "ucx"), offer("worker:1", "auto", true, "host-b")};
  const auto choice = choose_transport(offers);
  CHECK_FALSE(choice.ucx);
  CHECK_THAT(choice.error, Contains("task worker:0 asks for TROUPE_TRANSPORT=ucx")
                             && Contains("share no memory") && Contains("set TROUPE_TRANSPORT=tcp or auto"));
  // Another task's view, its own offer first, gives the same verdict.
  const auto other = choose_transport({offers[1], offers[0]});
  CHECK_FALSE(other.ucx);
  CHECK_FALSE(other.error.empty());
}

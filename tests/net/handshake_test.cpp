// The one check both hellos (control plane and data plane) go through.

#include <catch2/catch.hpp>

#include <troupe/net/handshake.hpp>

using namespace troupe::internal;
using Catch::Contains;

TEST_CASE("the handshake admits higher ranks of the same cluster only, once each", "[net][handshake]") {
  const auto token = Handshake::hash_token("secret");
  CHECK(token != Handshake::hash_token("other"));
  const Handshake worker1(1, {"worker:0", "worker:1", "worker:2"}, token, 42);

  CHECK(worker1.refusal(PeerClaim{2, "worker:2", token, 42}, false).empty());
  CHECK(worker1.refusal(PeerClaim{2, "", token, std::nullopt}, false).empty()); // data plane: rank only
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:2", Handshake::hash_token("other"), 42}, false),
             Contains("its cluster token differs from task worker:1"));
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:2", token, 41}, false), Contains("its cluster spec differs"));
  CHECK_THAT(worker1.refusal(PeerClaim{0, "worker:0", token, 42}, false),
             Contains("not a task that connects to worker:1"));
  CHECK_THAT(worker1.refusal(PeerClaim{3, "", token, std::nullopt}, false), Contains("rank 3"));
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:1", token, 42}, false), Contains("claims to be task worker:1"));
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:2", token, 42}, true), Contains("already joined"));
}

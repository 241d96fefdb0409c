// The one check both hellos (control plane and data plane) go through.

#include <catch2/catch.hpp>

#include <troupe/net/handshake.hpp>

using namespace troupe::internal;
using Catch::Contains;

TEST_CASE("the handshake admits higher ranks of the same cluster only, once each", "[net][handshake]") {
  const bool token = true; // the token proven in net/auth's handshake
  const Handshake worker1(1, {"worker:0", "worker:1", "worker:2"}, 42);

  CHECK(worker1.refusal(PeerClaim{2, "worker:2", token, 42}, false).empty());
  CHECK(worker1.refusal(PeerClaim{2, "", token, std::nullopt}, false).empty()); // data plane: rank only
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:2", false, 42}, false),
             Contains("its cluster token differs from task worker:1"));
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:2", token, 41}, false), Contains("its cluster spec differs"));
  CHECK_THAT(worker1.refusal(PeerClaim{0, "worker:0", token, 42}, false),
             Contains("not a task that connects to worker:1"));
  CHECK_THAT(worker1.refusal(PeerClaim{3, "", token, std::nullopt}, false), Contains("rank 3"));
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:1", token, 42}, false), Contains("claims to be task worker:1"));
  CHECK_THAT(worker1.refusal(PeerClaim{2, "worker:2", token, 42}, true),
             Contains("task worker:2 is already taken by another process, which joined first: two processes were "
                      "started as worker:2"));
}

TEST_CASE("the handshake names the holder of a taken rank, a restarted task and a duplicate of itself",
          "[net][handshake]") {
  const bool token = true; // the token proven in net/auth's handshake
  const Handshake worker1(1, {"worker:0", "worker:1", "worker:2"}, 42);
  const PeerClaim worker2{2, "worker:2", token, 42};

  CHECK(worker1.refusal(worker2, RankHolder{1234, false})
        == "task worker:2 is already taken by the process with pid 1234, which joined first: two processes were "
           "started as worker:2 (give every process its own TF_CONFIG task index or rank)");
  CHECK(worker1.refusal(PeerClaim{2, "", token, std::nullopt}, RankHolder{})
        == "rank 2 is already taken by another process, which joined first: two processes were started as rank 2 "
           "(give every process its own TF_CONFIG task index or rank)");
  // The first worker:2 died or left: a new process as worker:2 is a restart, not a duplicate.
  CHECK(worker1.refusal(worker2, RankHolder{1234, true})
        == "task worker:2 already joined this cluster as the process with pid 1234, which has since left or been "
           "lost; a formed cluster does not take a restarted task back: restart every task of the cluster");
  CHECK_THAT(worker1.refusal(PeerClaim{1, "worker:1", token, 42}, std::nullopt),
             Contains("it claims to be task worker:1, which this process is: two processes were started as task "
                      "worker:1"));
  // A process of another cluster claiming a task that has not joined dooms
  // the cluster, a lower one too (a refused process presents itself to every
  // member); a duplicate of a joined task or a claim of this task does not.
  const PeerClaim stranger{2, "worker:2", false, 42};
  CHECK(worker1.dooms_the_cluster(stranger, std::nullopt));
  CHECK(worker1.dooms_the_cluster(PeerClaim{2, "worker:2", token, 7}, std::nullopt));
  CHECK_FALSE(worker1.dooms_the_cluster(stranger, RankHolder{1234, false}));
  CHECK(worker1.dooms_the_cluster(PeerClaim{0, "worker:0", false, 42}, std::nullopt));
  CHECK_FALSE(worker1.dooms_the_cluster(PeerClaim{1, "worker:1", false, 42}, std::nullopt));
  CHECK_FALSE(worker1.dooms_the_cluster(worker2, std::nullopt));
}

TEST_CASE("the handshake of a formed parameter-server cluster admits a restarted worker only", "[net][handshake]") {
  const bool token = true; // the token proven in net/auth's handshake
  const std::vector<std::string> members = {"chief:0", "worker:0", "worker:1", "ps:0"};
  Handshake ps0(3, members, 42);
  ps0.admit_restarted("worker");
  const PeerClaim worker1{2, "worker:1", token, 42};
  const RankHolder gone{1234, true};
  // A lower rank too: the restarted worker dials every member itself.
  CHECK(ps0.admits_restart(worker1, gone, true));
  CHECK(ps0.refusal(worker1, gone, true).empty());
  // Not before the cluster formed, not in place of a live process, not as the chief.
  CHECK_FALSE(ps0.admits_restart(worker1, gone, false));
  CHECK_THAT(ps0.refusal(worker1, RankHolder{1234, false}, true), Contains("is already taken by the process with pid 1234"));
  CHECK_FALSE(ps0.admits_restart(PeerClaim{0, "chief:0", token, 42}, gone, true));
  CHECK_FALSE(ps0.refusal(PeerClaim{0, "chief:0", token, 42}, gone, true).empty());
  // Nor with another token, another spec, or on the data plane (rank only).
  CHECK_FALSE(ps0.admits_restart(PeerClaim{2, "worker:1", false, 42}, gone, true));
  CHECK_FALSE(ps0.admits_restart(PeerClaim{2, "worker:1", token, 41}, gone, true));
  CHECK_FALSE(ps0.admits_restart(PeerClaim{2, "", token, std::nullopt}, gone, true));
  // A restarted ps task is refused with the message that says why.
  Handshake chief(0, members, 42);
  chief.admit_restarted("worker");
  CHECK_THAT(chief.refusal(PeerClaim{3, "ps:0", token, 42}, gone, true),
             Contains("a formed cluster does not take a restarted task back"));
  CHECK(chief.refusal(PeerClaim{3, "ps:0", token, 42}, gone, true).find("restart every task") != std::string::npos);
  // Without admit_restarted (no parameter servers) a restarted worker is refused as before.
  const Handshake plain(0, members, 42);
  CHECK_THAT(plain.refusal(worker1, gone, true), Contains("does not take a restarted task back"));
}

// Multi-process tests: workers in separate processes on 127.0.0.1 (started by
// troupe-launch, or directly), and on distinct addresses in network
// namespaces. Every wait has a deadline (TestProcess, --timeout-seconds).

#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/skip.hpp"
#include "support/test_process.hpp"

using troupe::testing::run_launcher;
using troupe::testing::split_lines;
using troupe::testing::TestProcess;
using Catch::Matchers::Contains;

namespace {

const std::string probe = TROUPE_CLUSTER_PROBE;

// The "PROBE ..." lines of each task, by task name ("worker:1").
std::map<std::string, std::vector<std::string>> probe_lines(const std::string& out) {
  std::map<std::string, std::vector<std::string>> lines;
  static const std::regex line(R"(^\[([a-z]+:[0-9]+)\] (PROBE .*)$)");
  for (const auto& l : split_lines(out)) {
    std::smatch m;
    if (std::regex_match(l, m, line))
      lines[m[1]].push_back(m[2]);
  }
  return lines;
}

// The wall-clock time in a "PROBE ... at <seconds>" line.
double time_in(const std::string& line) {
  static const std::regex at(R"( at ([0-9]+\.[0-9]+))");
  std::smatch m;
  REQUIRE(std::regex_search(line, m, at));
  return std::stod(m[1]);
}

std::string find_line(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0)
      return l;
  return {};
}

// `n` distinct free TCP ports on 127.0.0.1: each is bound to port 0 and read
// back, all sockets stay open until every port is picked, then close.
std::vector<int> free_ports(int n) {
  std::vector<int> fds;
  std::vector<int> ports;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    fds.push_back(fd);
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds)
    ::close(fd);
  return ports;
}

} // namespace

TEST_CASE("every collective agrees across 2 and 4 worker processes", "[cluster]") {
  const auto [workers, replicas] = GENERATE(std::pair{2, 1}, std::pair{4, 1}, std::pair{2, 2});
  CAPTURE(workers, replicas);
  auto r = run_launcher({"--workers", std::to_string(workers), "--timeout-seconds", "100", "--", probe, "collectives",
                         "--replicas", std::to_string(replicas)},
                        {{"TROUPE_RING_CHUNK_KIB", "64"}}, std::chrono::seconds(110));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == static_cast<size_t>(workers));
  for (const auto& [task, l] : lines)
    CHECK_THAT(find_line(l, "PROBE OK"), Contains("over " + std::to_string(workers * replicas) + " replicas"));
}

TEST_CASE("distributed datasets split global batches across workers and end together on uneven input", "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "datasets"}, {},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const auto& [task, l] : probe_lines(r.out))
    CHECK_FALSE(find_line(l, "PROBE OK datasets").empty());
}

TEST_CASE("workers that finish their last collective at different moments all complete it", "[cluster]") {
  // A worker leaves right after its last collective; the others may still be
  // finishing theirs with the frames it sent before its bye.
  for (int round = 0; round < 3; ++round) {
    auto r = run_launcher({"--workers", "4", "--timeout-seconds", "100", "--", probe, "finish"}, {},
                          std::chrono::seconds(110));
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    for (const auto& [task, l] : probe_lines(r.out))
      CHECK_FALSE(find_line(l, "PROBE FINISHED").empty());
  }
}

TEST_CASE("a killed worker fails the collective on every survivor within 5 s", "[cluster]") {
  auto r = run_launcher({"--workers", "3", "--grace-seconds", "20", "--timeout-seconds", "60", "--", probe, "kill", "1"},
                        {}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  auto lines = probe_lines(r.out);
  const auto died = find_line(lines["worker:1"], "PROBE VICTIM dies");
  REQUIRE_FALSE(died.empty());
  for (const char* survivor : {"worker:0", "worker:2"}) {
    CAPTURE(survivor);
    const auto failed = find_line(lines[survivor], "PROBE FAILED");
    REQUIRE_FALSE(failed.empty());
    CHECK_THAT(failed, Contains("code=peer_lost") && Contains("task worker:1 was lost"));
    const double after = time_in(failed) - time_in(died);
    CAPTURE(after);
    CHECK(after < 5.0);
  }
  // The launcher names the task that died.
  CHECK_THAT(r.err, Contains("task worker:1") && Contains("SIGKILL"));
}

TEST_CASE("a frozen worker fails the collective on every survivor within the peer timeout", "[cluster]") {
  // TROUPE_PEER_TIMEOUT_SECONDS bounds the wait for a silent peer; the
  // launcher kills the stopped process after its grace period.
  auto r = run_launcher({"--workers", "2", "--grace-seconds", "1", "--timeout-seconds", "60", "--", probe, "freeze", "1"},
                        {{"TROUPE_PEER_TIMEOUT_SECONDS", "2"}, {"TROUPE_PEER_HEARTBEAT_SECONDS", "0.2"}},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  auto lines = probe_lines(r.out);
  const auto stopped = find_line(lines["worker:1"], "PROBE VICTIM stops");
  REQUIRE_FALSE(stopped.empty());
  const auto failed = find_line(lines["worker:0"], "PROBE FAILED");
  REQUIRE_FALSE(failed.empty());
  CHECK_THAT(failed, Contains("code=peer_lost") && Contains("task worker:1 was lost"));
  const double after = time_in(failed) - time_in(stopped);
  CAPTURE(after);
  // The bound is the peer timeout (measured 1.74-1.85 s); 0.5 s of slack for
  // a 2-core machine that runs other tests beside this one.
  CHECK(after < 2.0 + 0.5);
}

TEST_CASE("workers that issue mismatched collectives all fail naming what each sent", "[cluster]") {
  auto r = run_launcher({"--workers", "3", "--timeout-seconds", "60", "--", probe, "mismatch"}, {},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const auto& [task, l] : probe_lines(r.out)) {
    CAPTURE(task);
    const auto failed = find_line(l, "PROBE FAILED");
    REQUIRE_FALSE(failed.empty());
    CHECK_THAT(failed, Contains("task worker:1 sent all_reduce(SUM) of float32 (4,)"));
  }
}

TEST_CASE("workers with different numbers of replicas fail their first collective naming both counts", "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "uneven"}, {}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const auto& [task, l] : probe_lines(r.out)) {
    CAPTURE(task);
    CHECK_THAT(find_line(l, "PROBE FAILED"), Contains("every worker must run the same number of replicas"));
  }
}

TEST_CASE("a worker that skips a collective fails it on the others at once", "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "skip"}, {}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  CHECK_THAT(find_line(lines["worker:0"], "PROBE FAILED"),
             Contains("code=key_mismatch") && Contains("task worker:1 returned from strategy.run #1 after issuing 0"));
  CHECK_FALSE(find_line(lines["worker:1"], "PROBE COMPLETED").empty());
}

TEST_CASE("a collective a worker reaches too late warns, times out naming it, and the late worker fails too",
          "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "timeout"},
                        {{"TROUPE_STALL_WARNING_SECONDS", "0.3"}}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  CHECK_THAT(find_line(lines["worker:0"], "PROBE FAILED"),
             Contains("code=timeout") && Contains("task worker:1 has not issued it"));
  CHECK_THAT(find_line(lines["worker:1"], "PROBE FAILED"), Contains("failed on task worker:0"));
  CHECK_THAT(r.err, Contains("[worker:0] [troupe W") && Contains("is stalled after 0.3s across workers: task worker:1 "
                                                                "has not issued it"));
}

TEST_CASE("a process with another cluster token is refused and named", "[cluster]") {
  const auto ports = free_ports(2);
  const int p0 = ports[0];
  const int p1 = ports[1];
  const std::string cluster = R"({"worker": ["127.0.0.1:)" + std::to_string(p0) + R"(", "127.0.0.1:)"
                              + std::to_string(p1) + R"("]})";
  auto tf_config = [&](int index) {
    return R"({"cluster": )" + cluster + R"(, "task": {"type": "worker", "index": )" + std::to_string(index) + "}}";
  };
  TestProcess good({probe, "join"}, {{"TF_CONFIG", tf_config(0)},
                                     {"TROUPE_CLUSTER_TOKEN", "right"},
                                     {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "4"}});
  TestProcess bad({probe, "join"}, {{"TF_CONFIG", tf_config(1)},
                                    {"TROUPE_CLUSTER_TOKEN", "wrong"},
                                    {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "4"}});
  REQUIRE(bad.wait(std::chrono::seconds(20)));
  REQUIRE(good.wait(std::chrono::seconds(20)));
  INFO(bad.out() << bad.err() << good.out() << good.err());
  CHECK(bad.exit_code() == 3);
  CHECK_THAT(bad.out(), Contains("task worker:0 refused this process: its cluster token differs"));
  CHECK_THAT(good.err(), Contains("refused the process presenting itself as \"worker:1\" (pid " + std::to_string(bad.pid())));
  CHECK(good.exit_code() == 3);
  CHECK_THAT(good.out(), Contains("waited in vain for task(s) worker:1") && Contains("cluster token differs"));
}

TEST_CASE("a task whose peers never start fails after the init timeout naming them and their addresses",
          "[cluster]") {
  const auto ports = free_ports(3);
  const int p0 = ports[0];
  const int p1 = ports[1];
  const int p2 = ports[2];
  const std::string cluster = R"({"worker": ["127.0.0.1:)" + std::to_string(p0) + R"(", "127.0.0.1:)"
                              + std::to_string(p1) + R"(", "127.0.0.1:)" + std::to_string(p2) + R"("]})";
  auto tf_config = [&](int index) {
    return R"({"cluster": )" + cluster + R"(, "task": {"type": "worker", "index": )" + std::to_string(index) + "}}";
  };
  // One after the other, each alone. Worker 1: worker 0 (lower rank) is never reachable.
  TestProcess lonely({probe, "join"}, {{"TF_CONFIG", tf_config(1)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "1"}});
  REQUIRE(lonely.wait(std::chrono::seconds(20)));
  INFO(lonely.out() << lonely.err());
  CHECK(lonely.exit_code() == 3);
  CHECK_THAT(lonely.out(), Contains("task worker:1 could not reach task worker:0 at 127.0.0.1:" + std::to_string(p0)
                                    + " within 1s (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)"));
  // Worker 0: workers 1 and 2 (higher ranks) never say hello.
  TestProcess first({probe, "join"}, {{"TF_CONFIG", tf_config(0)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "1"}});
  REQUIRE(first.wait(std::chrono::seconds(20)));
  INFO(first.out() << first.err());
  CHECK(first.exit_code() == 3);
  CHECK_THAT(first.out(), Contains("task worker:0 waited in vain for task(s) worker:1, worker:2 to connect "
                                   "(TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)"));
}

TEST_CASE("workers started as mpirun ranks through troupe-launch --attach form a cluster", "[cluster]") {
  // Open MPI's rank variables, as mpirun sets them; ports are base and base + 1.
  const int base = free_ports(1)[0];
  std::vector<std::unique_ptr<TestProcess>> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.push_back(std::make_unique<TestProcess>(
      std::vector<std::string>{TROUPE_LAUNCH_PROGRAM, "--attach", "--base-port", std::to_string(base), "--", probe,
                               "collectives"},
      std::map<std::string, std::string>{{"OMPI_COMM_WORLD_RANK", std::to_string(r)},
                                         {"OMPI_COMM_WORLD_SIZE", "2"},
                                         {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r)},
                                         {"TROUPE_CLUSTER_TOKEN", "shared-by-the-job"},
                                         {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}}));
  for (auto& p : ranks) {
    REQUIRE(p->wait(std::chrono::seconds(60)));
    INFO(p->out() << p->err());
    CHECK(p->exit_code() == 0);
    CHECK_THAT(p->out(), Contains("PROBE OK collectives over 2 replicas"));
  }
}

TEST_CASE("workers on distinct addresses in network namespaces form a cluster", "[cluster][netns]") {
  // Two namespaces joined by a veth pair, 10.231.0.1 and 10.231.0.2.
  const std::string tag = std::to_string(getpid() % 100000);
  const std::string ns0 = "troupe" + tag + "a";
  const std::string ns1 = "troupe" + tag + "b";
  const std::string setup =
    "ip netns add " + ns0 + " && ip netns add " + ns1 + " && ip link add v" + tag + "a netns " + ns0
    + " type veth peer name v" + tag + "b netns " + ns1 + " && ip -n " + ns0 + " addr add 10.231.0.1/24 dev v" + tag
    + "a && ip -n " + ns1 + " addr add 10.231.0.2/24 dev v" + tag + "b && ip -n " + ns0 + " link set v" + tag
    + "a up && ip -n " + ns1 + " link set v" + tag + "b up && ip -n " + ns0 + " link set lo up && ip -n " + ns1
    + " link set lo up";
  struct Cleanup {
    std::string a, b;
    ~Cleanup() { std::system(("ip netns del " + a + " 2>/dev/null; ip netns del " + b + " 2>/dev/null").c_str()); }
  } cleanup{ns0, ns1};
  if (std::system((setup + " 2>/dev/null").c_str()) != 0)
    TROUPE_SKIP("cannot create network namespaces here (needs root and iproute2's `ip netns`); "
                "run the test as root to cover workers on distinct addresses");
  const std::string cluster = R"({"worker": ["10.231.0.1:4101", "10.231.0.2:4102"]})";
  auto tf_config = [&](int index) {
    return R"({"cluster": )" + cluster + R"(, "task": {"type": "worker", "index": )" + std::to_string(index) + "}}";
  };
  const std::string ip = access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  TestProcess w0({ip, "netns", "exec", ns0, probe, "collectives"},
                 {{"TF_CONFIG", tf_config(0)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "20"}});
  TestProcess w1({ip, "netns", "exec", ns1, probe, "collectives"},
                 {{"TF_CONFIG", tf_config(1)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "20"}});
  REQUIRE(w0.wait(std::chrono::seconds(60)));
  REQUIRE(w1.wait(std::chrono::seconds(60)));
  INFO(w0.out() << w0.err() << w1.out() << w1.err());
  CHECK(w0.exit_code() == 0);
  CHECK(w1.exit_code() == 0);
  CHECK_THAT(w0.out(), Contains("PROBE OK collectives over 2 replicas"));
  CHECK_THAT(w1.out(), Contains("PROBE OK collectives over 2 replicas"));
}

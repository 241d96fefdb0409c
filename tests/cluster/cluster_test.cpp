// Multi-process tests: workers in separate processes on 127.0.0.1 (started by
// troupe-launch, or directly), and on distinct addresses in network
// namespaces. Every wait has a deadline (TestProcess, --timeout-seconds).

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <csignal>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/cluster_spec.hpp>

#include "support/free_ports.hpp"
#include "support/raw_connection.hpp"
#include "support/skip.hpp"
#include "support/temp_files.hpp"
#include "support/test_process.hpp"

using troupe::testing::free_ports;
using troupe::testing::RawConnection;
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

// The "PROBE ..." lines of one process's own output.
std::vector<std::string> probe_lines_of(const std::string& out) {
  std::vector<std::string> lines;
  for (const auto& l : split_lines(out))
    if (l.rfind("PROBE ", 0) == 0)
      lines.push_back(l);
  return lines;
}

// The wall-clock time in a "PROBE ... at <seconds>" line.
double time_in(const std::string& line) {
  static const std::regex at(R"( at ([0-9]+\.[0-9]+))");
  std::smatch m;
  REQUIRE(std::regex_search(line, m, at));
  return std::stod(m[1]);
}

// troupe-launch's closing report: one line per failed task, the first cause
// first ("troupe-launch: task ps:0 (pid 7) was killed by ..."); its notices
// while the tasks run go on with "; ...".
std::vector<std::string> launcher_report(const std::string& err) {
  std::vector<std::string> lines;
  for (const auto& l : split_lines(err))
    if (l.rfind("troupe-launch: task ", 0) == 0 && l.find(';') == std::string::npos)
      lines.push_back(l);
  return lines;
}

std::string find_line(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0)
      return l;
  return {};
}

// The TF_CONFIG of worker `index` in a cluster of workers at `addresses`
// ("host:port" each).
std::string worker_tf_config(const std::vector<std::string>& addresses, int index) {
  std::string workers;
  for (const auto& address : addresses)
    workers += (workers.empty() ? "\"" : ", \"") + address + "\"";
  return R"({"cluster": {"worker": [)" + workers + R"(]}, "task": {"type": "worker", "index": )"
         + std::to_string(index) + "}}";
}

// "127.0.0.1:<port>" for each of `ports`.
std::vector<std::string> loopback_addresses(const std::vector<int>& ports) {
  std::vector<std::string> addresses;
  for (int port : ports)
    addresses.push_back("127.0.0.1:" + std::to_string(port));
  return addresses;
}

// The file whose creation tells `cluster_probe hold <file>` workers to leave;
// its scratch folder goes when the test ends.
class LeaveFile {
public:
  explicit LeaveFile(const std::string& folder_prefix) : folder_("/tmp/" + folder_prefix + "_XXXXXX") {
    REQUIRE(::mkdtemp(folder_.data()) != nullptr);
    path_ = folder_ + "/leave";
  }
  ~LeaveFile() {
    std::remove(path_.c_str());
    ::rmdir(folder_.c_str());
  }
  LeaveFile(const LeaveFile&) = delete;
  LeaveFile& operator=(const LeaveFile&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  void tell_workers_to_leave() const {
    std::FILE* file = std::fopen(path_.c_str(), "w");
    REQUIRE(file != nullptr);
    std::fclose(file);
  }

private:
  std::string folder_;
  std::string path_;
};

} // namespace

TEST_CASE("every collective agrees across 2 and 4 worker processes, over TCP, UCX and under TLS", "[cluster]") {
  const auto [workers, replicas] = GENERATE(std::pair{2, 1}, std::pair{4, 1}, std::pair{2, 2});
  // Under TLS, auto picks TCP: UCX's shared memory is not encrypted.
  const auto [transport, tls] = GENERATE(std::pair{"tcp", false}, std::pair{"ucx", false}, std::pair{"auto", true});
  CAPTURE(workers, replicas, transport, tls);
  // 1 MiB frames: the probe's 1.2 MB all-gather blocks travel in pieces.
  std::vector<std::string> args{"--workers", std::to_string(workers), "--timeout-seconds", "100"};
  if (tls)
    args.push_back("--tls");
  for (std::string arg : {"--", probe.c_str(), "collectives", "--replicas"})
    args.push_back(arg);
  args.push_back(std::to_string(replicas));
  auto r = run_launcher(args,
                        {{"TROUPE_RING_CHUNK_KIB", "64"}, {"TROUPE_MAX_FRAME_MIB", "1"}, {"TROUPE_TRANSPORT", transport},
                         {"TROUPE_LOG", "info"}, {"TROUPE_LOG_COMPONENTS", "net"}},
                        std::chrono::seconds(110));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == static_cast<size_t>(workers));
  for (const auto& [task, l] : lines)
    CHECK_THAT(find_line(l, "PROBE OK"), Contains("over " + std::to_string(workers * replicas) + " replicas"));
  CHECK_THAT(r.out + r.err, Contains(std::string("data plane runs over ")
                                     + (std::string(transport) == "ucx" ? "UCX shared memory" : "TCP")));
}

TEST_CASE("distributed datasets split global batches across workers and end together on uneven input", "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "datasets"}, {},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const auto& [task, l] : probe_lines(r.out))
    CHECK_FALSE(find_line(l, "PROBE OK datasets").empty());
}

TEST_CASE("a NONE-aggregation assign with different values on two workers fails on both naming the variable",
          "[cluster][variable]") {
  // 2 replicas per worker: the replicas of each worker agree, the workers do not.
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "variables", "--replicas", "2"}, {},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == 2);
  for (const auto& [task, l] : lines) {
    CAPTURE(task);
    // Equal values passed (the probe checks every copy); different ones fail everywhere.
    const auto failed = find_line(l, "PROBE NONE FAILED");
    REQUIRE_FALSE(failed.empty());
    CHECK_THAT(failed, Contains("code=invalid_argument") && Contains("variable 'v_none' has aggregation NONE")
                         && Contains("worker 0 (replicas 0-1) passed one value, worker 1 (replicas 2-3) another"));
    // ONLY_FIRST_REPLICA: every copy on every worker takes global replica 0's 10.
    CHECK(l == std::vector<std::string>{"PROBE JOINED task " + task, failed, "PROBE FIRST 10", "PROBE FIRST 10"});
  }
}

TEST_CASE("an unseeded shuffle distributed over 2 workers gives every example once per epoch, in a new order",
          "[cluster][datasets]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "shuffle"},
                        {{"TROUPE_LOG", "info"}, {"TROUPE_LOG_COMPONENTS", "data"}}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == 2);
  // experimental_distribute_dataset (DATA), then distribute_datasets_from_function sharding after the shuffle.
  for (const std::string label : {"", "FN "}) {
    CAPTURE(label);
    std::vector<std::vector<int>> order(2); // per epoch: worker 0's elements, then worker 1's
    for (const char* task : {"worker:0", "worker:1"}) {
      CAPTURE(task);
      for (int epoch = 0; epoch < 2; ++epoch) {
        const auto saw = find_line(lines[task], "PROBE SAW " + label + std::to_string(epoch) + ":");
        REQUIRE_FALSE(saw.empty());
        std::istringstream in(saw.substr(saw.find(':') + 1));
        for (int x; in >> x;)
          order[static_cast<size_t>(epoch)].push_back(x);
      }
    }
    for (int epoch = 0; epoch < 2; ++epoch) {
      CAPTURE(epoch, order[static_cast<size_t>(epoch)]);
      auto sorted = order[static_cast<size_t>(epoch)];
      std::sort(sorted.begin(), sorted.end());
      std::vector<int> every(16);
      std::iota(every.begin(), every.end(), 0);
      CHECK(sorted == every);
    }
    CHECK(order[0] != order[1]);
  }
  // The agreed seed is logged once per worker, the same on both.
  static const std::regex logged(
    R"(\[(worker:[01])\] .*unseeded shuffle\(16, seed=None.* before DATA auto-sharding: .* seeds derived from ([0-9]+), the chief's)");
  std::map<std::string, std::vector<std::string>> seeds;
  for (const auto& l : split_lines(r.err)) {
    std::smatch m;
    if (std::regex_search(l, m, logged))
      seeds[m[1]].push_back(m[2]);
  }
  REQUIRE(seeds["worker:0"].size() == 1);
  REQUIRE(seeds["worker:1"].size() == 1);
  CHECK(seeds["worker:0"] == seeds["worker:1"]);
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

TEST_CASE("a worker busy computing for three peer timeouts is not lost", "[cluster]") {
  // Its data connection is silent all that time; its heartbeats are not.
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "busy", "6"},
                        {{"TROUPE_PEER_TIMEOUT_SECONDS", "2"}, {"TROUPE_PEER_HEARTBEAT_SECONDS", "0.2"}},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* task : {"worker:0", "worker:1"}) {
    CAPTURE(task);
    CHECK_FALSE(find_line(probe_lines(r.out)[task], "PROBE FINISHED").empty());
  }
}

TEST_CASE("a data port offset past the last port fails every task naming TROUPE_DATA_PORT_OFFSET", "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "join"},
                        {{"TROUPE_DATA_PORT_OFFSET", "65535"}}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  for (const char* task : {"worker:0", "worker:1"}) {
    CAPTURE(task);
    CHECK_THAT(find_line(probe_lines(r.out)[task], "PROBE ERROR"),
               Contains("+ TROUPE_DATA_PORT_OFFSET=65535: ports end at 65535; choose a smaller offset"));
  }
}

TEST_CASE("a killed worker fails the collective on every survivor within 5 s", "[cluster]") {
  // A peer timeout of 30 s leaves only the closed connections (EOF) to meet
  // the 5 s bound: a heartbeat timeout alone could not. Over UCX the closed
  // control connection decides, a hint grace later.
  const std::string transport = GENERATE("tcp", "ucx");
  CAPTURE(transport);
  auto r = run_launcher({"--workers", "3", "--grace-seconds", "20", "--timeout-seconds", "60", "--", probe, "kill", "1"},
                        {{"TROUPE_PEER_TIMEOUT_SECONDS", "30"}, {"TROUPE_TRANSPORT", transport}},
                        std::chrono::seconds(70));
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
  // The bound is the peer timeout (measured 2.00 s: the data connection's
  // last byte + the peer timeout); 0.5 s of slack for a 2-core machine that
  // runs other tests beside this one.
  CHECK(after < 2.0 + 0.5);
  // The launcher names the stopped worker as the first cause, not worker 0, which failed because of it.
  CHECK(r.exit_code == 128 + SIGSTOP);
  CHECK_THAT(r.err, Contains("troupe-launch: task worker:1 (pid ")
                      && Contains(") stopped responding first (stopped by signal 19 (SIGSTOP)), then was killed by "
                                  "troupe-launch after the grace period"));
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

TEST_CASE("workers with different numbers of replicas fail at strategy creation naming both counts", "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "uneven"}, {}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == 2);
  for (const auto& [task, l] : lines) {
    CAPTURE(task);
    CHECK_THAT(find_line(l, "PROBE FAILED creating"),
               Contains("code=failed_precondition")
                 && Contains("\"replicas per worker\" is 1 on worker:0, but 2 on worker:1")
                 && Contains("same number of replica devices"));
  }
}

TEST_CASE("workers whose CommunicationOptions differ fail at strategy creation naming each setting", "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "options"}, {},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == 2);
  for (const auto& [task, l] : lines) {
    CAPTURE(task);
    CHECK(find_line(l, "PROBE CREATED").empty());
    CHECK_THAT(find_line(l, "PROBE FAILED creating"),
               Contains("code=failed_precondition")
                 && Contains("\"CommunicationOptions.implementation\" is AUTO on worker:0, but RING on worker:1")
                 && Contains("\"CommunicationOptions.bytes_per_pack\" is 0 on worker:0, but 4096 on worker:1"));
  }
}

TEST_CASE("a multi-worker strategy that another worker never creates fails at creation naming the order rule",
          "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "extra_strategy"},
                        {{"TROUPE_COLLECTIVE_TIMEOUT_SECONDS", "20"}}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  CHECK_FALSE(find_line(lines["worker:1"], "PROBE CREATED one").empty());
  CHECK_THAT(find_line(lines["worker:0"], "PROBE FAILED creating"),
             Contains("MultiWorkerMirroredStrategy #2 of task worker:0: the workers could not compare their settings")
               && Contains("worker:1")
               && Contains("Every worker must create the same multi-worker strategies in the same order"));
}

TEST_CASE("check_same_across_workers passes equal values and fails every worker naming the setting and both values",
          "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "check_same"}, {},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == 2);
  for (const auto& [task, l] : lines) {
    CAPTURE(task);
    CHECK_FALSE(find_line(l, "PROBE SAME VALUES PASSED").empty());
    CHECK_THAT(find_line(l, "PROBE FAILED checking"),
               Contains("code=failed_precondition") && Contains("\"--batch\" is 128 on worker:0, but 64 on worker:1"));
  }
}

TEST_CASE("a chief that creates single-worker strategies first still meets the workers in its multi-worker strategy",
          "[cluster]") {
  // Before cluster strategies had ids of their own, the chief's strategy got
  // id 3 and the worker's 1: both timed out waiting for the other.
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "eval_first"},
                        {{"TROUPE_COLLECTIVE_TIMEOUT_SECONDS", "10"}}, std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = probe_lines(r.out);
  REQUIRE(lines.size() == 2);
  for (const auto& [task, l] : lines)
    CHECK_THAT(find_line(l, "PROBE OK"), Contains("eval_first over 2 replicas"));
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
  troupe::testing::TempDir records("troupe_flight");
  auto r = run_launcher({"--workers", "2", "--timeout-seconds", "60", "--", probe, "timeout"},
                        {{"TROUPE_STALL_WARNING_SECONDS", "0.3"}, {"TROUPE_FLIGHT_RECORDER_DIR", records.file(".")}},
                        std::chrono::seconds(70));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  CHECK_THAT(find_line(lines["worker:0"], "PROBE FAILED"),
             Contains("code=timeout") && Contains("task worker:1 has not issued it"));
  CHECK_THAT(find_line(lines["worker:1"], "PROBE FAILED"), Contains("failed on task worker:0"));
  CHECK_THAT(r.err, Contains("[worker:0] [troupe W") && Contains("is stalled after 0.3s across workers: task worker:1 "
                                                                "has not issued it"));
  // The flight recorder: worker:0's block at the stall and at the timeout,
  // with the collective still open and whom it waits for, in its log and file.
  CHECK_THAT(r.err, Contains("flight recorder of worker:0 (")
                      && Contains(" is stalled after 0.3s): the last 1 collectives")
                      && Contains("all_reduce(SUM) of 1 tensor, 4 bytes, direct-exchange: open for ")
                      && Contains(", waiting for task worker:1 has not issued it"));
  std::string file;
  for (const auto& entry : std::filesystem::directory_iterator(records.file(".")))
    if (entry.path().filename().string().rfind("flight-worker-0-", 0) == 0)
      file = troupe::testing::read_bytes(entry.path().string());
  CHECK_THAT(file, Contains("is stalled after 0.3s") && Contains("timed out after")
                     && Contains("waiting for task worker:1 has not issued it"));
}

TEST_CASE("a process with another cluster token is refused and named", "[cluster]") {
  const auto workers = loopback_addresses(free_ports(2));
  auto tf_config = [&](int index) { return worker_tf_config(workers, index); };
  // The refusing task fails at once (the right worker:1 is not coming), not
  // after its init timeout: 60 s, far beyond the 20 s the test waits.
  TestProcess good({probe, "join"}, {{"TF_CONFIG", tf_config(0)},
                                     {"TROUPE_CLUSTER_TOKEN", "right"},
                                     {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "60"}});
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
  CHECK_THAT(good.out(), Contains("task worker:0 refused the process presenting itself as \"worker:1\" (pid "
                                  + std::to_string(bad.pid()) + "), which it was waiting for: its cluster token differs"));
}

namespace {

// Seconds until the task closed `connection` (within 10 s), or -1.
double seconds_until_closed(RawConnection& connection) {
  const auto start = std::chrono::steady_clock::now();
  if (!connection.read_until_closed(start + std::chrono::seconds(10)))
    return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The resident memory of process `pid` in bytes (VmRSS), or -1.
long long resident_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoll(line.substr(6)) * 1024;
  return -1;
}

} // namespace

TEST_CASE("strangers at the ports of a running job are refused and logged, and the job ends right, blaming nobody",
          "[cluster][security]") {
  const auto ports = free_ports(2);
  const auto workers = loopback_addresses(ports);
  const LeaveFile stop("troupe_attacked");
  auto environment = [&](int index) {
    return std::map<std::string, std::string>{{"TF_CONFIG", worker_tf_config(workers, index)},
                                              {"TROUPE_CLUSTER_TOKEN", "a-token-of-32-characters-------"},
                                              {"TROUPE_HANDSHAKE_TIMEOUT_SECONDS", "1"},
                                              {"TROUPE_LOG", "info"},
                                              {"TROUPE_LOG_COMPONENTS", "net"},
                                              {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}};
  };
  TestProcess w0({probe, "attacked", stop.path()}, environment(0));
  TestProcess w1({probe, "attacked", stop.path()}, environment(1));
  static const std::regex listens(R"(task worker:0's data plane listens on port ([0-9]+))");
  std::smatch m;
  const bool stepping = w0.read_until([&] {
    return w0.out().find("PROBE STEPPING") != std::string::npos && std::regex_search(w0.err(), m, listens);
  }, std::chrono::seconds(30));
  INFO(w0.out() << w0.err() << w1.out() << w1.err());
  REQUIRE(stepping);
  const int data_port = std::stoi(m[1]);
  const auto resident_before = resident_bytes(w1.pid());
  REQUIRE(resident_before > 0);

  // 1. CAF's handshake header claiming a 4 GiB payload, at worker:1's control
  //    port: BASP never sees it; the gate closes it at its first 4 bytes.
  {
    RawConnection stranger(static_cast<uint16_t>(ports[1]));
    const unsigned char forged[32] = {1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    stranger.send_bytes(forged, sizeof forged);
    const double closed = seconds_until_closed(stranger);
    CHECK(closed >= 0);
    CHECK(closed < 1.0); // not the handshake's deadline: at once
  }
  // 2. A half-sent handshake: closed at its deadline (1 s here).
  {
    RawConnection stranger(static_cast<uint16_t>(ports[1]));
    stranger.send_bytes("TRPA!", 5);
    const double closed = seconds_until_closed(stranger);
    CHECK(closed >= 0.9);
    CHECK(closed < 6.0);
  }
  // 3. A hello that replays worker:1's claims (its rank and the cluster
  //    spec) without the token, at worker:0's data port and at worker:1's
  //    control port claiming worker:0: a replayed proof is as wrong as any,
  //    since each answers a fresh challenge.
  const auto spec = troupe::ClusterSpec({{"worker", workers}}).fingerprint();
  {
    RawConnection stranger(static_cast<uint16_t>(data_port));
    const auto end = troupe::internal::auth::dial_handshake(
      stranger.fd(), std::chrono::steady_clock::now() + std::chrono::seconds(10),
      troupe::internal::auth::derive_key("not the token", troupe::internal::auth::Purpose::data_plane),
      troupe::internal::auth::Purpose::data_plane, spec, 1, 0, 999);
    CHECK(end.end == troupe::internal::auth::DialEnd::other_token);
  }
  {
    RawConnection stranger(static_cast<uint16_t>(ports[1]));
    const auto end = troupe::internal::auth::dial_handshake(
      stranger.fd(), std::chrono::steady_clock::now() + std::chrono::seconds(10),
      troupe::internal::auth::derive_key("not the token", troupe::internal::auth::Purpose::control_plane),
      troupe::internal::auth::Purpose::control_plane, spec, 0, 1, 999);
    CHECK(end.end == troupe::internal::auth::DialEnd::other_token);
  }
  const auto resident_after = resident_bytes(w1.pid());
  CAPTURE(resident_before, resident_after);
  // Nothing a stranger sent was allocated for (the job's own buffers vary by a few MiB).
  CHECK(resident_after - resident_before < 64ll << 20);

  stop.tell_workers_to_leave();
  REQUIRE(w0.wait(std::chrono::seconds(30)));
  REQUIRE(w1.wait(std::chrono::seconds(30)));
  CHECK(w0.exit_code() == 0);
  CHECK(w1.exit_code() == 0);
  // Every step's all-reduce was checked against the undisturbed sums; both
  // ran the same steps.
  const auto finished = find_line(probe_lines_of(w0.out()), "PROBE FINISHED steps=");
  REQUIRE_FALSE(finished.empty());
  CHECK(find_line(probe_lines_of(w1.out()), "PROBE FINISHED steps=") == finished);
  // Each refusal is logged once, with the stranger's address and why.
  CHECK_THAT(w1.err(), Contains("control port: closed the connection from 127.0.0.1:")
                         && Contains("does not open with troupe's handshake")
                         && Contains("did not complete troupe's handshake within 1 s")
                         && Contains("refused the process presenting itself as \"worker:0\" (pid 999) at 127.0.0.1:"));
  CHECK_THAT(w0.err(), Contains("data plane: refused the connection from 127.0.0.1:")
                         && Contains("claims rank 1 but cannot prove the cluster token"));
  // Nobody was blamed.
  CHECK_THAT(w0.err() + w1.err(), !Contains("lost") && !Contains("froze"));
}

TEST_CASE("a process without TLS in a cluster under TLS is refused, and both fail at once naming TROUPE_TLS",
          "[cluster][tls]") {
  const auto workers = loopback_addresses(free_ports(2));
  TestProcess tls({probe, "join"}, {{"TF_CONFIG", worker_tf_config(workers, 0)},
                                    {"TROUPE_TLS", "1"},
                                    {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "60"}});
  TestProcess plain({probe, "join"}, {{"TF_CONFIG", worker_tf_config(workers, 1)},
                                      {"TROUPE_TLS", "0"},
                                      {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "60"}});
  REQUIRE(plain.wait(std::chrono::seconds(20)));
  REQUIRE(tls.wait(std::chrono::seconds(20)));
  INFO(plain.out() << plain.err() << tls.out() << tls.err());
  CHECK(plain.exit_code() == 3);
  CHECK_THAT(plain.out(), Contains("task worker:0 refused this process: its TROUPE_TLS differs"));
  CHECK(tls.exit_code() == 3);
  CHECK_THAT(tls.out(), Contains("refused the process presenting itself as \"worker:1\" (pid "
                                 + std::to_string(plain.pid()) + "), which it was waiting for: its TROUPE_TLS differs"));
}

TEST_CASE("a process whose TF_CONFIG cluster differs is refused and named", "[cluster]") {
  const auto ports = free_ports(2);
  const auto right = loopback_addresses(ports);
  // Worker 1 is given the same addresses but names itself "localhost": the
  // same tasks, another cluster spec.
  const std::vector<std::string> other{right[0], "localhost:" + std::to_string(ports[1])};
  TestProcess good({probe, "join"}, {{"TF_CONFIG", worker_tf_config(right, 0)},
                                     {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "60"}});
  TestProcess bad({probe, "join"}, {{"TF_CONFIG", worker_tf_config(other, 1)},
                                    {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "4"}});
  REQUIRE(bad.wait(std::chrono::seconds(20)));
  REQUIRE(good.wait(std::chrono::seconds(20)));
  INFO(bad.out() << bad.err() << good.out() << good.err());
  CHECK(bad.exit_code() == 3);
  CHECK_THAT(bad.out(), Contains("task worker:0 refused this process: its cluster spec differs"));
  CHECK_THAT(good.err(), Contains("refused the process presenting itself as \"worker:1\" (pid " + std::to_string(bad.pid())));
  CHECK(good.exit_code() == 3);
  CHECK_THAT(good.out(), Contains("which it was waiting for: its cluster spec differs"));
}

TEST_CASE("a second process started as a task that is running is refused naming the task", "[cluster]") {
  const auto workers = loopback_addresses(free_ports(2));
  const std::string w1 = workers[1];
  auto tf_config = [&](int index) { return worker_tf_config(workers, index); };
  const LeaveFile leave("troupe_same_task");
  TestProcess w0({probe, "hold", leave.path()}, {{"TF_CONFIG", tf_config(0)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}});
  TestProcess first({probe, "hold", leave.path()}, {{"TF_CONFIG", tf_config(1)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}});
  const bool joined = first.read_until([&] { return first.out().find("PROBE JOINED") != std::string::npos; },
                                       std::chrono::seconds(30));
  INFO(w0.out() << w0.err() << first.out() << first.err());
  REQUIRE(joined);
  // The same TF_CONFIG task again, while the first runs.
  TestProcess second({probe, "join"}, {{"TF_CONFIG", tf_config(1)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}});
  REQUIRE(second.wait(std::chrono::seconds(20)));
  leave.tell_workers_to_leave();
  REQUIRE(w0.wait(std::chrono::seconds(20)));
  REQUIRE(first.wait(std::chrono::seconds(20)));
  INFO(second.out() << second.err());
  CHECK(second.exit_code() == 3);
  CHECK_THAT(second.out(), Contains("task worker:1 cannot listen on its address " + w1)
                             && Contains("a second process started as task worker:1?"));
  // The cluster the first one formed is unharmed.
  CHECK(w0.exit_code() == 0);
  CHECK(first.exit_code() == 0);
}

TEST_CASE("a task restarted after it left a formed cluster is told the cluster does not take it back", "[cluster]") {
  const auto workers = loopback_addresses(free_ports(2));
  auto tf_config = [&](int index) { return worker_tf_config(workers, index); };
  const LeaveFile leave("troupe_restart");
  const LeaveFile old_leaves("troupe_restart_old");
  TestProcess w0({probe, "hold", leave.path()}, {{"TF_CONFIG", tf_config(0)},
                                          {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"},
                                          {"TROUPE_LOG", "info"},
                                          {"TROUPE_LOG_COMPONENTS", "net"}});
  TestProcess old_w1({probe, "hold", old_leaves.path()},
                     {{"TF_CONFIG", tf_config(1)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}});
  // The first worker:1 leaves only once worker:0 has formed the cluster too:
  // one that left while worker:0 was still joining would leave it waiting
  // for its init timeout, not holding a formed cluster (seen on a busy machine).
  const bool formed = w0.read_until([&] { return w0.out().find("PROBE JOINED") != std::string::npos; },
                                    std::chrono::seconds(30));
  INFO(w0.out() << w0.err());
  REQUIRE(formed);
  old_leaves.tell_workers_to_leave();
  REQUIRE(old_w1.wait(std::chrono::seconds(30)));
  CHECK(old_w1.exit_code() == 0);
  // Worker 0 noticed that the first worker:1 went away before the new one comes.
  const std::string gone = "the control connection to task worker:1 (pid " + std::to_string(old_w1.pid()) + ") went down";
  const bool noticed = w0.read_until([&] { return w0.err().find(gone) != std::string::npos; }, std::chrono::seconds(20));
  INFO(w0.out() << w0.err());
  REQUIRE(noticed);
  TestProcess new_w1({probe, "join"}, {{"TF_CONFIG", tf_config(1)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}});
  REQUIRE(new_w1.wait(std::chrono::seconds(20)));
  leave.tell_workers_to_leave();
  REQUIRE(w0.wait(std::chrono::seconds(20)));
  INFO(new_w1.out() << new_w1.err());
  CHECK(new_w1.exit_code() == 3);
  CHECK_THAT(new_w1.out(), Contains("task worker:0 refused this process: task worker:1 already joined this cluster as "
                                    "the process with pid " + std::to_string(old_w1.pid())
                                    + ", which has since left or been lost; a formed cluster does not take a "
                                      "restarted task back"));
  CHECK_THAT(new_w1.out(), !Contains("two processes were started as the same task"));
}

TEST_CASE("a task whose peers never start fails after the init timeout naming them and their addresses",
          "[cluster]") {
  const auto ports = free_ports(3);
  const int p0 = ports[0];
  const int p1 = ports[1];
  const int p2 = ports[2];
  auto tf_config = [&](int index) { return worker_tf_config(loopback_addresses(ports), index); };
  // One after the other, each alone. Worker 1: worker 0 (lower rank) is never reachable.
  TestProcess lonely({probe, "join"}, {{"TF_CONFIG", tf_config(1)},
                                       {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "2"},
                                       {"TROUPE_LOG_COMPONENTS", "net,bogus"}});
  REQUIRE(lonely.wait(std::chrono::seconds(20)));
  INFO(lonely.out() << lonely.err());
  CHECK(lonely.exit_code() == 3);
  CHECK_THAT(lonely.out(), Contains("task worker:1 could not reach task worker:0 at 127.0.0.1:" + std::to_string(p0)
                                    + " within 2s (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)"));
  // A component name troupe does not use is said at start, not ignored.
  CHECK_THAT(lonely.err(), Contains("[troupe W task=0 log] TROUPE_LOG_COMPONENTS names \"bogus\", none of troupe's "
                                    "components (coll, data, kernels, net, trace, tpu)"));
  // While it waits it says so (every quarter of a short init timeout), in lines naming its task.
  CHECK_THAT(lonely.err(), Contains("[troupe W task=worker:1 net] task worker:1 is waiting for task worker:0 at 127.0.0.1:"
                                    + std::to_string(p0) + " to start (") && Contains(" of 2 s, TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)"));
  // Worker 0: workers 1 and 2 (higher ranks) never say hello.
  TestProcess first({probe, "join"}, {{"TF_CONFIG", tf_config(0)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "2"}});
  REQUIRE(first.wait(std::chrono::seconds(20)));
  INFO(first.out() << first.err());
  CHECK(first.exit_code() == 3);
  const std::string missing = "task(s) worker:1 (127.0.0.1:" + std::to_string(p1) + "), worker:2 (127.0.0.1:"
                              + std::to_string(p2) + ") to connect";
  CHECK_THAT(first.out(), Contains("task worker:0 waited in vain for " + missing + " (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)"));
  CHECK_THAT(first.err(), Contains("[troupe W task=worker:0 net] task worker:0 is waiting for " + missing + " (")
                             && Contains(" of 2 s, TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS)"));
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
  auto tf_config = [](int index) { return worker_tf_config({"10.231.0.1:4101", "10.231.0.2:4102"}, index); };
  const std::string ip = access("/usr/sbin/ip", X_OK) == 0 ? "/usr/sbin/ip" : "/sbin/ip";
  // Beyond loopback a cluster needs a token (docs/security.md).
  TestProcess w0({ip, "netns", "exec", ns0, probe, "collectives"},
                 {{"TF_CONFIG", tf_config(0)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "20"},
                  {"TROUPE_CLUSTER_TOKEN", "netns-secret-of-32-characters-ok"}});
  TestProcess w1({ip, "netns", "exec", ns1, probe, "collectives"},
                 {{"TF_CONFIG", tf_config(1)}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "20"},
                  {"TROUPE_CLUSTER_TOKEN", "netns-secret-of-32-characters-ok"}});
  REQUIRE(w0.wait(std::chrono::seconds(60)));
  REQUIRE(w1.wait(std::chrono::seconds(60)));
  INFO(w0.out() << w0.err() << w1.out() << w1.err());
  CHECK(w0.exit_code() == 0);
  CHECK(w1.exit_code() == 0);
  CHECK_THAT(w0.out(), Contains("PROBE OK collectives over 2 replicas"));
  CHECK_THAT(w1.out(), Contains("PROBE OK collectives over 2 replicas"));
}

TEST_CASE("a cluster with a task beyond loopback and no token refuses to start, naming the fix", "[cluster]") {
  // 192.0.2.0/24 is TEST-NET-1: never this machine. The task fails before it
  // listens or dials, so nothing needs to be there.
  const auto ports = free_ports(1);
  auto tf_config = worker_tf_config({"127.0.0.1:" + std::to_string(ports[0]), "192.0.2.1:4102"}, 0);
  TestProcess unprotected({probe, "join"}, {{"TF_CONFIG", tf_config}, {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "60"}});
  REQUIRE(unprotected.wait(std::chrono::seconds(30)));
  INFO(unprotected.out() << unprotected.err());
  CHECK(unprotected.exit_code() == 3);
  CHECK(unprotected.seconds() < 30); // at once, not after the 60 s init timeout
  CHECK_THAT(unprotected.out(), Contains("PROBE ERROR this cluster has a task on 192.0.2.1")
                                  && Contains("TROUPE_CLUSTER_TOKEN is empty")
                                  && Contains("TROUPE_ALLOW_UNAUTHENTICATED=1"));
}

TEST_CASE("a chief, 2 workers and a parameter server started by troupe-launch --ps form one cluster and end with the chief",
          "[cluster]") {
  auto r = run_launcher({"--workers", "2", "--ps", "1", "--grace-seconds", "30", "--timeout-seconds", "90", "--", probe,
                         "members"},
                        {}, std::chrono::seconds(100));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  auto lines = probe_lines(r.out);
  const std::string everyone = "members=chief:0,worker:0,worker:1,ps:0 workers=worker:0,worker:1 ps=ps:0";
  // Collectives keep spanning the chief and the workers only.
  const std::string collective = " collective=chief:0,worker:0,worker:1";
  CHECK(find_line(lines["chief:0"], "PROBE MEMBER") == "PROBE MEMBER chief:0 " + everyone + collective + " rank=0");
  CHECK(find_line(lines["worker:0"], "PROBE MEMBER") == "PROBE MEMBER worker:0 " + everyone + collective + " rank=1");
  CHECK(find_line(lines["worker:1"], "PROBE MEMBER") == "PROBE MEMBER worker:1 " + everyone + collective + " rank=2");
  CHECK(find_line(lines["ps:0"], "PROBE MEMBER") == "PROBE MEMBER ps:0 " + everyone + collective + " rank=-1");
  // The chief reached an actor on every other task.
  for (const char* task : {"worker:0", "worker:1", "ps:0"})
    CHECK_FALSE(find_line(lines["chief:0"], std::string("PROBE REACHED ") + task).empty());
  // Every other task learned that the chief left, and exited on its own well
  // within the grace period: the launcher stopped nobody.
  for (const char* task : {"worker:0", "worker:1", "ps:0"}) {
    CAPTURE(task);
    CHECK_THAT(find_line(lines[task], "PROBE SAW chief:0"), Contains("PROBE SAW chief:0 left"));
  }
  CHECK_THAT(r.err, !Contains("stopping the tasks still running"));
  CHECK(r.seconds < 30);
}

TEST_CASE("a killed parameter server is seen as lost by the chief within the peer timeout", "[cluster]") {
  auto r = run_launcher({"--workers", "1", "--ps", "1", "--grace-seconds", "30", "--timeout-seconds", "90", "--", probe,
                         "ps_lost"},
                        {{"TROUPE_PEER_TIMEOUT_SECONDS", "4"}}, std::chrono::seconds(100));
  INFO(r.out << r.err);
  auto lines = probe_lines(r.out);
  const auto died = find_line(lines["ps:0"], "PROBE VICTIM ps:0 dies");
  REQUIRE_FALSE(died.empty());
  const auto lost = find_line(lines["chief:0"], "PROBE LOST ps:0");
  REQUIRE_FALSE(lost.empty());
  CHECK_THAT(lost, Contains("left=0") && Contains("control connection went down"));
  const double after = time_in(lost) - time_in(died);
  CAPTURE(after);
  CHECK(after < 4.0);
  // The chief failed after the ps task was killed: the launcher names the
  // killed task as the first cause, with its status.
  CHECK(r.exit_code == 128 + SIGKILL);
  const auto report = launcher_report(r.err);
  REQUIRE(report.size() >= 2);
  CHECK_THAT(report[0], Contains("task ps:0 (pid ") && Contains("was killed by signal 9 (SIGKILL)"));
  CHECK_THAT(report[1], Contains("task chief:0 (pid ") && Contains("exited with status 1"));
}

TEST_CASE("a frozen parameter server is seen as lost by the chief within the peer timeout", "[cluster]") {
  // No socket closes: CAF's heartbeat timeout on the control connection decides.
  auto r = run_launcher({"--workers", "1", "--ps", "1", "--grace-seconds", "1", "--timeout-seconds", "90", "--", probe,
                         "ps_frozen"},
                        {{"TROUPE_PEER_TIMEOUT_SECONDS", "2"}, {"TROUPE_PEER_HEARTBEAT_SECONDS", "0.2"}},
                        std::chrono::seconds(100));
  INFO(r.out << r.err);
  auto lines = probe_lines(r.out);
  const auto stopped = find_line(lines["ps:0"], "PROBE VICTIM ps:0 stops");
  REQUIRE_FALSE(stopped.empty());
  const auto lost = find_line(lines["chief:0"], "PROBE LOST ps:0");
  REQUIRE_FALSE(lost.empty());
  CHECK_THAT(lost, Contains("left=0"));
  const double after = time_in(lost) - time_in(stopped);
  CAPTURE(after);
  // The peer timeout, with 0.5 s of slack for a busy 2-core machine.
  CHECK(after < 2.0 + 0.5);
  // The chief failed while ps:0 was stopped: the launcher names ps:0 as the
  // first cause and exits with 128 + SIGSTOP, as for any frozen task.
  CHECK(r.exit_code == 128 + SIGSTOP);
  CHECK_THAT(r.err, Contains("after task ps:0 (pid ") && Contains("stopped by signal 19 (SIGSTOP)) stopped responding"));
  CHECK_THAT(r.err, Contains("stopping the tasks still running 1 s after the coordinator exited: ps:0 (pid "));
  const auto report = launcher_report(r.err);
  REQUIRE(report.size() >= 2);
  CHECK_THAT(report[0], Contains("task ps:0 (pid ") && Contains("stopped responding first (stopped by signal 19 (SIGSTOP))"));
  CHECK_THAT(report[1], Contains("task chief:0 (pid ") && Contains("exited with status 1"));
}

TEST_CASE("a worker frozen inside a scheduled function: the function runs again elsewhere and counts once",
          "[cluster][parameter_server]") {
  auto r = run_launcher({"--workers", "2", "--ps", "1", "--grace-seconds", "1", "--timeout-seconds", "90", "--", probe,
                         "ps_worker_frozen"},
                        {{"TROUPE_PEER_TIMEOUT_SECONDS", "2"}, {"TROUPE_PEER_HEARTBEAT_SECONDS", "0.2"}},
                        std::chrono::seconds(100));
  INFO(r.out << r.err);
  auto lines = probe_lines(r.out);
  const auto stopped = find_line(lines["worker:1"], "PROBE VICTIM worker:1 stops");
  REQUIRE_FALSE(stopped.empty());
  // 20 functions of +1 and +10 each: the frozen attempt's +1 is discarded.
  CHECK(find_line(lines["chief:0"], "PROBE RESULT") == "PROBE RESULT w=220,220 expected=220");
  const auto finished = find_line(lines["chief:0"], "PROBE FINISHED");
  REQUIRE_FALSE(finished.empty());
  // The rerun waits for the peer timeout (2 s), with slack for a busy machine.
  CHECK(time_in(finished) - time_in(stopped) < 2.0 + 3.0);
  CHECK(r.exit_code == 0);
}

TEST_CASE("a killed coordinator ends every worker and parameter server within the peer timeout",
          "[cluster][parameter_server]") {
  auto r = run_launcher({"--workers", "2", "--ps", "1", "--grace-seconds", "20", "--timeout-seconds", "90", "--", probe,
                         "ps_chief_killed"},
                        {{"TROUPE_PEER_TIMEOUT_SECONDS", "2"}, {"TROUPE_PEER_HEARTBEAT_SECONDS", "0.2"}},
                        std::chrono::seconds(100));
  INFO(r.out << r.err);
  auto lines = probe_lines(r.out);
  const auto died = find_line(lines["chief:0"], "PROBE VICTIM chief:0 dies");
  REQUIRE_FALSE(died.empty());
  for (const char* task : {"worker:0", "worker:1", "ps:0"}) {
    CAPTURE(task);
    const auto served = find_line(lines[task], std::string("PROBE SERVE ") + task + " returned 1");
    REQUIRE_FALSE(served.empty());
    CHECK(time_in(served) - time_in(died) < 2.0 + 3.0);
  }
  CHECK_THAT(r.err, Contains("the coordinator chief:0 was lost"));
  // A worker that ran functions logs its flight recorder of them (the first was fetched, so one did), naming
  // the loss it heard of first: the chief's, or that of ps:0, which ended on the chief's.
  CHECK_THAT(r.err, Contains("flight recorder of worker:") && Contains(" scheduled functions, oldest first")
                      && Contains(" ps_fault_step on /job:worker/"));
  // Nobody lingered until the launcher stopped them.
  CHECK_THAT(r.err, !Contains("stopping the tasks still running"));
}

TEST_CASE("a worker process restarted with its TF_CONFIG rejoins the parameter-server cluster and runs functions "
          "again",
          "[cluster][parameter_server]") {
  const auto addresses = loopback_addresses(free_ports(4));
  auto tf_config = [&](const std::string& type, int index) {
    return R"({"cluster": {"chief": [")" + addresses[0] + R"("], "worker": [")" + addresses[1] + R"(", ")"
           + addresses[2] + R"("], "ps": [")" + addresses[3] + R"("]}, "task": {"type": ")" + type
           + R"(", "index": )" + std::to_string(index) + "}}";
  };
  // The chief waits for the restarted worker's pid in this file.
  const LeaveFile pid_file("troupe_rejoin");
  auto start = [&](const std::string& type, int index) {
    return std::make_unique<TestProcess>(
      std::vector<std::string>{probe, "ps_worker_rejoin", pid_file.path()},
      std::map<std::string, std::string>{{"TF_CONFIG", tf_config(type, index)},
                                         {"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"},
                                         {"TROUPE_LOG", "info"},
                                         {"TROUPE_LOG_COMPONENTS", "net"}});
  };
  auto chief = start("chief", 0);
  auto w0 = start("worker", 0);
  auto old_w1 = start("worker", 1);
  auto ps = start("ps", 0);
  const bool phase1 = chief->read_until([&] { return chief->out().find("PROBE PHASE1") != std::string::npos; },
                                        std::chrono::seconds(60));
  INFO(chief->out() << chief->err());
  REQUIRE(phase1);
  old_w1->send_signal(SIGKILL);
  REQUIRE(old_w1->wait(std::chrono::seconds(10)));
  // Every member saw the first worker:1 go before the new one comes (else it is a duplicate).
  const std::string gone = "the control connection to task worker:1 (pid " + std::to_string(old_w1->pid()) + ") went down";
  for (auto* member : {chief.get(), w0.get(), ps.get()}) {
    const bool noticed = member->read_until([&] { return member->err().find(gone) != std::string::npos; },
                                            std::chrono::seconds(20));
    INFO(member->out() << member->err());
    REQUIRE(noticed);
  }
  auto new_w1 = start("worker", 1);
  const bool joined = new_w1->read_until([&] { return new_w1->out().find("PROBE JOINED") != std::string::npos; },
                                         std::chrono::seconds(30));
  INFO(new_w1->out() << new_w1->err());
  REQUIRE(joined);
  {
    const std::string written = pid_file.path() + ".tmp";
    std::FILE* file = std::fopen(written.c_str(), "w");
    REQUIRE(file != nullptr);
    std::fprintf(file, "%d\n", static_cast<int>(new_w1->pid()));
    std::fclose(file);
    REQUIRE(std::rename(written.c_str(), pid_file.path().c_str()) == 0);
  }
  REQUIRE(chief->wait(std::chrono::seconds(90)));
  REQUIRE(w0->wait(std::chrono::seconds(30)));
  REQUIRE(ps->wait(std::chrono::seconds(30)));
  REQUIRE(new_w1->wait(std::chrono::seconds(30)));
  INFO(chief->out() << chief->err() << new_w1->out() << new_w1->err() << w0->err() << ps->err());
  const auto lines = probe_lines_of(chief->out());
  // The new process ran functions, and every function counted exactly once.
  CHECK_THAT(find_line(lines, "PROBE REJOINED"), Contains("PROBE REJOINED pid=" + std::to_string(new_w1->pid()) + " ran="));
  CHECK_THAT(find_line(lines, "PROBE REJOINED"), !Contains(" ran=0 "));
  const auto result = find_line(lines, "PROBE RESULT");
  std::smatch m;
  REQUIRE(std::regex_match(result, m, std::regex(R"(PROBE RESULT w=([0-9]+),([0-9]+) expected=([0-9]+))")));
  CHECK(m[1] == m[3]);
  CHECK(m[2] == m[3]);
  CHECK_THAT(chief->err(), Contains("took task worker:1 back"));
  CHECK_THAT(new_w1->err(), Contains("task worker:1 rejoined a formed cluster"));
  CHECK(chief->exit_code() == 0);
  // Everyone, the restarted worker included, saw the chief leave and ended.
  CHECK(w0->exit_code() == 0);
  CHECK(ps->exit_code() == 0);
  CHECK(new_w1->exit_code() == 0);
  CHECK_THAT(new_w1->out(), Contains("PROBE SERVE worker:1 returned 0"));
}

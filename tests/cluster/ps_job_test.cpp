// Parameter-server jobs started by hand, one process per task with its own
// TF_CONFIG (chief, 2 workers, 1 ps; no troupe-launch), as an operator
// starts them: flags that differ, a NaN on one worker, a parameter server
// frozen or killed mid-training, a port squatter and a wrong token. Each
// case checks that every task ends on its own within its bound, saying why,
// and never with status 0 when the job failed. Every wait has a deadline.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/free_ports.hpp"
#include "support/skip.hpp"
#include "support/test_process.hpp"

using troupe::testing::free_ports;
using troupe::testing::TestProcess;
using Catch::Matchers::Contains;

namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::string> tasks = {"chief:0", "worker:0", "worker:1", "ps:0"};

/// Four processes started by hand as the tasks of one cluster on loopback.
class HandStartedCluster {
public:
  HandStartedCluster() {
    for (int port : free_ports(4))
      addresses_.push_back("127.0.0.1:" + std::to_string(port));
  }

  /// Starts `task` ("worker:1") running `argv` with the TF_CONFIG of its
  /// task, `environment` and the cluster's other settings.
  void start(const std::string& task, const std::vector<std::string>& argv,
             std::map<std::string, std::string> environment = {}) {
    const auto colon = task.find(':');
    environment["TF_CONFIG"] = R"({"cluster": {"chief": [")" + addresses_[0] + R"("], "worker": [")" + addresses_[1]
                               + R"(", ")" + addresses_[2] + R"("], "ps": [")" + addresses_[3]
                               + R"("]}, "task": {"type": ")" + task.substr(0, colon) + R"(", "index": )"
                               + task.substr(colon + 1) + "}}";
    processes_[task] = std::make_unique<TestProcess>(argv, environment);
  }

  /// "127.0.0.1:<port>" of `task`.
  [[nodiscard]] const std::string& address(const std::string& task) const {
    return addresses_[static_cast<size_t>(std::find(tasks.begin(), tasks.end(), task) - tasks.begin())];
  }

  [[nodiscard]] TestProcess& operator[](const std::string& task) { return *processes_.at(task); }

  /// Waits until every started task in `which` (all when empty) exited;
  /// false when `timeout` passes first. Each exit is seen within about
  /// 20 ms per running task, and its moment kept (ended_at).
  bool wait_all(std::chrono::duration<double> timeout, const std::vector<std::string>& which = {}) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
    for (;;) {
      bool running = false;
      for (auto& [task, process] : processes_) {
        if (!which.empty() && std::find(which.begin(), which.end(), task) == which.end())
          continue;
        if (process->exit_code() < 0)
          (void) process->read_until([&] { return process->exit_code() >= 0; }, std::chrono::milliseconds(20));
        if (process->exit_code() < 0)
          running = true;
        else if (ended_at_.count(task) == 0)
          ended_at_[task] = Clock::now();
      }
      if (!running)
        return true;
      if (Clock::now() >= deadline)
        return false;
    }
  }

  /// When wait_all saw `task` exit.
  [[nodiscard]] Clock::time_point ended_at(const std::string& task) const { return ended_at_.at(task); }

  /// Every task's output, for a failing check.
  [[nodiscard]] std::string outputs() const {
    std::string all;
    for (const auto& [task, process] : processes_)
      all += "--- " + task + " (status " + std::to_string(process->exit_code()) + ")\n" + process->out()
             + process->err();
    return all;
  }

  [[nodiscard]] const std::map<std::string, std::unique_ptr<TestProcess>>& processes() const { return processes_; }

private:
  std::vector<std::string> addresses_;
  std::map<std::string, std::unique_ptr<TestProcess>> processes_;
  std::map<std::string, Clock::time_point> ended_at_;
};

#ifdef TROUPE_TRAIN_PROGRAM
const std::string train_program = TROUPE_TRAIN_PROGRAM;
#else
const std::string train_program;
#endif
const std::string probe = TROUPE_CLUSTER_PROBE;

bool have_training_data() {
  return !train_program.empty() && std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
}

/// train_fashion_mnist --strategy ps with `extra` flags.
std::vector<std::string> training(std::vector<std::string> extra) {
  std::vector<std::string> argv{train_program, "--strategy", "ps", "--quiet", "--out", "/tmp/troupe_ps_job_test_out"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

} // namespace

TEST_CASE("a parameter-server worker started with another optimizer and limit fails every task at start naming both",
          "[cluster][parameter_server]") {
  if (!have_training_data())
    TROUPE_SKIP("train_fashion_mnist or Debian's dataset-fashion-mnist is missing");
  HandStartedCluster cluster;
  const std::vector<std::string> common{"--epochs", "1", "--limit", "4096"};
  for (const auto& task : tasks)
    cluster.start(task, training(task == "worker:1" ? std::vector<std::string>{"--epochs", "1", "--limit", "1000",
                                                                               "--optimizer", "sgd"}
                                                    : common),
                  {{"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "30"}});
  const bool ended = cluster.wait_all(std::chrono::seconds(60));
  INFO(cluster.outputs());
  REQUIRE(ended);
  for (const auto& [task, process] : cluster.processes()) {
    CAPTURE(task);
    CHECK(process->exit_code() == 1);
    CHECK_THAT(process->err(), Contains("check_same_across_workers: the tasks differ: ")
                                 && Contains("\"--limit\" is 4096 on chief:0, but 1000 on worker:1")
                                 && Contains("\"--optimizer\" is adam on chief:0, but sgd on worker:1"));
    CHECK_THAT(process->out(), !Contains("epoch 1/1"));
  }
}

TEST_CASE("a NaN gradient on one parameter-server worker ends every task, each naming the step and the worker",
          "[cluster][parameter_server]") {
  // The chief's program ends by the exception, or catches it and reports it
  // (Runtime::report_job_failure) before it returns 3.
  const std::string scenario = GENERATE("ps_nan", "ps_nan_caught");
  CAPTURE(scenario);
  HandStartedCluster cluster;
  for (const auto& task : tasks)
    cluster.start(task, {probe, scenario});
  const bool ended = cluster.wait_all(std::chrono::seconds(60));
  INFO(cluster.outputs());
  REQUIRE(ended);
  const std::string cause = "failed on worker /job:worker/replica:0/task:1: the gradient at step ";
  CHECK(cluster["chief:0"].exit_code() == 3);
  CHECK_THAT(cluster["chief:0"].out(), Contains("PROBE ERROR ") && Contains(cause)
                                         && Contains(" : Tensor had NaN values"));
  for (const std::string task : {"worker:0", "worker:1", "ps:0"}) {
    CAPTURE(task);
    CHECK(cluster[task].exit_code() == 1);
    CHECK_THAT(cluster[task].err(), Contains("troupe: " + task + " ends: the coordinator chief:0 ended the job with "
                                             "an error: ")
                                      && Contains(cause) && Contains(" : Tensor had NaN values"));
  }
}

TEST_CASE("a parameter server frozen or killed mid-training ends every other task within the peer timeout, "
          "each saying why",
          "[cluster][parameter_server]") {
  if (!have_training_data())
    TROUPE_SKIP("train_fashion_mnist or Debian's dataset-fashion-mnist is missing");
  const int signal = GENERATE(SIGSTOP, SIGKILL);
  CAPTURE(signal);
  HandStartedCluster cluster;
  const double peer_timeout = 2;
  for (const auto& task : tasks)
    cluster.start(task, training({"--epochs", "20", "--limit", "30000"}),
                  {{"TROUPE_PEER_TIMEOUT_SECONDS", "2"}, {"TROUPE_PEER_HEARTBEAT_SECONDS", "0.2"}});
  auto& chief = cluster["chief:0"];
  const bool training_started =
    chief.read_until([&] { return chief.out().find("training an MLP") != std::string::npos; }, std::chrono::seconds(60));
  INFO(cluster.outputs());
  REQUIRE(training_started);
  auto& ps = cluster["ps:0"];
  ps.send_signal(signal);
  const auto at_signal = Clock::now();
  // Every other task ends on its own: a killed ps is seen at once (its
  // connections close), a frozen one after the peer timeout.
  const std::vector<std::string> others{"chief:0", "worker:0", "worker:1"};
  const bool ended = cluster.wait_all(std::chrono::seconds(30), others);
  if (signal == SIGSTOP)
    ps.send_signal(SIGKILL);
  REQUIRE(ps.wait(std::chrono::seconds(10)));
  INFO(cluster.outputs());
  REQUIRE(ended);
  // + slack for a busy 2-core machine (measured: 0.2 s killed, 1.8 s frozen)
  const double bound = (signal == SIGSTOP ? peer_timeout : 0) + 5;
  for (const auto& task : others) {
    const double after = std::chrono::duration<double>(cluster.ended_at(task) - at_signal).count();
    CAPTURE(task, after);
    CHECK(after < bound);
    CHECK(cluster[task].exit_code() == 1);
  }
  CHECK_THAT(chief.err(), Contains("train_fashion_mnist: ") && Contains("/job:ps/replica:0/task:0")
                            && Contains("lost"));
  // Each worker names the lost server: seen itself, or in the chief's
  // farewell when the chief saw it first (both come within the bound). The
  // chief's error is the coordinator's verdict on the server, or, when a
  // worker's read reported the same loss first, that function's failure
  // ("... parameter server /job:ps/.../device:CPU:0 failed: the server's
  // actor terminated (...): its task was lost"), as for the chief above.
  for (const std::string task : {"worker:0", "worker:1"})
    CHECK_THAT(cluster[task].err(),
               Contains("troupe: " + task + " ends: parameter server ps:0 was lost")
                 || (Contains("troupe: " + task + " ends: the coordinator chief:0 ended the job with an error: ")
                     && (Contains("parameter server /job:ps/replica:0/task:0 was lost")
                         || (Contains("parameter server /job:ps/replica:0/task:0/device:CPU:0 failed: the server's "
                                      "actor terminated")
                             && Contains("its task was lost")))));
}

TEST_CASE("a process that accepts a task's port and never speaks keeps no task past 1.5 times the init timeout",
          "[cluster]") {
  HandStartedCluster cluster;
  // The squatter: worker:1's port, a listen queue of one, never accepted, so
  // that later connections' SYNs go unanswered.
  const auto port = std::stoi(cluster.address("worker:1").substr(10));
  const int squatter = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(squatter >= 0);
  const int yes = 1;
  ::setsockopt(squatter, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(squatter, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(squatter, 1) == 0);
  const double init_timeout = 6;
  for (const std::string task : {"chief:0", "worker:0", "ps:0"})
    cluster.start(task, {probe, "join"}, {{"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "6"}});
  const bool ended = cluster.wait_all(std::chrono::seconds(60));
  ::close(squatter);
  INFO(cluster.outputs());
  REQUIRE(ended);
  for (const auto& [task, process] : cluster.processes()) {
    CAPTURE(task, process->seconds());
    CHECK(process->exit_code() == 3);
    CHECK(process->seconds() < 1.5 * init_timeout);
    CHECK_THAT(process->out(), Contains("PROBE ERROR ") && Contains("worker:1")
                                 && Contains("TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS"));
  }
  // The task that dials the squatter says what it saw.
  CHECK_THAT(cluster["ps:0"].out(), Contains("could not reach task worker:1 at " + cluster.address("worker:1")));
}

TEST_CASE("a parameter server with another cluster token fails every task at once naming the token", "[cluster]") {
  HandStartedCluster cluster;
  for (const auto& task : tasks)
    cluster.start(task, {probe, "join"},
                  {{"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "60"},
                   {"TROUPE_CLUSTER_TOKEN", task == "ps:0" ? "another-secret" : "secret"}});
  const bool ended = cluster.wait_all(std::chrono::seconds(60));
  INFO(cluster.outputs());
  REQUIRE(ended);
  for (const auto& [task, process] : cluster.processes()) {
    CAPTURE(task, process->seconds());
    CHECK(process->exit_code() == 3);
    // At once: far from the 60 s the tasks would wait for a task that never comes.
    CHECK(process->seconds() < 15);
    CHECK_THAT(process->out(), Contains("PROBE ERROR ") && Contains("its cluster token differs")
                                 && Contains("TROUPE_CLUSTER_TOKEN"));
    CHECK_THAT(process->out(), !Contains("could not reach") && !Contains("waited in vain"));
  }
}

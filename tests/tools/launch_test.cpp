// End-to-end runs of troupe-launch on launch_probe: every wait has a
// deadline, and a launcher that outlives it is killed and fails the test.
#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "support/event_wait.hpp"
#include "support/test_process.hpp"
#include "tools/tf_config_reader.hpp"

using namespace troupe::testing;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> with_probe(std::vector<std::string> launcher_args,
                                    const std::vector<std::string>& probe_args) {
  launcher_args.push_back("--");
  launcher_args.push_back(TROUPE_LAUNCH_PROBE);
  launcher_args.insert(launcher_args.end(), probe_args.begin(), probe_args.end());
  return launcher_args;
}

std::vector<std::string> launcher_argv(const std::vector<std::string>& args) {
  std::vector<std::string> argv{TROUPE_LAUNCH_PROGRAM};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// Checks that every task saw the same cluster and its own task; returns the cluster.
TfConfig check_reports(const std::map<std::string, ProbeReport>& reports,
                       const std::vector<std::string>& names) {
  REQUIRE(reports.size() == names.size());
  std::optional<TfConfig> first;
  for (const auto& name : names) {
    INFO("task " << name);
    REQUIRE(reports.contains(name));
    const ProbeReport& report = reports.at(name);
    CHECK(report.at("TROUPE_TASK_NAME") == name);
    const TfConfig config = parse_tf_config(report.at("TF_CONFIG"));
    CHECK(config.keys == std::vector<std::string>{"cluster", "task"});
    CHECK(config.type + ":" + std::to_string(config.index) == name);
    if (!first)
      first = config;
    CHECK(config.cluster == first->cluster);
  }
  return *first;
}

std::vector<int> ports_of(const TfConfig& config) {
  std::vector<int> ports;
  for (const auto& [job, addresses] : config.cluster)
    for (const auto& address : addresses) {
      CHECK(address.starts_with("127.0.0.1:"));
      ports.push_back(port_of(address));
    }
  return ports;
}

// `text` with every "(pid 1234)" written "(pid N)", so that messages compare exactly.
std::string mask_pids(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t at = text.find("(pid ", pos);
    if (at == std::string::npos)
      return out + text.substr(pos);
    size_t end = at + 5;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    out += text.substr(pos, at - pos) + (end > at + 5 ? "(pid N" : "(pid ");
    pos = end;
  }
}

// Whether `pid` is gone or a zombie nobody reaped yet.
bool process_gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content;
  if (!std::getline(stat, content))
    return true;
  const size_t close = content.rfind(')');
  return close != std::string::npos && close + 2 < content.size()
         && (content[close + 2] == 'Z' || content[close + 2] == 'X');
}

std::string scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path()
             / ("troupe_launch_test_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

} // namespace

TEST_CASE("troupe-launch gives every worker a distinct port and its own TF_CONFIG", "[launch]") {
  const int workers = GENERATE(2, 4);
  const auto run = run_launcher(with_probe({"--workers", std::to_string(workers)}, {}));
  INFO("stderr:\n" << run.err);
  REQUIRE(run.exit_code == 0);
  std::vector<std::string> names;
  for (int i = 0; i < workers; ++i)
    names.push_back("worker:" + std::to_string(i));
  const TfConfig config = check_reports(probe_reports(run.out), names);
  REQUIRE(config.cluster.size() == 1);
  CHECK(config.cluster[0].first == "worker");
  const std::vector<int> ports = ports_of(config);
  REQUIRE(ports.size() == static_cast<size_t>(workers));
  CHECK(std::set<int>(ports.begin(), ports.end()).size() == ports.size());
  for (int port : ports)
    CHECK(port > 0);

  std::string listed;
  for (int port : ports)
    listed += (listed.empty() ? "" : ", ") + std::to_string(port);
  CHECK_THAT(run.err, Catch::StartsWith("troupe-launch: starting " + std::to_string(workers)
                                        + " workers on 127.0.0.1 (ports " + listed + ")\n"));
}

TEST_CASE("troupe-launch prefixes every line of every task and flushes partial lines", "[launch]") {
  constexpr int lines = 300;
  const auto run = run_launcher(
    with_probe({"--workers", "4"}, {"--lines", std::to_string(lines), "--partial", "no newline"}));
  INFO("stderr:\n" << run.err);
  REQUIRE(run.exit_code == 0);
  const std::string filler(100, 'x');
  std::map<std::string, int> counted;
  std::map<std::string, int> partials;
  for (const auto& line : split_lines(run.out)) {
    INFO("stdout line: " << line);
    REQUIRE_THAT(line, Catch::Matches(R"(\[worker:[0-3]\] .*)"));
    const std::string task = line.substr(1, 8);
    const std::string rest = line.substr(11);
    if (rest.starts_with("worker:")) {
      // The line's own task matches its prefix: no line mixes two tasks.
      CHECK(rest == task + " line " + std::to_string(counted[task]++) + " " + filler);
    } else if (rest == "no newline") {
      ++partials[task];
    } else {
      CHECK_THAT(rest, Catch::Matches("(TF_CONFIG|TROUPE_TASK_NAME|TROUPE_CLUSTER_TOKEN|PID|CUDA_VISIBLE_DEVICES)=.*"));
    }
  }
  for (int i = 0; i < 4; ++i) {
    const std::string task = "worker:" + std::to_string(i);
    CHECK(counted[task] == lines);
    CHECK(partials[task] == 1);
  }
  CHECK(run.out.ends_with("\n"));
  for (const auto& line : split_lines(run.err)) {
    INFO("stderr line: " << line);
    if (!line.starts_with("troupe-launch: ")) {
      const std::string task = line.substr(1, 8);
      CHECK(line == "[" + task + "] probe stderr from " + task);
    }
  }
}

TEST_CASE("troupe-launch exits with a failed task's status and names the task", "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "3"}, {"--exit", "worker:1", "3"}));
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 3);
  CHECK_THAT(mask_pids(run.err),
             Catch::Contains("troupe-launch: task worker:1 (pid N) exited with status 3\n"));
  CHECK_THAT(run.err, !Catch::Contains("task worker:0 (pid"));
  CHECK_THAT(run.err, !Catch::Contains("task worker:2 (pid"));
}

TEST_CASE("troupe-launch reports a task killed by a signal and exits with 128 plus the signal",
          "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "2"}, {"--signal", "worker:0", "9"}));
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 128 + 9);
  CHECK_THAT(mask_pids(run.err),
             Catch::Contains("task worker:0 (pid N) was killed by signal 9 (SIGKILL)\n"));
}

TEST_CASE("troupe-launch kills a hanging task after the grace period when another task fails",
          "[launch]") {
  constexpr double grace = 1;
  const auto run = run_launcher(with_probe({"--workers", "2", "--grace-seconds", "1"},
                                           {"--hang", "worker:0", "--exit", "worker:1", "4"}));
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 4);
  CHECK(run.seconds < grace + 5);
  CHECK_THAT(
    mask_pids(run.err),
    Catch::Contains("task worker:1 (pid N) exited with status 4; the other tasks get 1 s"));
  CHECK_THAT(mask_pids(run.err),
             Catch::Contains("troupe-launch: task worker:0 (pid N) was killed by troupe-launch "
                             "after the grace period (SIGTERM)\n"));
  // The first line of the verdict is the task that failed first.
  const auto first = run.err.find("exited with status 4\n");
  const auto second = run.err.find("was killed by troupe-launch");
  CHECK(first < second);
}

TEST_CASE("troupe-launch names a stopped task as the first cause when another task fails after it",
          "[launch]") {
  // Worker 1 stops itself (SIGSTOP, a frozen process); worker 0 fails once it
  // sees worker 1 stopped, as a troupe task fails when a peer stops responding.
  const std::string dir = scratch_dir("stopped");
  const std::string pid_file = dir + "/stopped.pid";
  const auto run = run_launcher(with_probe({"--workers", "2", "--grace-seconds", "1"},
                                           {"--stop", "worker:1", pid_file, "--wait-stopped", "worker:0",
                                            pid_file, "--exit", "worker:0", "10"}));
  std::filesystem::remove_all(dir);
  INFO("stderr:\n" << run.err);
  const std::string err = mask_pids(run.err);
  CHECK(run.exit_code == 128 + SIGSTOP);
  CHECK_THAT(err, Catch::Contains("troupe-launch: task worker:1 (pid N) was stopped by signal 19 (SIGSTOP) and no "
                                  "longer responds"));
  CHECK_THAT(err, Catch::Contains("task worker:0 (pid N) exited with status 10 after task worker:1 (pid N, stopped "
                                  "by signal 19 (SIGSTOP)) stopped responding; the other tasks get 1 s"));
  // The verdict leads with the stopped task, then the task that failed because of it.
  const auto cause = err.find("troupe-launch: task worker:1 (pid N) stopped responding first (stopped by signal 19 "
                              "(SIGSTOP)), then was killed by troupe-launch after the grace period (SIGTERM)\n");
  const auto consequence = err.find("troupe-launch: task worker:0 (pid N) exited with status 10\n");
  REQUIRE(cause != std::string::npos);
  REQUIRE(consequence != std::string::npos);
  CHECK(cause < consequence);
}

TEST_CASE("troupe-launch sends SIGKILL to a task that ignores SIGTERM", "[launch]") {
  const std::string dir = scratch_dir("sigkill");
  const std::string ready = dir + "/ready";
  const auto run = run_launcher(
    with_probe({"--workers", "2", "--grace-seconds", "0"},
               {"--ignore-term", "worker:0", "--ready-file", "worker:0", ready, "--hang",
                "worker:0", "--wait-file", "worker:1", ready, "--exit", "worker:1", "5"}));
  std::filesystem::remove_all(dir);
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 5);
  CHECK(run.seconds < 0 + 2 + 5);
  CHECK_THAT(
    mask_pids(run.err),
    Catch::Contains(
      "task worker:0 (pid N) was killed by troupe-launch after the grace period (SIGKILL)"));
}

TEST_CASE("troupe-launch stops the cluster at the deadline and names the tasks still running",
          "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "2", "--timeout-seconds", "1"},
                                           {"--hang", "all", "--partial", "half"}));
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 124);
  CHECK(run.seconds < 1 + 5);
  CHECK_THAT(mask_pids(run.err),
             Catch::Contains("did not finish within --timeout-seconds 1; stopping the tasks still "
                             "running: worker:0 (pid N), worker:1 (pid N)"));
  CHECK_THAT(run.err, Catch::Contains("task worker:0"));
  CHECK_THAT(mask_pids(run.err),
             Catch::Contains("task worker:1 (pid N) was killed by troupe-launch at the "
                             "--timeout-seconds deadline (SIGTERM)"));
  // Output the killed tasks left without a newline still comes out.
  CHECK_THAT(run.out, Catch::Contains("[worker:0] half\n"));
  CHECK_THAT(run.out, Catch::Contains("[worker:1] half\n"));
}

TEST_CASE("troupe-launch lays out a chief, workers and parameter servers as TF does", "[launch]") {
  const auto run = run_launcher(with_probe({"--chief", "--workers", "2", "--ps", "1"}, {}));
  INFO("stderr:\n" << run.err);
  REQUIRE(run.exit_code == 0);
  const TfConfig config =
    check_reports(probe_reports(run.out), {"chief:0", "worker:0", "worker:1", "ps:0"});
  REQUIRE(config.cluster.size() == 3);
  CHECK(config.cluster[0].first == "chief");
  CHECK(config.cluster[0].second.size() == 1);
  CHECK(config.cluster[1].first == "worker");
  CHECK(config.cluster[1].second.size() == 2);
  CHECK(config.cluster[2].first == "ps");
  CHECK(config.cluster[2].second.size() == 1);
  const auto ports = ports_of(config);
  CHECK(std::set<int>(ports.begin(), ports.end()).size() == 4);
  CHECK_THAT(run.err, Catch::StartsWith(
                        "troupe-launch: starting 1 chief, 2 workers and 1 parameter server on "
                        "127.0.0.1 (ports "));
}

TEST_CASE("troupe-launch --ps adds a chief and names chief, worker and ps tasks in every TF_CONFIG", "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "2", "--ps", "1"}, {}));
  INFO("stderr:\n" << run.err);
  REQUIRE(run.exit_code == 0);
  // probe_reports reads the "[chief:0] " ... "[ps:0] " prefixes.
  const TfConfig config = check_reports(probe_reports(run.out), {"chief:0", "worker:0", "worker:1", "ps:0"});
  REQUIRE(config.cluster.size() == 3);
  CHECK(config.cluster[0].first == "chief");
  CHECK(config.cluster[1].first == "worker");
  CHECK(config.cluster[2].first == "ps");
  CHECK_THAT(run.err, Catch::StartsWith("troupe-launch: starting 1 chief, 2 workers and 1 parameter server"));
}

TEST_CASE("troupe-launch ends a ps cluster with its chief: the others get the grace period, are stopped and named, "
          "and the status is the chief's",
          "[launch]") {
  const int chief_status = GENERATE(0, 3);
  constexpr double grace = 1;
  const auto run = run_launcher(with_probe({"--workers", "1", "--ps", "1", "--grace-seconds", "1"},
                                           {"--hang", "worker:0", "--hang", "ps:0", "--exit", "chief:0",
                                            std::to_string(chief_status)}));
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == chief_status);
  CHECK(run.seconds < grace + 5);
  const std::string err = mask_pids(run.err);
  CHECK_THAT(err, Catch::Contains("troupe-launch: the coordinator, task chief:0 (pid N), exited with status "
                                  + std::to_string(chief_status) + "; the other tasks get 1 s to exit before SIGTERM\n"));
  CHECK_THAT(err, Catch::Contains("troupe-launch: stopping the tasks still running 1 s after the coordinator exited: "
                                  "worker:0 (pid N), ps:0 (pid N)\n"));
  CHECK_THAT(err, Catch::Contains("task ps:0 (pid N) was killed by troupe-launch after the coordinator's exit and the "
                                  "grace period (SIGTERM)"));
}

TEST_CASE("troupe-launch lets a ps cluster go on when a worker fails before the chief", "[launch]") {
  // Worker 1 fails; the chief exits 0 once the launcher has reaped it, as a
  // coordinator finishes its functions on the other workers.
  const std::string dir = scratch_dir("ps_worker_fails");
  const std::string pid_file = dir + "/worker1.pid";
  const auto run = run_launcher(with_probe({"--workers", "2", "--ps", "1", "--grace-seconds", "20"},
                                           {"--pid-file", "worker:1", pid_file, "--exit", "worker:1", "5",
                                            "--wait-reaped", "chief:0", pid_file, "--hang", "worker:0", "--hang",
                                            "ps:0"}));
  std::filesystem::remove_all(dir);
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 0);
  const std::string err = mask_pids(run.err);
  CHECK_THAT(err, Catch::Contains("troupe-launch: task worker:1 (pid N) exited with status 5; the coordinator "
                                  "chief:0 goes on with the other workers\n"));
  // The chief's exit, not the worker's failure, started the grace period.
  CHECK_THAT(err, !Catch::Contains("to finish before SIGTERM"));
  CHECK_THAT(err, Catch::Contains("the coordinator, task chief:0 (pid N), exited with status 0"));
}

TEST_CASE("troupe-launch stops a ps cluster after the grace period when a ps task fails", "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "1", "--ps", "1", "--grace-seconds", "1"},
                                           {"--hang", "chief:0", "--hang", "worker:0", "--exit", "ps:0", "4"}));
  INFO("stderr:\n" << run.err);
  // The chief did not exit on its own: the failed ps task's status.
  CHECK(run.exit_code == 4);
  const std::string err = mask_pids(run.err);
  CHECK_THAT(err, Catch::Contains("task ps:0 (pid N) exited with status 4; the other tasks get 1 s to finish before "
                                  "SIGTERM"));
  CHECK_THAT(err, Catch::Contains("task chief:0 (pid N) was killed by troupe-launch after the grace period (SIGTERM)"));
}

TEST_CASE("troupe-launch gives the evaluator a task but no place in the cluster", "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "1", "--evaluator"}, {}));
  INFO("stderr:\n" << run.err);
  REQUIRE(run.exit_code == 0);
  const TfConfig config = check_reports(probe_reports(run.out), {"worker:0", "evaluator:0"});
  REQUIRE(config.cluster.size() == 1);
  CHECK(config.cluster[0].first == "worker");
  CHECK(config.job("evaluator").empty());
}

TEST_CASE("troupe-launch gives every task the same fresh 32 hex digit cluster token", "[launch]") {
  std::vector<std::string> tokens;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto run = run_launcher(with_probe({"--workers", "3"}, {}));
    REQUIRE(run.exit_code == 0);
    const auto reports = probe_reports(run.out);
    REQUIRE(reports.size() == 3);
    const std::string token = reports.at("worker:0").at("TROUPE_CLUSTER_TOKEN");
    CHECK_THAT(token, Catch::Matches("[0-9a-f]{32}"));
    for (const auto& [name, report] : reports)
      CHECK(report.at("TROUPE_CLUSTER_TOKEN") == token);
    tokens.push_back(token);
  }
  CHECK(tokens[0] != tokens[1]);
}

TEST_CASE("troupe-launch passes a given TROUPE_CLUSTER_TOKEN through to every task", "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "2", "--chief"}, {}),
                                {{"TROUPE_CLUSTER_TOKEN", "my-token-42"}});
  REQUIRE(run.exit_code == 0);
  const auto reports = probe_reports(run.out);
  REQUIRE(reports.size() == 3);
  for (const auto& [name, report] : reports)
    CHECK(report.at("TROUPE_CLUSTER_TOKEN") == "my-token-42");
}

TEST_CASE("troupe-launch rejects a bad command line with status 2 naming the flag", "[launch]") {
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const auto c = GENERATE(values<Case>({
    {{"--workers", "abc", "prog"}, "--workers"},
    {{"--bogus", "prog"}, "--bogus"},
    {{"--grace-seconds", "-1", "prog"}, "--grace-seconds"},
    {{"--timeout-seconds"}, "--timeout-seconds"},
    {{"--base-port", "2000", "prog"}, "--base-port"},
    {{"--attach", "--evaluator", "prog"}, "--evaluator"},
    {{"--workers", "2"}, "no program to launch"},
  }));
  const auto run = run_launcher(c.args);
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::StartsWith("troupe-launch: ") && Catch::Contains(c.flag));
  CHECK(run.out.empty());
}

TEST_CASE("troupe-launch prints its usage for --help", "[launch]") {
  const auto run = run_launcher({"--help"});
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out,
             Catch::StartsWith("usage: troupe-launch") && Catch::Contains("--grace-seconds"));
}

TEST_CASE("troupe-launch fails with status 127 when the program cannot be started", "[launch]") {
  const auto run = run_launcher({"--workers", "2", "--", "/nonexistent/troupe-program"});
  INFO("stderr:\n" << run.err);
  CHECK(run.exit_code == 127);
  CHECK_THAT(run.err,
             Catch::Contains(
               "cannot start task worker:0: cannot run /nonexistent/troupe-program: No such file"));
}

TEST_CASE("troupe-launch forwards SIGTERM to every task", "[launch]") {
  TestProcess launcher(launcher_argv(with_probe({"--workers", "2"}, {"--hang", "all"})));
  const bool started = launcher.read_until(
    [&] {
      return probe_reports(launcher.out()).size() == 2
             && probe_reports(launcher.out()).at("worker:0").contains("PID")
             && probe_reports(launcher.out()).at("worker:1").contains("PID");
    },
    20s);
  INFO("stdout:\n" << launcher.out() << "\nstderr:\n" << launcher.err());
  REQUIRE(started);
  launcher.send_signal(SIGTERM);
  REQUIRE(launcher.wait(10s));
  CHECK(launcher.exit_code() == 128 + SIGTERM);
  CHECK_THAT(launcher.err(), Catch::Contains("forwarding signal 15 (SIGTERM)"));
  CHECK_THAT(mask_pids(launcher.err()),
             Catch::Contains("task worker:0 (pid N) was killed by signal 15 (SIGTERM)"));
  CHECK_THAT(mask_pids(launcher.err()),
             Catch::Contains("task worker:1 (pid N) was killed by signal 15 (SIGTERM)"));
}

TEST_CASE("troupe-launch takes its tasks down when it is killed itself", "[launch]") {
  TestProcess launcher(launcher_argv(with_probe({"--workers", "2"}, {"--hang", "all"})));
  auto pids = [&] {
    std::vector<int> result;
    for (const auto& [name, report] : probe_reports(launcher.out()))
      if (report.contains("PID"))
        result.push_back(std::stoi(report.at("PID")));
    return result;
  };
  const bool started = launcher.read_until([&] { return pids().size() == 2; }, 20s);
  INFO("stdout:\n" << launcher.out() << "\nstderr:\n" << launcher.err());
  REQUIRE(started);
  const std::vector<int> children = pids();
  launcher.send_signal(SIGKILL);
  REQUIRE(launcher.wait(10s));
  CHECK(launcher.exit_code() == 128 + SIGKILL);
  // PR_SET_PDEATHSIG: the kernel kills the orphans; give it a deadline.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (int pid : children) {
    INFO("task pid " << pid);
    (void)troupe::testing::wait_for_exit(pid, deadline);
    if (!process_gone(pid))
      ::kill(pid, SIGKILL);
    CHECK(process_gone(pid));
  }
}

TEST_CASE("troupe-launch --gpus-per-worker gives the chief and each worker GPUs of their own, and ps tasks none",
          "[launch]") {
  // troupe-launch's own CUDA_VISIBLE_DEVICES names the GPUs it hands out.
  const auto run = run_launcher(with_probe({"--chief", "--workers", "2", "--ps", "1", "--gpus-per-worker", "2"}, {}),
                                {{"CUDA_VISIBLE_DEVICES", "7,6,5,4,3,2"}});
  INFO("stderr:\n" << run.err);
  REQUIRE(run.exit_code == 0);
  const auto reports = probe_reports(run.out);
  REQUIRE(reports.size() == 4);
  CHECK(reports.at("chief:0").at("CUDA_VISIBLE_DEVICES") == "7,6");
  CHECK(reports.at("worker:0").at("CUDA_VISIBLE_DEVICES") == "5,4");
  CHECK(reports.at("worker:1").at("CUDA_VISIBLE_DEVICES") == "3,2");
  CHECK(reports.at("ps:0").at("CUDA_VISIBLE_DEVICES").empty());
}

TEST_CASE("troupe-launch --gpus-per-worker refuses more GPUs than there are, naming the numbers", "[launch]") {
  const auto run = run_launcher(with_probe({"--workers", "3", "--gpus-per-worker", "1"}, {}),
                                {{"CUDA_VISIBLE_DEVICES", "0,1"}});
  CHECK(run.exit_code == 1);
  CHECK(run.out.empty());
  CHECK_THAT(run.err, Catch::Contains("--gpus-per-worker 1 needs 3 GPUs for 3 chief and worker tasks, but "
                                      "CUDA_VISIBLE_DEVICES=0,1 has 2"));
}

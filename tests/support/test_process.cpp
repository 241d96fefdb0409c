#include "support/test_process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

extern char** environ;

namespace troupe::testing {

namespace {

using Clock = std::chrono::steady_clock;

bool launcher_variable(std::string_view name) {
  for (std::string_view prefix :
       {"OMPI_", "PMI_", "PMIX_", "SLURM_", "SLURMD_", "MPI_LOCAL", "TROUPE_"})
    if (name.starts_with(prefix))
      return true;
  return name == "TF_CONFIG";
}

std::vector<std::string> test_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    if (!launcher_variable(name) && !extra.contains(std::string(name)))
      result.emplace_back(text);
  }
  for (const auto& [name, value] : extra)
    result.push_back(name + "=" + value);
  return result;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (const auto& s : strings)
    result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

int code_of(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

} // namespace

TestProcess::TestProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& environment)
  : start_(Clock::now()) {
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                      | POSIX_SPAWN_SETSIGDEF);
  ::posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  ::sigemptyset(&none);
  ::posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  ::sigemptyset(&defaults);
  for (int signal : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD})
    ::sigaddset(&defaults, signal);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);

  const std::vector<std::string> env = test_environment(environment);
  auto c_argv = c_strings(argv);
  auto c_env = c_strings(env);
  const int rc = ::posix_spawn(&pid_, c_argv[0], &actions, &attr, c_argv.data(), c_env.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("posix_spawn " + argv[0] + ": " + std::strerror(rc));
  }
  // Readable when the process exits, so no wait needs a sleep.
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
}

TestProcess::~TestProcess() {
  if (exit_code_ < 0 && pid_ > 0)
    kill_and_reap();
  for (int fd : {out_fd_, err_fd_, pidfd_})
    if (fd >= 0)
      ::close(fd);
}

bool TestProcess::step(Clock::time_point deadline) {
  std::vector<pollfd> fds;
  for (int fd : {out_fd_, err_fd_})
    if (fd >= 0)
      fds.push_back({fd, POLLIN, 0});
  const bool watch_exit = exit_code_ < 0 && pidfd_ >= 0;
  if (watch_exit)
    fds.push_back({pidfd_, POLLIN, 0});
  const auto now = Clock::now();
  if (now >= deadline)
    return false;
  int timeout_ms =
    static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count());
  if (exit_code_ < 0 && pidfd_ < 0)
    timeout_ms = std::min(timeout_ms, 10); // no pidfd: look at the process every 10 ms
  if (!fds.empty())
    ::poll(fds.data(), fds.size(), timeout_ms);
  for (auto [fd, text] : {std::pair{&out_fd_, &out_}, std::pair{&err_fd_, &err_}}) {
    if (*fd < 0)
      continue;
    pollfd p{*fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0)
      continue;
    char buffer[65536];
    const ssize_t n = ::read(*fd, buffer, sizeof buffer);
    if (n > 0) {
      text->append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      ::close(*fd);
      *fd = -1;
    }
  }
  if (exit_code_ < 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_code_ = code_of(status);
      seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
    }
  }
  return true;
}

bool TestProcess::read_until(const std::function<bool()>& done,
                             std::chrono::duration<double> timeout) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  while (!done()) {
    if (out_fd_ < 0 && err_fd_ < 0 && exit_code_ >= 0)
      return done();
    if (!step(deadline))
      return false;
  }
  return true;
}

bool TestProcess::wait(std::chrono::duration<double> timeout) {
  const bool finished =
    read_until([&] { return out_fd_ < 0 && err_fd_ < 0 && exit_code_ >= 0; }, timeout);
  if (!finished)
    kill_and_reap();
  return finished;
}

void TestProcess::send_signal(int signal) const {
  if (exit_code_ < 0 && pid_ > 0)
    ::kill(pid_, signal);
}

void TestProcess::kill_and_reap() {
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  exit_code_ = code_of(status);
  seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
}

RunResult run_launcher(const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& environment,
                       std::chrono::duration<double> timeout) {
  std::vector<std::string> argv{TROUPE_LAUNCH_PROGRAM};
  argv.insert(argv.end(), args.begin(), args.end());
  TestProcess process(argv, environment);
  const bool finished = process.wait(timeout);
  INFO("stdout:\n" << process.out() << "\nstderr:\n" << process.err());
  REQUIRE(finished);
  return {process.exit_code(), process.out(), process.err(), process.seconds()};
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

std::map<std::string, ProbeReport> probe_reports(const std::string& out) {
  std::map<std::string, ProbeReport> reports;
  for (const auto& line : split_lines(out)) {
    if (!line.starts_with('['))
      continue;
    const size_t close = line.find("] ");
    const size_t eq = line.find('=');
    if (close == std::string::npos || eq == std::string::npos || eq < close)
      continue;
    const std::string key = line.substr(close + 2, eq - close - 2);
    if (key == "TF_CONFIG" || key == "TROUPE_TASK_NAME" || key == "TROUPE_CLUSTER_TOKEN"
        || key == "PID" || key == "CUDA_VISIBLE_DEVICES")
      reports[line.substr(1, close - 1)][key] = line.substr(eq + 1);
  }
  return reports;
}

ProbeReport probe_report(const std::string& out) {
  ProbeReport report;
  for (const auto& line : split_lines(out))
    if (const size_t eq = line.find('='); eq != std::string::npos)
      report[line.substr(0, eq)] = line.substr(eq + 1);
  return report;
}

} // namespace troupe::testing

#include "child_process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace troupe::launch {

namespace {

std::pair<UniqueFd, UniqueFd> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (const auto& s : strings)
    result.push_back(const_cast<char*>(s.c_str()));
  result.push_back(nullptr);
  return result;
}

std::string_view variable_name(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(pid_t parent, const sigset_t& original_mask, int out, int err,
                             int status, char* const* argv, char* const* envp) {
  // The launcher's handlers would write into its own signal pipe.
  for (int signal : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE})
    ::signal(signal, SIG_DFL);
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The launcher may have died before prctl took effect.
  if (::getppid() != parent)
    ::_exit(127);
  if (::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0) {
    const int error = errno;
    (void)!::write(status, &error, sizeof error);
    ::_exit(127);
  }
  ::sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  ::execvpe(argv[0], argv, envp);
  const int error = errno;
  (void)!::write(status, &error, sizeof error);
  ::_exit(127);
}

} // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& environment) {
  auto [out_read, out_write] = make_pipe();
  auto [err_read, err_write] = make_pipe();
  // Closed by a successful exec (O_CLOEXEC); carries errno when exec fails.
  auto [status_read, status_write] = make_pipe();
  std::vector<char*> c_argv = c_strings(argv);
  std::vector<char*> c_envp = c_strings(environment);

  // Signals stay blocked across fork so that none reaches the child while it
  // still runs the launcher's handlers.
  sigset_t all;
  sigset_t original;
  ::sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &original);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0)
    exec_child(parent, original, out_write.get(), err_write.get(), status_write.get(),
               c_argv.data(), c_envp.data());
  const int fork_errno = errno;
  ::sigprocmask(SIG_SETMASK, &original, nullptr);
  if (pid < 0)
    throw std::runtime_error("cannot start " + argv[0]
                             + ": fork failed: " + std::strerror(fork_errno));
  pid_ = pid;
  // Also here, so that signal_group() works before the child got to run.
  ::setpgid(pid, pid);

  out_write.reset();
  err_write.reset();
  status_write.reset();
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(status_read.get(), &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    while (::waitpid(pid, &wait_status_, 0) < 0 && errno == EINTR) {}
    exited_ = true;
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(exec_errno));
  }
  for (int fd : {out_read.get(), err_read.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  stdout_ = std::move(out_read);
  stderr_ = std::move(err_read);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
  : pid_(std::exchange(other.pid_, -1)), exited_(other.exited_), wait_status_(other.wait_status_),
    stop_signal_(other.stop_signal_),
    stdout_(std::move(other.stdout_)), stderr_(std::move(other.stderr_)) {}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0 || exited_)
    return;
  signal_group(SIGKILL);
  while (::waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {}
}

void ChildProcess::signal_group(int signal) const noexcept {
  if (pid_ > 0 && !exited_)
    ::kill(-pid_, signal);
}

bool ChildProcess::poll_exit() noexcept {
  if (exited_ || pid_ <= 0)
    return exited_;
  // One waitpid() reports one change; a child may have stopped, continued
  // and exited since the last call.
  for (int changes = 0; changes < 16 && !exited_; ++changes) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG | WUNTRACED | WCONTINUED);
    if (r != pid_)
      break;
    if (WIFSTOPPED(status)) {
      stop_signal_ = WSTOPSIG(status);
    } else if (WIFCONTINUED(status)) {
      stop_signal_ = 0;
    } else {
      exited_ = true;
      stop_signal_ = 0;
      wait_status_ = status;
    }
  }
  return exited_;
}

std::vector<std::string> make_environment(const std::vector<std::string>& overrides,
                                          const std::vector<std::string>& removed) {
  auto replaced = [&](std::string_view name) {
    return std::find(removed.begin(), removed.end(), name) != removed.end()
           || std::any_of(overrides.begin(), overrides.end(),
                          [&](const std::string& entry) { return variable_name(entry) == name; });
  };
  std::vector<std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry)
    if (!replaced(variable_name(*entry)))
      result.emplace_back(*entry);
  result.insert(result.end(), overrides.begin(), overrides.end());
  return result;
}

} // namespace troupe::launch

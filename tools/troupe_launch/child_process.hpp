#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

#include "unique_fd.hpp"

namespace troupe::launch {

/// One task's process: started in its own process group, with stdout and
/// stderr on non-blocking pipes this process reads.
///
/// The child gets PR_SET_PDEATHSIG(SIGKILL), so it dies when the launcher
/// dies, even by SIGKILL. The launcher reaps it with poll_exit(); a
/// ChildProcess destroyed while its child runs kills the child's process
/// group and waits for it.
class ChildProcess {
public:
  /// Starts `argv` (argv[0] searched in PATH) with exactly `environment`
  /// ("NAME=value" entries). Throws std::runtime_error naming the program
  /// when it cannot be executed.
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& environment);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess();

  // -- properties -----------------------------------------------------------------

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  /// The read ends of the child's stdout and stderr; reset() one at EOF.
  [[nodiscard]] UniqueFd& stdout_pipe() noexcept { return stdout_; }
  [[nodiscard]] UniqueFd& stderr_pipe() noexcept { return stderr_; }
  [[nodiscard]] const UniqueFd& stdout_pipe() const noexcept { return stdout_; }
  [[nodiscard]] const UniqueFd& stderr_pipe() const noexcept { return stderr_; }

  [[nodiscard]] bool exited() const noexcept { return exited_; }

  /// The signal that stopped the child (SIGSTOP, SIGTSTP, ...) while it is
  /// stopped; 0 while it runs or after it exited.
  [[nodiscard]] int stop_signal() const noexcept { return stop_signal_; }

  /// The status waitpid() returned; valid once exited().
  [[nodiscard]] int wait_status() const noexcept { return wait_status_; }

  // -- control --------------------------------------------------------------------

  /// Sends `signal` to the child's process group (its own children too).
  void signal_group(int signal) const noexcept;

  /// Reaps the child without blocking, and notes whether it stopped or
  /// continued since the last call; returns exited().
  bool poll_exit() noexcept;

private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int wait_status_ = 0;
  int stop_signal_ = 0;
  UniqueFd stdout_;
  UniqueFd stderr_;
};

/// This process's environment with `overrides` ("NAME=value") replacing or
/// adding entries and the variables in `removed` left out.
[[nodiscard]] std::vector<std::string>
make_environment(const std::vector<std::string>& overrides,
                 const std::vector<std::string>& removed = {});

} // namespace troupe::launch

#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "child_process.hpp"
#include "line_prefixer.hpp"
#include "signal_pipe.hpp"
#include "tf_config.hpp"

namespace troupe::launch {

/// One task to start: its id and the child's complete environment.
struct TaskLaunch {
  TaskId id;
  std::vector<std::string> environment;
};

/// How the supervisor stops a failing cluster.
struct SupervisorOptions {
  double grace_seconds = 10;     ///< after the first failure, before SIGTERM
  double timeout_seconds = 0;    ///< whole-cluster deadline; 0: none
  double kill_after_seconds = 2; ///< from SIGTERM to SIGKILL
  /// The coordinator of a parameter-server cluster ("chief:0"), whose exit
  /// ends the job and whose status is the job's; empty for other clusters.
  std::string coordinator;
};

/// Runs the tasks of a local cluster as children and waits for all of them.
///
/// 1. Starts every task (ChildProcess): own process group, PDEATHSIG.
/// 2. Polls the children's stdout and stderr pipes and a signal pipe in one
///    loop; whole lines go out on this process's stdout and stderr, prefixed
///    "[worker:0] ". Partial last lines are flushed at EOF.
/// 3. When the first task fails, the others get grace_seconds to finish on
///    their own (the troupe runtime makes them fail fast when a peer dies),
///    then SIGTERM to their process groups and SIGKILL kill_after_seconds
///    later. At timeout_seconds every task still running is stopped alike.
/// 4. SIGINT and SIGTERM sent to the launcher are forwarded to every task;
///    tasks still running grace_seconds later get SIGKILL.
/// 5. A task that stops (SIGSTOP, SIGTSTP: waitpid's WUNTRACED) is named at
///    once. When another task fails while it is stopped, the stopped one is
///    the first cause (its peers failed because it stopped responding): it
///    leads the verdict, and the launcher exits with 128 + its stop signal,
///    as a shell reports a stopped job. Tasks still stopped at SIGTERM time
///    also get SIGCONT, so that the SIGTERM takes effect.
/// 6. A parameter-server cluster (options.coordinator set) ends with its
///    coordinator: once it exits, 0 or not, the other tasks get grace_seconds
///    to follow it (the runtime makes them), then are stopped as in 3 and
///    named. A worker that fails before the coordinator is reported and the
///    cluster goes on (the coordinator runs its functions on the other
///    workers); a parameter server that fails stops the cluster as in 3,
///    since the coordinator cannot go on without it. The exit status is 0
///    when the coordinator exited 0. When it failed, a ps task stopped
///    (frozen) at that moment, or killed by a signal before it, is the first
///    cause and the status is 128 + that signal, as in 5 (a worker is not:
///    the coordinator goes on without one); otherwise the status is the
///    coordinator's.
/// 7. Once all children are reaped, prints one line per failed task to
///    stderr, the first cause first, and returns the exit status: 0, the
///    first cause's status (128 + signal), or 124 when the deadline stopped a
///    healthy cluster.
class Supervisor {
public:
  explicit Supervisor(SupervisorOptions options) : options_(options) {}

  /// Starts `program` once per task and supervises the cluster to the end;
  /// returns the launcher's exit status (127 when a task cannot start).
  /// Blocks; call from the main thread.
  [[nodiscard]] int run(const std::vector<std::string>& program,
                        const std::vector<TaskLaunch>& tasks);

private:
  using Clock = std::chrono::steady_clock;

  enum class StopReason { none, failure, timeout, signal, coordinator_exited };

  struct Task {
    TaskId id;
    ChildProcess child;
    LinePrefixer out;
    LinePrefixer err;
    bool stopped_by_launcher = false; ///< got SIGTERM or SIGKILL from the grace or deadline logic
    int failure_order = -1;           ///< position among failed tasks; -1 while not failed
    /// The signal that had stopped (frozen) this task when the first task
    /// failed: the first cause, whose peers failed because it stopped
    /// responding. 0 when it was running.
    int froze_by = 0;
  };

  // -- the loop -----------------------------------------------------------------

  void reap();
  void note_stop_change(Task& task, int stop_signal_before);
  void on_exit(Task& task);
  void on_coordinator_exit(Task& task);
  /// Marks every task stopped now (SIGSTOP) as a first cause; "ps:0 (pid 7,
  /// stopped by signal 19 (SIGSTOP))" for each, or empty.
  std::string note_frozen_tasks();
  /// Whether `task` stopping can have failed the job: any task, but in a
  /// parameter-server cluster not a worker (the coordinator goes on without it).
  [[nodiscard]] bool may_be_first_cause(const Task& task) const;
  [[nodiscard]] bool is_coordinator(const Task& task) const { return task.id.name() == options_.coordinator; }
  void check_deadlines(Clock::time_point now);
  void wait_for_events(Clock::time_point now);
  void forward(int signal, Clock::time_point now);
  bool pump(Task& task, bool err); ///< one read; false when nothing more is there now
  void drain(Task& task);          ///< reads what a task left in its pipes
  void stop_running(int signal);

  // -- state --------------------------------------------------------------------

  [[nodiscard]] bool all_exited() const;
  [[nodiscard]] bool pipes_open() const;
  void close_pipes();
  [[nodiscard]] std::string running_names() const;

  // -- the verdict --------------------------------------------------------------

  [[nodiscard]] std::string describe_failure(const Task& task) const;
  [[nodiscard]] int report();

  SupervisorOptions options_;
  std::vector<Task> tasks_;
  SignalPipe* signals_ = nullptr; ///< set during run()
  int failures_ = 0;
  StopReason reason_ = StopReason::none;
  bool term_sent_ = false;
  bool kill_sent_ = false;
  std::optional<Clock::time_point> deadline_;
  std::optional<Clock::time_point> term_at_;
  std::optional<Clock::time_point> kill_at_;
  std::optional<Clock::time_point> drain_until_;
};

/// "signal 9 (SIGKILL)".
[[nodiscard]] std::string describe_signal(int signal);

/// Writes all of `data` to `fd`, retrying on EINTR and EAGAIN; drops it when
/// the descriptor is gone (a closed pipe).
void write_all(int fd, std::string_view data) noexcept;

} // namespace troupe::launch

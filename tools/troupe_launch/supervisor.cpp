#include "supervisor.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace troupe::launch {

namespace {

using std::chrono::duration;
using std::chrono::duration_cast;

bool succeeded(int wait_status) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

int exit_code_of(int wait_status) {
  if (WIFSIGNALED(wait_status))
    return 128 + WTERMSIG(wait_status);
  return std::max(1, WEXITSTATUS(wait_status));
}

std::chrono::steady_clock::duration seconds(double s) {
  return duration_cast<std::chrono::steady_clock::duration>(duration<double>(s));
}

// "KILL" for SIGKILL.
std::string signal_abbrev(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? abbrev : std::to_string(signal);
}

// "10", "0.5".
std::string format_seconds(double s) {
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.ends_with('.'))
    text.pop_back();
  return text;
}

void say(const std::string& line) {
  write_all(STDERR_FILENO, "troupe-launch: " + line + "\n");
}

} // namespace

std::string describe_signal(int signal) {
  return "signal " + std::to_string(signal) + " (SIG" + signal_abbrev(signal) + ")";
}

void write_all(int fd, std::string_view data) noexcept {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EAGAIN) {
      // Our stdout may be a non-blocking file description shared with others.
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;
    }
  }
}

int Supervisor::run(const std::vector<std::string>& program, const std::vector<TaskLaunch>& tasks) {
  // Before the first fork, so that no SIGCHLD is missed.
  SignalPipe signals;
  signals_ = &signals;
  const auto start = Clock::now();
  if (options_.timeout_seconds > 0)
    deadline_ = start + seconds(options_.timeout_seconds);
  tasks_.reserve(tasks.size());
  for (const auto& launch : tasks) {
    try {
      const std::string prefix = "[" + launch.id.name() + "] ";
      tasks_.push_back(Task{launch.id, ChildProcess(program, launch.environment),
                            LinePrefixer(prefix), LinePrefixer(prefix)});
    } catch (const std::runtime_error& e) {
      say("cannot start task " + launch.id.name() + ": " + e.what());
      // The tasks started so far die with their ChildProcess.
      tasks_.clear();
      signals_ = nullptr;
      return 127;
    }
  }

  while (true) {
    reap();
    const auto now = Clock::now();
    if (all_exited()) {
      if (!pipes_open())
        break;
      // A task's own children may hold its pipes open after it exited.
      if (!drain_until_)
        drain_until_ = now + seconds(options_.kill_after_seconds);
      if (now >= *drain_until_) {
        close_pipes();
        break;
      }
    }
    check_deadlines(now);
    wait_for_events(now);
  }
  signals_ = nullptr;
  return report();
}

void Supervisor::reap() {
  // Every task's state first, so that a task that stopped before another
  // exited is known to be stopped when that exit is handled.
  std::vector<Task*> exited_now;
  for (auto& task : tasks_) {
    if (task.child.exited())
      continue;
    const int stop_signal_before = task.child.stop_signal();
    if (task.child.poll_exit())
      exited_now.push_back(&task);
    else
      note_stop_change(task, stop_signal_before);
  }
  for (Task* exited : exited_now)
    on_exit(*exited);
}

void Supervisor::on_exit(Task& task) {
  if (is_coordinator(task) && reason_ == StopReason::none) {
    on_coordinator_exit(task);
    return;
  }
  if (succeeded(task.child.wait_status()))
    return;
  task.failure_order = failures_++;
  if (reason_ != StopReason::none)
    return;
  // The task's last words (often why it failed) go out before the notice.
  drain(task);
  if (!options_.coordinator.empty() && task.id.type == "worker") {
    say(describe_failure(task).substr(std::strlen("troupe-launch: "))
        + "; the coordinator " + options_.coordinator + " goes on with the other workers");
    return;
  }
  reason_ = StopReason::failure;
  term_at_ = Clock::now() + seconds(options_.grace_seconds);
  const std::string frozen = note_frozen_tasks();
  if (!all_exited()) {
    say(describe_failure(task).substr(std::strlen("troupe-launch: "))
        + (frozen.empty() ? "" : " after task " + frozen + " stopped responding") + "; the other tasks get "
        + format_seconds(options_.grace_seconds) + " s to finish before SIGTERM");
  }
}

void Supervisor::on_coordinator_exit(Task& task) {
  drain(task);
  reason_ = StopReason::coordinator_exited;
  // The job failed: a task stopped now is its first cause (the coordinator
  // failed because that task stopped responding), as in on_exit.
  std::string frozen;
  if (!succeeded(task.child.wait_status())) {
    task.failure_order = failures_++;
    frozen = note_frozen_tasks();
  }
  if (all_exited())
    return;
  term_at_ = Clock::now() + seconds(options_.grace_seconds);
  const int status = task.child.wait_status();
  const std::string how = WIFSIGNALED(status) ? "was killed by " + describe_signal(WTERMSIG(status))
                                              : "exited with status " + std::to_string(WEXITSTATUS(status));
  say("the coordinator, task " + task.id.name() + " (pid " + std::to_string(task.child.pid()) + "), " + how
      + (frozen.empty() ? "" : " after task " + frozen + " stopped responding") + "; the other tasks get "
      + format_seconds(options_.grace_seconds) + " s to exit before SIGTERM");
}

bool Supervisor::may_be_first_cause(const Task& task) const {
  // A parameter-server job goes on without a lost worker: only its ps tasks
  // (and the coordinator) can have failed it.
  return options_.coordinator.empty() || task.id.type != "worker";
}

std::string Supervisor::note_frozen_tasks() {
  std::string frozen;
  for (auto& other : tasks_)
    if (!other.child.exited() && other.child.stop_signal() != 0 && may_be_first_cause(other)) {
      other.froze_by = other.child.stop_signal();
      frozen += std::string(frozen.empty() ? "" : ", ") + other.id.name() + " (pid "
                + std::to_string(other.child.pid()) + ", stopped by " + describe_signal(other.froze_by) + ")";
    }
  return frozen;
}

void Supervisor::note_stop_change(Task& task, int stop_signal_before) {
  const int now = task.child.stop_signal();
  if (now == stop_signal_before || task.stopped_by_launcher)
    return;
  const std::string who = "task " + task.id.name() + " (pid " + std::to_string(task.child.pid()) + ")";
  if (now != 0)
    say(who + " was stopped by " + describe_signal(now)
        + " and no longer responds; its peers count it lost after their TROUPE_PEER_TIMEOUT_SECONDS");
  else
    say(who + " continued");
}

void Supervisor::check_deadlines(Clock::time_point now) {
  if (deadline_ && now >= *deadline_ && reason_ != StopReason::timeout && !all_exited()) {
    say("the cluster did not finish within --timeout-seconds "
        + format_seconds(options_.timeout_seconds)
        + "; stopping the tasks still running: " + running_names());
    reason_ = StopReason::timeout;
    deadline_.reset();
    if (!term_sent_)
      term_at_ = now;
  }
  if (term_at_ && !term_sent_ && now >= *term_at_) {
    if (reason_ == StopReason::coordinator_exited)
      say("stopping the tasks still running " + format_seconds(options_.grace_seconds)
          + " s after the coordinator exited: " + running_names());
    stop_running(SIGTERM);
    term_sent_ = true;
    kill_at_ = now + seconds(options_.kill_after_seconds);
  }
  if (kill_at_ && !kill_sent_ && now >= *kill_at_) {
    stop_running(SIGKILL);
    kill_sent_ = true;
  }
}

void Supervisor::wait_for_events(Clock::time_point now) {
  std::optional<Clock::time_point> wake;
  auto consider = [&](const std::optional<Clock::time_point>& t, bool active) {
    if (t && active && (!wake || *t < *wake))
      wake = *t;
  };
  consider(deadline_, true);
  consider(term_at_, !term_sent_);
  consider(kill_at_, !kill_sent_);
  consider(drain_until_, true);
  int timeout_ms = -1;
  if (wake) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - now).count();
    timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, 60'000));
  }

  std::vector<pollfd> fds{{signals_->fd(), POLLIN, 0}};
  std::vector<std::pair<Task*, bool>> sources; // task, is stderr
  for (auto& task : tasks_) {
    if (task.child.stdout_pipe().valid()) {
      fds.push_back({task.child.stdout_pipe().get(), POLLIN, 0});
      sources.emplace_back(&task, false);
    }
    if (task.child.stderr_pipe().valid()) {
      fds.push_back({task.child.stderr_pipe().get(), POLLIN, 0});
      sources.emplace_back(&task, true);
    }
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) < 0)
    return; // EINTR: a signal; its byte is in the pipe
  if (fds[0].revents != 0)
    for (int signal : signals_->drain())
      if (signal == SIGINT || signal == SIGTERM)
        forward(signal, Clock::now());
  for (size_t i = 1; i < fds.size(); ++i)
    if (fds[i].revents != 0)
      pump(*sources[i - 1].first, sources[i - 1].second);
}

void Supervisor::forward(int signal, Clock::time_point now) {
  say("forwarding " + describe_signal(signal) + " to the tasks still running");
  for (auto& task : tasks_)
    task.child.signal_group(signal);
  if (reason_ == StopReason::none)
    reason_ = StopReason::signal;
  // The forwarded signal stands in for SIGTERM; who ignores it gets SIGKILL.
  term_sent_ = true;
  if (!kill_at_)
    kill_at_ = now + seconds(std::max(options_.grace_seconds, options_.kill_after_seconds));
}

bool Supervisor::pump(Task& task, bool err) {
  UniqueFd& pipe = err ? task.child.stderr_pipe() : task.child.stdout_pipe();
  LinePrefixer& prefixer = err ? task.err : task.out;
  // One read per wake-up, so that a chatty task cannot starve the others.
  char buffer[64 * 1024];
  ssize_t n;
  do {
    n = ::read(pipe.get(), buffer, sizeof buffer);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN)
    return false;
  std::string lines;
  if (n > 0) {
    prefixer.feed(std::string_view(buffer, static_cast<size_t>(n)), lines);
  } else {
    prefixer.flush(lines);
    pipe.reset();
  }
  write_all(err ? STDERR_FILENO : STDOUT_FILENO, lines);
  return n > 0;
}

void Supervisor::drain(Task& task) {
  // Bounded: a task's own children may keep writing.
  for (int round = 0; round < 64 && task.child.stdout_pipe().valid() && pump(task, false);
       ++round) {}
  for (int round = 0; round < 64 && task.child.stderr_pipe().valid() && pump(task, true); ++round) {
  }
}

void Supervisor::stop_running(int signal) {
  for (auto& task : tasks_) {
    if (task.child.exited())
      continue;
    task.stopped_by_launcher = true;
    task.child.signal_group(signal);
    // A stopped process keeps a SIGTERM pending until it continues.
    if (task.child.stop_signal() != 0 && signal != SIGKILL)
      task.child.signal_group(SIGCONT);
  }
}

bool Supervisor::all_exited() const {
  return std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.child.exited(); });
}

bool Supervisor::pipes_open() const {
  return std::any_of(tasks_.begin(), tasks_.end(), [](const Task& t) {
    return t.child.stdout_pipe().valid() || t.child.stderr_pipe().valid();
  });
}

void Supervisor::close_pipes() {
  for (auto& task : tasks_) {
    std::string out;
    std::string err;
    task.out.flush(out);
    task.err.flush(err);
    write_all(STDOUT_FILENO, out);
    write_all(STDERR_FILENO, err);
    task.child.stdout_pipe().reset();
    task.child.stderr_pipe().reset();
  }
}

std::string Supervisor::running_names() const {
  std::string names;
  for (const auto& task : tasks_) {
    if (task.child.exited())
      continue;
    names += (names.empty() ? "" : ", ") + task.id.name() + " (pid "
             + std::to_string(task.child.pid()) + ")";
  }
  return names;
}

std::string Supervisor::describe_failure(const Task& task) const {
  const int status = task.child.wait_status();
  std::string text =
    "troupe-launch: task " + task.id.name() + " (pid " + std::to_string(task.child.pid()) + ") ";
  if (task.froze_by != 0)
    text += "stopped responding first (stopped by " + describe_signal(task.froze_by) + "), then ";
  const char* when = reason_ == StopReason::timeout              ? "at the --timeout-seconds deadline"
                     : reason_ == StopReason::coordinator_exited ? "after the coordinator's exit and the grace period"
                                                                 : "after the grace period";
  if (task.stopped_by_launcher && WIFSIGNALED(status))
    text += std::string("was killed by troupe-launch ") + when + " (SIG"
            + signal_abbrev(WTERMSIG(status)) + ")";
  else if (task.stopped_by_launcher)
    text += "exited with status " + std::to_string(WEXITSTATUS(status))
            + " after troupe-launch stopped it " + when;
  else if (WIFSIGNALED(status))
    text += "was killed by " + describe_signal(WTERMSIG(status))
            + (WCOREDUMP(status) ? " (core dumped)" : "");
  else
    text += "exited with status " + std::to_string(WEXITSTATUS(status));
  return text;
}

int Supervisor::report() {
  std::vector<const Task*> failed;
  const Task* coordinator = nullptr;
  for (const auto& task : tasks_) {
    if (task.failure_order >= 0)
      failed.push_back(&task);
    if (is_coordinator(task) && !task.stopped_by_launcher)
      coordinator = &task;
  }
  if (failed.empty())
    return 0;
  // The first cause leads: a task that was stopped when the first one failed.
  // (In a parameter-server cluster its workers come last: the job goes on without them.)
  std::stable_sort(failed.begin(), failed.end(), [this](const Task* a, const Task* b) {
    return std::tuple(a->froze_by == 0, !may_be_first_cause(*a), a->failure_order)
           < std::tuple(b->froze_by == 0, !may_be_first_cause(*b), b->failure_order);
  });
  for (const Task* task : failed)
    write_all(STDERR_FILENO, describe_failure(*task) + "\n");
  // A parameter-server cluster succeeds when its coordinator does (a lost
  // worker's functions ran elsewhere).
  if (coordinator != nullptr && succeeded(coordinator->child.wait_status()))
    return 0;
  if (failed.front()->froze_by != 0)
    return 128 + failed.front()->froze_by;
  // A failed parameter-server job: a task killed by a signal before the
  // coordinator failed is the first cause, as in any cluster; otherwise the
  // status is the coordinator's.
  if (coordinator != nullptr) {
    for (const Task* task : failed) {
      if (task == coordinator)
        break; // failed on its own, or after tasks that cannot have failed it
      if (may_be_first_cause(*task) && WIFSIGNALED(task->child.wait_status()) && !task->stopped_by_launcher)
        return exit_code_of(task->child.wait_status());
    }
    return exit_code_of(coordinator->child.wait_status());
  }
  // The first task that failed on its own decides; a cluster that only failed
  // because the deadline stopped it exits 124, as timeout(1) does.
  for (const Task* task : failed)
    if (!task->stopped_by_launcher)
      return exit_code_of(task->child.wait_status());
  return reason_ == StopReason::timeout ? 124 : exit_code_of(failed.front()->child.wait_status());
}

} // namespace troupe::launch

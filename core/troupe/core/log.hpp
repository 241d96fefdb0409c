#pragma once

#include <functional>
#include <sstream>
#include <string_view>

namespace troupe {

enum class LogLevel : unsigned char { error, warning, info, debug };

/// True when a line of `level` from `component` would be printed, given
/// TROUPE_LOG (error|warning|info|debug, default warning) and
/// TROUPE_LOG_COMPONENTS (comma-separated component names; empty = all; it
/// narrows info and debug lines only: errors and warnings always print).
[[nodiscard]] bool log_enabled(LogLevel level, std::string_view component) noexcept;

/// Who is logging on this thread: the task (process) and, inside a replica's
/// function, the replica id (-1 when not in one). Set by the runtime.
struct LogContext {
  int task = 0;
  int replica = -1;
};
/// The calling thread's log context (the running replica re-sets it after every resume).
LogContext& log_context() noexcept;

/// Receives each complete log line (with its trailing newline) instead of stderr.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

/// Routes troupe's log lines to `sink` (an application's own logging, or a
/// test); an empty sink restores stderr. The sink is called from whichever
/// thread logs, one line at a time (calls never overlap), and must not log
/// through troupe itself.
void set_log_sink(LogSink sink);

/// One log line; printed to stderr as a whole when destroyed:
/// `[troupe W task=0 replica=1 coll] text` (or handed to the log sink).
class LogLine {
public:
  LogLine(LogLevel level, std::string_view component);
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  std::ostream& stream() noexcept { return out_; }

private:
  LogLevel level_;
  std::ostringstream out_;
};

} // namespace troupe

/// `TROUPE_LOG(warning, "coll") << "text";` prints one line when that level and
/// component are enabled; the stream expression is not evaluated otherwise.
/// A loop that runs at most once, so the macro is one statement even inside an
/// unbraced if/else.
#define TROUPE_LOG(level, component)                                                   \
  for (bool troupe_log_once_ = ::troupe::log_enabled(::troupe::LogLevel::level, component); \
       troupe_log_once_; troupe_log_once_ = false)                                      \
    ::troupe::LogLine(::troupe::LogLevel::level, component).stream()

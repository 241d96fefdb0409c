#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace troupe {

enum class LogLevel : unsigned char { error, warning, info, debug };

/// True when a line of `level` from `component` would be printed, given
/// TROUPE_LOG (error|warning|info|debug, default warning) and
/// TROUPE_LOG_COMPONENTS (comma-separated component names; empty = all; it
/// narrows info and debug lines only: errors and warnings always print).
/// A name in TROUPE_LOG_COMPONENTS that is none of troupe's components gets
/// one warning when the filter is first read (at program start); an
/// application's own TROUPE_LOG components are matched all the same.
[[nodiscard]] bool log_enabled(LogLevel level, std::string_view component) noexcept;

/// The components troupe itself logs under: "coll", "data", "kernels", "net", "trace", "tpu".
[[nodiscard]] const std::vector<std::string_view>& troupe_log_components() noexcept;

/// The warning for the names in `components` (TROUPE_LOG_COMPONENTS's
/// syntax) that are none of troupe_log_components(); empty when all are.
[[nodiscard]] std::string unknown_log_components_warning(std::string_view components);

/// Which replica is logging on this thread: inside a replica's function its
/// id, -1 when not in one. Set by the runtime.
struct LogContext {
  int replica = -1;
};
/// The calling thread's log context (the running replica re-sets it after every resume).
LogContext& log_context() noexcept;

/// The task every log line of this process names: "worker:1" once the
/// process joined a cluster as that task (ClusterNode sets it), "0" in a
/// single-process run. Process-wide, not per thread.
void set_log_task(std::string task);
[[nodiscard]] std::string log_task();

/// Receives each complete log line (with its trailing newline) instead of stderr.
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

/// Routes troupe's log lines to `sink` (an application's own logging, or a
/// test); an empty sink restores stderr. The sink is called from whichever
/// thread logs, one line at a time (calls never overlap), and must not log
/// through troupe itself.
void set_log_sink(LogSink sink);

/// One log line; printed to stderr as a whole when destroyed:
/// `[troupe W task=worker:1 replica=1 coll] text` (or handed to the log sink).
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

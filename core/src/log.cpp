#include <troupe/core/log.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <string>
#include <vector>

#include <troupe/core/config.hpp>

namespace troupe {

namespace {

/// TROUPE_LOG and TROUPE_LOG_COMPONENTS, parsed once.
struct LogFilter {
  LogLevel max_level = LogLevel::warning;
  std::vector<std::string> components; // empty = all

  [[nodiscard]] bool allows(LogLevel level, std::string_view component) const {
    if (level > max_level)
      return false;
    // As NCCL_DEBUG_SUBSYS: the component list narrows info and debug output;
    // errors and warnings are always shown.
    if (level <= LogLevel::warning || components.empty())
      return true;
    for (const auto& c : components)
      if (c == component)
        return true;
    return false;
  }
};

LogLevel parse_level(const std::string& text) {
  if (text == "error")
    return LogLevel::error;
  if (text == "info")
    return LogLevel::info;
  if (text == "debug")
    return LogLevel::debug;
  return LogLevel::warning;
}

std::vector<std::string> split_components(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    if (!current.empty())
      out.push_back(current);
    current.clear();
  };
  for (char c : text) {
    if (c == ',')
      flush();
    else if (c != ' ' && c != '\t')
      current += c;
  }
  flush();
  return out;
}

LogFilter make_filter() noexcept {
  LogFilter filter;
  try {
    const auto& k = knobs();
    filter.max_level = parse_level(k.log_level);
    filter.components = split_components(k.log_components);
  } catch (...) {
    // A bad TROUPE_* value is reported by the first knobs() call outside
    // logging; logging itself falls back to the defaults rather than abort.
  }
  return filter;
}

const LogFilter& filter() noexcept {
  static const LogFilter instance = make_filter();
  return instance;
}

// A misspelt component would otherwise silence the lines it was meant to
// show without a word; said once, at program start, whether or not anything
// logs later.
[[maybe_unused]] const bool unknown_components_reported = [] {
  // The variable itself, not knobs(): static initialisers of other files may
  // not have run yet.
  try {
    const char* components = std::getenv("TROUPE_LOG_COMPONENTS");
    const auto warning = unknown_log_components_warning(components != nullptr ? components : "");
    if (!warning.empty())
      LogLine(LogLevel::warning, "log").stream() << warning;
  } catch (...) {
    // A log line must never take the program down.
  }
  return true;
}();

std::mutex& task_mutex() {
  static std::mutex instance;
  return instance;
}

std::string& task_name() {
  static std::string instance = "0";
  return instance;
}

char level_letter(LogLevel level) {
  switch (level) {
    case LogLevel::error: return 'E';
    case LogLevel::warning: return 'W';
    case LogLevel::info: return 'I';
    case LogLevel::debug: return 'D';
  }
  return '?';
}

// Serialises output, whether to stderr or to the sink.
std::mutex& output_mutex() {
  static std::mutex instance;
  return instance;
}

LogSink& sink() {
  static LogSink instance;
  return instance;
}

} // namespace

bool log_enabled(LogLevel level, std::string_view component) noexcept {
  return filter().allows(level, component);
}

const std::vector<std::string_view>& troupe_log_components() noexcept {
  static const std::vector<std::string_view> names{"coll", "data", "kernels", "net", "trace", "tpu"};
  return names;
}

std::string unknown_log_components_warning(std::string_view components) {
  const auto& known = troupe_log_components();
  std::string unknown;
  for (const auto& name : split_components(std::string(components)))
    if (std::find(known.begin(), known.end(), name) == known.end())
      unknown += (unknown.empty() ? "\"" : ", \"") + name + "\"";
  if (unknown.empty())
    return {};
  std::string valid;
  for (auto name : known)
    valid += (valid.empty() ? "" : ", ") + std::string(name);
  return "TROUPE_LOG_COMPONENTS names " + unknown + ", none of troupe's components (" + valid
         + "): check the spelling (an application's own TROUPE_LOG components are matched as given)";
}

LogContext& log_context() noexcept {
  thread_local LogContext context;
  return context;
}

void set_log_task(std::string task) {
  std::lock_guard<std::mutex> guard{task_mutex()};
  task_name() = std::move(task);
}

std::string log_task() {
  std::lock_guard<std::mutex> guard{task_mutex()};
  return task_name();
}

void set_log_sink(LogSink new_sink) {
  std::lock_guard<std::mutex> guard{output_mutex()};
  sink() = std::move(new_sink);
}

LogLine::LogLine(LogLevel level, std::string_view component) : level_(level) {
  const auto& ctx = log_context();
  out_ << "[troupe " << level_letter(level) << " task=" << log_task();
  if (ctx.replica >= 0)
    out_ << " replica=" << ctx.replica;
  out_ << ' ' << component << "] ";
}

LogLine::~LogLine() {
  try {
    out_ << '\n';
    auto line = out_.str();
    // One write per line under a lock, so lines from threads never interleave.
    std::lock_guard<std::mutex> guard{output_mutex()};
    if (auto& s = sink()) {
      s(level_, line);
      return;
    }
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  } catch (...) {
    // A log line must never take the program down.
  }
}

} // namespace troupe

#include <troupe/core/timeline.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <troupe/core/config.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

int64_t micros(caf::actor_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

} // namespace

Timeline& Timeline::process() {
  // Never destroyed: the exit handler below runs after static destructors.
  static auto* timeline = new Timeline();
  return *timeline;
}

Timeline::Timeline() {
  if (const auto& path = knobs().trace_path; !path.empty()) {
    path_ = path;
    on_.store(true, std::memory_order_relaxed);
    // Whatever ends the program, what was recorded is written.
    std::atexit([] { process().flush(); });
  }
}

void Timeline::start(std::string path) {
  std::lock_guard lock(mutex_);
  if (on_.load(std::memory_order_relaxed))
    write_locked();
  events_.clear();
  path_ = std::move(path);
  on_.store(true, std::memory_order_relaxed);
}

void Timeline::stop() {
  std::lock_guard lock(mutex_);
  if (!on_.load(std::memory_order_relaxed))
    return;
  write_locked();
  on_.store(false, std::memory_order_relaxed);
  events_.clear();
}

void Timeline::flush() {
  std::lock_guard lock(mutex_);
  if (on_.load(std::memory_order_relaxed))
    write_locked();
}

void Timeline::write_locked() {
  // Written whole each time (a temporary, then renamed): a reader never sees half a file.
  const auto tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    // The clocks of this process, for troupe-launch to align several tasks' files.
    const auto steady = micros(caf::actor_clock::clock_type::now());
    const auto wall =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
    out << "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"troupe_steady_us\": " << steady
        << ", \"troupe_system_us\": " << wall << "},\n\"traceEvents\": [\n";
    for (size_t i = 0; i < events_.size(); ++i)
      out << (i ? ",\n" : "") << events_[i];
    out << "\n]}\n";
    if (!out) {
      TROUPE_LOG(error, "trace") << "cannot write the timeline to \"" << tmp << "\" (TROUPE_TRACE)";
      return;
    }
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0)
    TROUPE_LOG(error, "trace") << "cannot write the timeline to \"" << path_ << "\" (TROUPE_TRACE)";
}

void Timeline::span(int pid, int tid, const std::string& name, const char* category,
                    caf::actor_clock::time_point begin, caf::actor_clock::time_point end, const std::string& args) {
  if (!on())
    return;
  const auto ts = micros(begin);
  const auto dur = std::max<int64_t>(0, micros(end) - ts);
  std::string event = "{\"ph\": \"X\", \"name\": " + quoted(name) + ", \"cat\": \"" + category
                      + "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid)
                      + ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur);
  if (!args.empty())
    event += ", \"args\": {" + args + "}";
  event += "}";
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

void Timeline::name_process(int pid, const std::string& name) {
  if (!on())
    return;
  auto event = "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(pid)
               + ", \"tid\": 0, \"args\": {\"name\": " + quoted(name) + "}}";
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

void Timeline::name_track(int pid, int tid, const std::string& name) {
  if (!on())
    return;
  auto event = "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + std::to_string(pid) + ", \"tid\": "
               + std::to_string(tid) + ", \"args\": {\"name\": " + quoted(name) + "}}";
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

int Timeline::replica_track(uint64_t group_id, int replica) {
  constexpr uint64_t local_start = uint64_t{1} << 32;  // Executor's local group ids
  const auto group = group_id >= local_start ? 1000 + (group_id - local_start) : group_id;
  return static_cast<int>(100 + group * 100 + static_cast<uint64_t>(replica));
}

std::string Timeline::group_name(uint64_t group_id) {
  constexpr uint64_t local_start = uint64_t{1} << 32;
  if (group_id == 0)
    return "settings agreement";
  return group_id >= local_start ? "strategy " + std::to_string(group_id - local_start)
                                 : "multi-worker strategy " + std::to_string(group_id);
}

std::string Timeline::quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

} // namespace troupe::internal

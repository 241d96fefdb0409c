#include "timeline_merge.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

namespace troupe::launch {

namespace {

// A task's timeline of millions of spans stays below this.
constexpr std::uintmax_t max_part_bytes = std::uintmax_t{2} << 30;

} // namespace

std::string timeline_part(const std::string& merged, const std::string& task) {
  std::string name = task;
  std::replace(name.begin(), name.end(), ':', '-');
  return merged + "." + name + ".part";
}

std::string merge_timelines(const std::string& merged, const std::vector<std::string>& tasks) {
  struct Part {
    int pid = 0;
    std::string task;
    nlohmann::json events;
    int64_t offset_us = 0; ///< this task's clock to system time
  };
  std::vector<Part> parts;
  std::string missing;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto path = timeline_part(merged, tasks[i]);
    // Parsed whole: bounded before it is read.
    std::error_code size_error;
    const auto bytes = std::filesystem::file_size(path, size_error);
    if (!size_error && bytes > max_part_bytes) {
      missing += (missing.empty() ? "" : ", ") + tasks[i] + " (" + path + " has " + std::to_string(bytes)
                 + " bytes, over the " + std::to_string(max_part_bytes >> 20) + " MiB a part may have)";
      std::remove(path.c_str());
      continue;
    }
    std::ifstream in(path);
    if (!in) {
      missing += (missing.empty() ? "" : ", ") + tasks[i] + " (no timeline)";
      continue;
    }
    try {
      auto json = nlohmann::json::parse(in);
      const auto& clock = json.at("otherData");
      Part part{static_cast<int>(i), tasks[i], json.at("traceEvents"),
                clock.at("troupe_system_us").get<int64_t>() - clock.at("troupe_steady_us").get<int64_t>()};
      parts.push_back(std::move(part));
    } catch (const std::exception& e) {
      missing += (missing.empty() ? "" : ", ") + tasks[i] + " (" + path + " is unreadable: " + e.what() + ")";
    }
    std::remove(path.c_str());
  }
  // One origin for every task: the earliest event in system time.
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const auto& part : parts)
    for (const auto& e : part.events)
      if (e.contains("ts"))
        origin = std::min(origin, e["ts"].get<int64_t>() + part.offset_us);
  nlohmann::json all = nlohmann::json::array();
  for (auto& part : parts) {
    all.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", part.pid}, {"tid", 0},
                   {"args", {{"name", part.task}}}});
    for (auto& e : part.events) {
      if (e.value("name", "") == "process_name")
        continue; // the launcher names each task
      e["pid"] = part.pid;
      if (e.contains("ts"))
        e["ts"] = e["ts"].get<int64_t>() + part.offset_us - origin;
      all.push_back(std::move(e));
    }
  }
  std::ofstream out(merged, std::ios::trunc);
  out << nlohmann::json{{"displayTimeUnit", "ms"}, {"traceEvents", std::move(all)}}.dump() << "\n";
  if (!out)
    return "cannot write the timeline to " + merged;
  return "timeline of " + std::to_string(parts.size()) + " tasks in " + merged
         + (missing.empty() ? "" : "; left out: " + missing);
}

} // namespace troupe::launch

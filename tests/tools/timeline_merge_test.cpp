// troupe-launch's merge of its tasks' timelines (TROUPE_TRACE).

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "troupe_launch/timeline_merge.hpp"

using namespace troupe::launch;
using Catch::Contains;

namespace {

/// A task's part: one span at its own clock's `ts`, and that clock's
/// reading beside the system time when the part was written.
void write_part(const std::string& path, int64_t ts, int64_t steady_us, int64_t system_us) {
  std::ofstream out(path);
  out << nlohmann::json{{"otherData", {{"troupe_steady_us", steady_us}, {"troupe_system_us", system_us}}},
                        {"traceEvents",
                         {{{"ph", "M"}, {"name", "process_name"}, {"pid", 7}, {"tid", 0}, {"args", {{"name", "x"}}}},
                          {{"ph", "X"}, {"name", "step"}, {"cat", "step"}, {"pid", 7}, {"tid", 100},
                           {"ts", ts}, {"dur", 10}}}}}
           .dump();
}

} // namespace

TEST_CASE("troupe-launch merges its tasks' timelines into one, each task a process, clocks aligned",
          "[launch][timeline]") {
  const auto dir = std::filesystem::temp_directory_path() / ("troupe-merge-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto merged = (dir / "trace.json").string();
  CHECK(timeline_part(merged, "worker:1") == merged + ".worker-1.part");
  // worker:0's clock reads 1000 when the system's reads 50'000; worker:1's
  // 9000 at 50'020: its span at 9'030 is 40 us after worker:0's at 1'010.
  write_part(timeline_part(merged, "worker:0"), 1'010, 1'000, 50'000);
  write_part(timeline_part(merged, "worker:1"), 9'030, 9'000, 50'020);
  // ps:0's part claims more than a part may have (a sparse file): left out before it is read.
  { std::ofstream(timeline_part(merged, "ps:0")); }
  std::filesystem::resize_file(timeline_part(merged, "ps:0"), (std::uintmax_t{2} << 30) + 1);
  const auto told = merge_timelines(merged, {"worker:0", "worker:1", "ps:0", "ps:1"});
  CHECK_THAT(told, Contains("timeline of 2 tasks in " + merged) && Contains("left out: ps:0 (")
                     && Contains("has 2147483649 bytes, over the 2048 MiB a part may have)")
                     && Contains("ps:1 (no timeline)"));
  CHECK_FALSE(std::filesystem::exists(timeline_part(merged, "ps:0")));
  std::ifstream in(merged);
  const auto trace = nlohmann::json::parse(in);
  std::map<int, std::string> names;
  std::map<int, int64_t> ts;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M")
      names[e.at("pid").get<int>()] = e.at("args").at("name").get<std::string>();
    else
      ts[e.at("pid").get<int>()] = e.at("ts").get<int64_t>();
  }
  CHECK(names == std::map<int, std::string>{{0, "worker:0"}, {1, "worker:1"}});
  CHECK(ts == std::map<int, int64_t>{{0, 0}, {1, 40}});
  CHECK_FALSE(std::filesystem::exists(timeline_part(merged, "worker:0")));
  CHECK_FALSE(std::filesystem::exists(timeline_part(merged, "worker:1")));
  std::filesystem::remove_all(dir);
}

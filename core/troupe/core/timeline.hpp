#pragma once

// The timeline (TROUPE_TRACE=path.json): Chrome trace events, which
// chrome://tracing and Perfetto open. One track per replica of each strategy
// (its steps and collectives), per worker's scheduled functions, and per
// task for input waits and checkpoint writes; a process (pid) per task.
// Timestamps come from the actor clock: real time, or a simulation's virtual
// time. Off, every recording site costs one relaxed atomic load.
// Internal: not installed.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>

namespace troupe::internal {

class Timeline {
public:
  /// The process's timeline: TROUPE_TRACE's file when that is set.
  static Timeline& process();

  [[nodiscard]] bool on() const noexcept { return on_.load(std::memory_order_relaxed); }

  /// Records into `path` from now on (a SimulatedCluster's own trace), after
  /// writing what was recorded for an earlier path.
  void start(std::string path);
  /// Writes the file (every event so far) and stops recording.
  void stop();
  /// Writes the file with every event so far; recording goes on.
  void flush();

  /// A span ("ph": "X") on track (pid, tid); `args` is a JSON object's body
  /// (`"bytes": 4, "algorithm": "ring"`), or empty.
  void span(int pid, int tid, const std::string& name, const char* category, caf::actor_clock::time_point begin,
            caf::actor_clock::time_point end, const std::string& args = {});
  /// Names a process (a task) and a track in the viewer.
  void name_process(int pid, const std::string& name);
  void name_track(int pid, int tid, const std::string& name);

  /// The track of replica `replica` of the group `group_id` (cluster groups
  /// by position, local ones after them), and of other per-task activities.
  [[nodiscard]] static int replica_track(uint64_t group_id, int replica);
  /// "multi-worker strategy 1", "strategy 3" (this task's only), "settings agreement".
  [[nodiscard]] static std::string group_name(uint64_t group_id);
  static constexpr int input_track = 1;
  static constexpr int checkpoint_track = 2;
  /// Worker `index`'s scheduled functions.
  [[nodiscard]] static int functions_track(int index) { return 10 + index; }

  /// `"text"`, with JSON's escapes.
  [[nodiscard]] static std::string quoted(const std::string& text);

private:
  Timeline();
  void write_locked();

  std::atomic<bool> on_{false};
  std::mutex mutex_;
  std::string path_;
  std::vector<std::string> events_;  ///< each one JSON object
};

} // namespace troupe::internal

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace troupe::internal {

/// The coordinator's flight recorder: the last scheduled functions it handed
/// out (closure, attempt, function, worker, start, end and how each ended,
/// or that it still runs), logged as one block when a worker or a parameter
/// server is lost or a function fails, so that the chief's log says what ran
/// where. TROUPE_FLIGHT_RECORDER_ENTRIES of them (0: off), beside each
/// collective group's FlightRecorder. Used from one actor: not thread-safe.
class FunctionRecorder {
public:
  explicit FunctionRecorder(std::size_t capacity) : ring_(capacity) {}

  /// Attempt `attempt` of closure `id` (function `function`) went to `worker` at `now_ns`.
  void dispatched(uint64_t id, uint32_t attempt, const std::string& function, const std::string& worker,
                  int64_t now_ns);
  /// That attempt ended at `now_ns`: `how` is a static text ("done", "failed: ...").
  void ended(uint64_t id, uint32_t attempt, std::string how, int64_t now_ns);

  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  /// One block of `task`'s: a line saying `why`, then a line per function, oldest first.
  [[nodiscard]] std::string render(const std::string& why, int64_t now_ns, const std::string& task) const;

private:
  struct Entry {
    uint64_t id = 0;
    uint32_t attempt = 0;
    std::string function;
    std::string worker;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    bool open = true;
    std::string how;
  };
  std::vector<Entry> ring_;
  std::size_t next_ = 0;
  std::size_t count_ = 0;
};

} // namespace troupe::internal

#pragma once

#include <chrono>
#include <mutex>

namespace troupe::internal {

/// How many lines about refused or dropped connections may be logged: at
/// most `burst` per `window`, so that a stranger who opens connections as
/// fast as it can cannot fill a disk with them. When lines were held back,
/// the next window's first allowed line is preceded by one that says how
/// many. Thread-safe.
class RefusalLogLimit {
public:
  using Clock = std::chrono::steady_clock;

  RefusalLogLimit(int burst, Clock::duration window) : burst_(burst), window_(window) {}

  /// Whether one more line may be logged at `now`.
  [[nodiscard]] bool allow(Clock::time_point now = Clock::now());

private:
  std::mutex mutex_;
  int burst_;
  Clock::duration window_;
  Clock::time_point window_start_{};
  int logged_ = 0;
  long held_back_ = 0;
};

inline constexpr int refusal_log_burst = 20;
inline constexpr std::chrono::seconds refusal_log_window{10};

/// This process's limit (refusal_log_burst per refusal_log_window): whether
/// one more line about a refused or dropped connection may be logged now.
[[nodiscard]] bool refusal_log_allowed();

} // namespace troupe::internal

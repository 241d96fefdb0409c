#include <troupe/net/auth/refusal_log.hpp>

#include <troupe/core/log.hpp>

namespace troupe::internal {

bool RefusalLogLimit::allow(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (now - window_start_ >= window_) {
    if (held_back_ > 0)
      TROUPE_LOG(warning, "net") << held_back_ << " more refused or dropped connections were not logged (at most "
                                 << burst_ << " lines per "
                                 << std::chrono::duration_cast<std::chrono::seconds>(window_).count() << " s)";
    window_start_ = now;
    logged_ = 0;
    held_back_ = 0;
  }
  if (logged_ < burst_) {
    ++logged_;
    return true;
  }
  ++held_back_;
  return false;
}

bool refusal_log_allowed() {
  static RefusalLogLimit limit(refusal_log_burst, refusal_log_window);
  return limit.allow();
}

} // namespace troupe::internal

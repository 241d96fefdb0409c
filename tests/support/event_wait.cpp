#include "support/event_wait.hpp"

#include <algorithm>
#include <array>

#include <poll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace troupe::testing {

namespace {

/// Milliseconds left until `deadline`, for poll(): 0 once it passed.
int millis_left(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 60'000));
}

} // namespace

bool wait_for_change_in(const std::string& dir, std::chrono::steady_clock::time_point deadline,
                        const std::function<bool()>& ready) {
  const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  // Watching before the first check: a change between the two is not missed.
  if (fd >= 0)
    (void)::inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MODIFY);
  bool done = ready();
  while (!done && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (fd < 0 || ::poll(&p, 1, millis_left(deadline)) < 0)
      break;
    std::array<char, 4096> events{};
    while (::read(fd, events.data(), events.size()) > 0) {
    }
    done = ready();
  }
  if (fd >= 0)
    ::close(fd);
  return done || ready();
}

bool wait_for_exit(int pid, std::chrono::steady_clock::time_point deadline) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0)
    return true; // no such process any more
  pollfd p{fd, POLLIN, 0};
  int ready = 0;
  while ((ready = ::poll(&p, 1, millis_left(deadline))) == 0 && std::chrono::steady_clock::now() < deadline) {
  }
  ::close(fd);
  return ready > 0;
}

} // namespace troupe::testing

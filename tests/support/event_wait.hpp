#pragma once

// Waits of the multi-process tests that wake on the event itself, not on a
// timer: a file another process writes (inotify on its folder) and the exit
// of a process that is not this one's child (a pidfd). Each has a deadline.

#include <chrono>
#include <functional>
#include <string>

namespace troupe::testing {

/// Waits until `ready()` holds, checking it again at every change in the
/// folder `dir` (a file created, written, moved in); false when `deadline`
/// passes first.
[[nodiscard]] bool wait_for_change_in(const std::string& dir, std::chrono::steady_clock::time_point deadline,
                                      const std::function<bool()>& ready);

/// Waits until process `pid` has exited (it may still be a zombie); false
/// when `deadline` passes first.
[[nodiscard]] bool wait_for_exit(int pid, std::chrono::steady_clock::time_point deadline);

} // namespace troupe::testing

#pragma once

#include <string>
#include <vector>

namespace troupe::launch {

/// Where task `task` ("worker:1") writes its part of the timeline the
/// launcher was asked for (TROUPE_TRACE=`merged`): "<merged>.worker-1.part".
[[nodiscard]] std::string timeline_part(const std::string& merged, const std::string& task);

/// Merges the tasks' timeline parts (Chrome trace files, each task's events
/// in its own clock) into `merged`: every task becomes the process of its
/// place in `tasks`, named after it, and the clocks are aligned through the
/// system time each part recorded beside its own clock, so that one
/// timeline starts at 0. A task that wrote no part (it failed early) is
/// left out and named in the returned text, as is an unreadable part or one
/// over 2 GiB (checked before it is read);
/// the parts are removed once merged. Returns what to tell the user.
std::string merge_timelines(const std::string& merged, const std::vector<std::string>& tasks);

} // namespace troupe::launch

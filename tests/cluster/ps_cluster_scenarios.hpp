#pragma once

#include <string>

namespace troupe {
class Runtime;
} // namespace troupe

namespace troupe::testing {

/// cluster_probe's parameter-server cluster scenarios (chief, workers, ps):
///   "members": every task prints "PROBE MEMBER <task> ..." with the members
///     it sees; the chief reaches an actor each other task published, then
///     exits; the others exit once they hear that the chief left.
///   "ps_lost" / "ps_frozen": as "members", but once the chief reached every
///     task it tells ps:0 to die (SIGKILL) / stop (SIGSTOP) and prints when it
///     learns that ps:0 is lost; then it exits 1, as a coordinator whose
///     job lost a parameter server.
/// Returns the exit status (0: the task saw what the scenario expects).
int run_ps_cluster_scenario(Runtime& rt, const std::string& scenario);

} // namespace troupe::testing

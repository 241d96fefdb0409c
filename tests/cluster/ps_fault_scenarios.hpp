#pragma once

#include <string>

namespace troupe {
class Runtime;
} // namespace troupe

namespace troupe::testing {

/// cluster_probe's parameter-server faults under the real strategy and
/// coordinator (chief, 2 workers, 1 ps; every task runs the same program):
///   "ps_worker_frozen": 20 scheduled functions each add 1, then 10, to a
///     variable; worker:1 stops itself (SIGSTOP) inside its first function,
///     between the two updates. The chief prints "PROBE RESULT w=<value>
///     expected=220" (the frozen attempt's +1 discarded, its function run
///     again on worker:0) and when it learned of the loss.
///   "ps_chief_killed": the chief schedules functions, and once one ran it
///     kills itself (SIGKILL); every worker and ps task prints "PROBE SERVE
///     <task> returned <status> at <time>" when serve() returns.
/// Returns the exit status (0: the task saw what the scenario expects).
int run_ps_fault_scenario(Runtime& rt, const std::string& scenario);

} // namespace troupe::testing

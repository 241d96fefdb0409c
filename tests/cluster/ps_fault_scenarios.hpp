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
///   "ps_worker_rejoin" <file>: scheduled functions each add 1 to a variable
///     and return their process's pid. The chief runs 10 ("PROBE PHASE1
///     pids=..."), then waits (up to 90 s) for <file> to hold the pid of a
///     restarted worker process, and schedules rounds of 10 until one runs
///     there ("PROBE REJOINED pid=<pid> ran=<n> functions=<total>") and the
///     variable equals the number of functions ("PROBE RESULT w=... expected=...").
///   "ps_nan": scheduled functions (rounds of 20) each add a gradient of ones
///     to a variable, passed through check_numerics; worker:1's gradients are
///     NaN. The chief's schedule or join raises that worker's error ("PROBE
///     ERROR ...", status 3), and the workers and ps return serve()'s status.
///   "ps_nan_caught": as "ps_nan", but the chief catches the error, calls
///     Runtime::report_job_failure with it and returns 3.
/// Returns the exit status (0: the task saw what the scenario expects).
/// `argument`: the scenario's argument (the file of "ps_worker_rejoin").
int run_ps_fault_scenario(Runtime& rt, const std::string& scenario, const std::string& argument = {});

} // namespace troupe::testing

#pragma once

// The simulation scenarios troupe-sim runs over seed ranges (and CI runs at
// 1,000 seeds or more each): every one builds a SimulatedCluster from its
// seed, draws its faults from the seed, runs a program on every task and
// throws an Error naming the seed and the invariant when one does not hold.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace troupe_sim {

/// How one seed's run ended, for troupe-sim's tally: a label ("every task
/// returned the fault-free bits", "tasks failed with peer_lost") and what
/// the simulation did.
struct Outcome {
  std::string label;
  uint64_t steps = 0;         ///< actor steps
  double virtual_seconds = 0; ///< virtual time the run took
  uint64_t frames = 0;        ///< data-plane frames between tasks
  uint64_t messages = 0;      ///< messages between tasks' actors (parameter servers)
};

struct Scenario {
  std::string name;
  std::string what;
  /// Runs the scenario under `seed`; throws when an invariant breaks.
  std::function<Outcome(uint64_t seed)> run;
};

/// Every scenario, in the order `troupe-sim --list` prints them.
const std::vector<Scenario>& scenarios();

/// Test-only: a deliberately broken protocol (SimulatedFaults::
/// lose_failure_notices), so that a test can show the scenarios catch it.
void lose_failure_notices(bool on);

/// Prints every task's result of every seed (to see what a replayed seed did).
void show_task_results(bool on);

} // namespace troupe_sim

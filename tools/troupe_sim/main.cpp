// troupe-sim: runs a simulation scenario over a range of seeds, stops at the
// first seed that breaks an invariant and prints the line that replays it.
//   troupe-sim mwms-kill --seeds 1-1000
//   TROUPE_SIM_SEED=417 troupe-sim mwms-kill      (replays seed 417)
//   TROUPE_SIM_SEEDS=1-100000 troupe-sim mwms-kill (more seeds)
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include <troupe/troupe.hpp>

#include "scenarios.hpp"

int main(int argc, char** argv) {
  std::string scenario;
  std::string seeds = "1-1000";
  bool list = false;
  bool lose_notices = false;
  bool show = false;
  CLI::App app("Runs a simulation scenario of troupe over a range of seeds; stops at the first seed that breaks an "
               "invariant and prints the line that replays it. TROUPE_SIM_SEED=N replays one seed, "
               "TROUPE_SIM_SEEDS=A-B runs another range.",
               "troupe-sim");
  app.add_option("scenario", scenario, "the scenario (--list names them)");
  app.add_option("--seeds", seeds, "seeds to run, N or A-B (default 1-1000)");
  app.add_flag("--list", list, "list the scenarios and exit");
  app.add_flag("--lose-failure-notices", lose_notices,
               "test only: a deliberately broken protocol (no abort, run_done or bye frame arrives), to show "
               "that the scenarios catch it");
  app.add_flag("--show", show, "print every task's result (or error) of every seed");
  CLI11_PARSE(app, argc, argv);
  const auto& all = troupe_sim::scenarios();
  if (list) {
    for (const auto& s : all)
      std::cout << s.name << "\n    " << s.what << "\n";
    return 0;
  }
  const troupe_sim::Scenario* chosen = nullptr;
  for (const auto& s : all)
    if (s.name == scenario)
      chosen = &s;
  if (chosen == nullptr) {
    std::cerr << "troupe-sim: no scenario \"" << scenario << "\"; troupe-sim --list names them\n";
    return 2;
  }
  try {
    troupe_sim::lose_failure_notices(lose_notices);
    troupe_sim::show_task_results(show);
    const auto range = troupe::SeedRange::from_env(troupe::SeedRange::parse(seeds));
    std::string command = "troupe-sim " + chosen->name + (lose_notices ? " --lose-failure-notices" : "");
    std::map<std::string, uint64_t> tally;
    uint64_t steps = 0;
    uint64_t frames = 0;
    uint64_t messages = 0;
    double virtual_seconds = 0;
    const auto report = troupe::run_seeds(range, [&](uint64_t seed) {
      const auto outcome = chosen->run(seed);
      ++tally[outcome.label];
      steps += outcome.steps;
      frames += outcome.frames;
      messages += outcome.messages;
      virtual_seconds += outcome.virtual_seconds;
    }, command);
    std::cout << chosen->name << ": " << report.summary() << std::endl;
    if (const auto runs = report.seeds_run - (report.ok() ? 0 : 1); runs > 0) {
      std::printf("  per seed: %.0f actor steps, %.0f frames, %.0f messages, %.3f s of virtual time\n",
                  static_cast<double>(steps) / runs, static_cast<double>(frames) / runs,
                  static_cast<double>(messages) / runs, virtual_seconds / runs);
      for (const auto& [label, count] : tally)
        std::printf("  %6llu x %s\n", static_cast<unsigned long long>(count), label.c_str());
    }
    return report.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "troupe-sim: " << e.what() << "\n";
    return 2;
  }
}

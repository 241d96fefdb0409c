#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace troupe {

/// A range of simulation seeds, both ends included: "417" or "1-1000".
struct SeedRange {
  uint64_t first = 1;
  uint64_t last = 1;

  /// Parses "N" or "A-B" (A <= B); Error(invalid_argument) quoting `text` otherwise.
  [[nodiscard]] static SeedRange parse(std::string_view text);
  /// TROUPE_SIM_SEED (one seed: a replay) or else TROUPE_SIM_SEEDS (a range:
  /// more seeds than a test's default) when set, `fallback` otherwise.
  [[nodiscard]] static SeedRange from_env(SeedRange fallback);

  [[nodiscard]] uint64_t count() const noexcept { return last - first + 1; }
  [[nodiscard]] std::string to_string() const;
};

/// What run_seeds found.
struct SeedRunReport {
  SeedRange seeds;
  uint64_t seeds_run = 0;             ///< counting a failing one
  std::optional<uint64_t> failed_seed; ///< the first seed whose scenario threw
  std::string failure;                 ///< what it threw
  std::string replay;                  ///< "TROUPE_SIM_SEED=417 <command>" when one failed
  double seconds = 0;                  ///< wall-clock time of the seeds run

  [[nodiscard]] bool ok() const noexcept { return !failed_seed.has_value(); }
  [[nodiscard]] double seeds_per_second() const noexcept { return seconds > 0 ? seeds_run / seconds : 0; }
  /// One line when every seed passed ("seeds 1-1000: all 1000 passed in
  /// 12.3 s (81.3 seeds/s)"); the failing seed, its failure and the replay
  /// line otherwise.
  [[nodiscard]] std::string summary() const;
};

/// Runs `scenario(seed)` for every seed of `seeds`, in order, and stops at
/// the first one that throws: a scenario builds its SimulatedCluster from the
/// seed, runs it and throws when an invariant does not hold. `command` reruns
/// the scenario (a test binary and its test name, or `troupe-sim SCENARIO`):
/// the report's replay line sets TROUPE_SIM_SEED in front of it, and
/// SeedRange::from_env then picks that one seed. In a Catch2 test:
///
///     auto report = troupe::run_seeds(troupe::SeedRange::from_env({1, 1000}), scenario,
///                                     "my_tests \"my scenario\"");
///     INFO(report.summary());
///     REQUIRE(report.ok());
SeedRunReport run_seeds(SeedRange seeds, const std::function<void(uint64_t seed)>& scenario,
                        const std::string& command);

} // namespace troupe

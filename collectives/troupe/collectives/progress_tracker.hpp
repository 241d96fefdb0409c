#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <troupe/collectives/collective_key.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

/// "collective #3 of strategy.run #2": how errors and logs name a key.
[[nodiscard]] std::string describe(const CollectiveKey& key);

/// How far the participants of one level got (the replicas of a process, or
/// the workers of a cluster), and which collectives already failed there.
/// Both levels use it to fail fast and alike: a collective that some
/// participant returned from its run without issuing cannot complete, and a
/// participant that arrives late at a failed collective gets the same error.
class ProgressTracker {
public:
  struct Progress {
    uint64_t run = 0;      ///< the latest run it worked on
    bool finished = false; ///< its function returned from `run`
    uint32_t issued = 0;   ///< collectives it issued in `run` (when finished)
    std::string failure;   ///< why it stopped, when it failed
  };

  explicit ProgressTracker(std::size_t participants) : progress_(participants) {}

  /// Participant `who` works on run `run` (and has left every earlier one).
  void working_on(std::size_t who, uint64_t run);
  /// Participant `who` returned from run `run` after issuing `issued` collectives.
  void finished(std::size_t who, uint64_t run, uint32_t issued, std::string failure);

  /// The participants that returned from `key.run` without issuing `key`.
  [[nodiscard]] std::vector<std::size_t> skipped(const CollectiveKey& key) const;
  [[nodiscard]] const Progress& progress(std::size_t who) const { return progress_.at(who); }
  [[nodiscard]] std::size_t participants() const noexcept { return progress_.size(); }

  /// Records that `key` failed here; later arrivals get the same code and reason.
  void record_failure(const CollectiveKey& key, Errc code, std::string why);
  /// The failure of `key` recorded here, if any.
  [[nodiscard]] const std::pair<Errc, std::string>* failure(const CollectiveKey& key) const;
  /// Forgets the failures of `group`'s runs before `run`: no participant can still arrive there.
  void forget_runs_before(uint64_t group, uint64_t run);

private:
  std::vector<Progress> progress_;
  std::map<CollectiveKey, std::pair<Errc, std::string>> failures_;
};

} // namespace troupe::internal

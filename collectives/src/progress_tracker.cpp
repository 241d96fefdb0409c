#include <troupe/collectives/progress_tracker.hpp>

namespace troupe::internal {

std::string describe(const CollectiveKey& key) {
  return "collective #" + std::to_string(key.seq) + " of strategy.run #" + std::to_string(key.run);
}

void ProgressTracker::working_on(std::size_t who, uint64_t run) {
  auto& p = progress_.at(who);
  if (p.run == run && !p.finished)
    return;
  p = Progress{run, false, 0, {}};
}

void ProgressTracker::finished(std::size_t who, uint64_t run, uint32_t issued, std::string failure) {
  progress_.at(who) = Progress{run, true, issued, std::move(failure)};
}

std::vector<std::size_t> ProgressTracker::skipped(const CollectiveKey& key) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < progress_.size(); ++i) {
    const auto& p = progress_[i];
    if (p.finished && p.run == key.run && p.issued <= key.seq)
      out.push_back(i);
  }
  return out;
}

void ProgressTracker::record_failure(const CollectiveKey& key, Errc code, std::string why) {
  failures_[key] = {code, std::move(why)};
}

const std::pair<Errc, std::string>* ProgressTracker::failure(const CollectiveKey& key) const {
  auto i = failures_.find(key);
  return i == failures_.end() ? nullptr : &i->second;
}

void ProgressTracker::forget_runs_before(uint64_t group, uint64_t run) {
  failures_.erase(failures_.lower_bound(CollectiveKey{group, 0, 0}),
                  failures_.lower_bound(CollectiveKey{group, run, 0}));
}

} // namespace troupe::internal

#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/timespan.hpp>

#include <troupe/net/link/frame_header.hpp>

namespace troupe::internal {

/// The faults of a simulated network between the ranks of a simulated
/// cluster, and the seeded draws that apply them to each frame. One instance
/// is shared by every SimLinkActor of a cluster; the simulation runs on one
/// thread, so it needs no lock, and the same seed and the same sends give the
/// same faults. Times are virtual and count from the start of the run.
class SimNetwork {
public:
  /// Faults drawn for every frame between two live ranks.
  struct Rates {
    caf::timespan min_delay{0}; ///< each frame's latency is uniform in [min_delay, max_delay]
    caf::timespan max_delay{0};
    double drop = 0;      ///< a frame is lost (the collective it belongs to times out)
    double duplicate = 0; ///< a frame arrives twice
    double reorder = 0;   ///< a frame is held back, so that later frames of its link pass it
    /// A deliberately broken protocol, to show that a scenario's checks
    /// catch one: no abort, run_done or bye frame arrives.
    bool lose_notices = false;
  };

  /// Frames between `side_a` and `side_b` are held from `from` until `heal`
  /// (a partition, or a frozen task when one side is that task alone). A
  /// window longer than the peer timeout ends in loss verdicts instead: both
  /// sides count the other lost `peer_timeout` after `from`.
  struct Window {
    std::set<int> side_a;
    std::set<int> side_b;
    caf::timespan from{0};
    std::optional<caf::timespan> heal; ///< none: never heals
    std::string what;                  ///< "partition", "freeze of worker:1", for verdicts
  };

  /// A rank killed at `at`: nothing leaves or reaches it after, and every
  /// other rank counts it lost at once (the process's sockets close).
  struct Kill {
    int rank = 0;
    caf::timespan at{0};
  };

  /// A verdict one rank's link gives at a virtual time: `lost` is gone.
  struct Verdict {
    caf::timespan at{0};
    int lost = 0;
    std::string why;
  };

  /// What happened to frames so far (for a run's summary and the tests).
  struct Counts {
    uint64_t frames = 0;
    uint64_t delayed = 0;
    uint64_t held = 0;
    uint64_t dropped = 0;
    uint64_t duplicated = 0;
    uint64_t reordered = 0;
    uint64_t messages = 0; ///< between tasks' actors (message_delay)
  };

  SimNetwork(uint64_t seed, std::vector<std::string> names, Rates rates, std::vector<Window> windows,
             std::vector<Kill> kills, caf::timespan peer_timeout);

  /// The virtual time the run started at: `now` below counts from it.
  void start_at(caf::actor_clock::time_point start) noexcept { start_ = start; }
  [[nodiscard]] caf::timespan since_start(caf::actor_clock::time_point now) const noexcept { return now - start_; }

  /// When a frame of `type` `from` -> `to` sent at `now` arrives: no entry
  /// when it is lost, two when it is duplicated. Each delivery is a delay after `now`.
  [[nodiscard]] std::vector<caf::timespan> deliveries(int from, int to, caf::timespan now, FrameType type);

  /// When a message (a CAF message between two tasks' actors: the
  /// parameter-server protocols, which ride a reliable stream) `from` -> `to`
  /// sent at `now` arrives: a drawn latency, in order per link, held through
  /// a partition that heals; none when either task is dead or the partition
  /// outlasts the peer timeout (its verdicts come instead).
  [[nodiscard]] std::optional<caf::timespan> message_delay(int from, int to, caf::timespan now);

  /// When the latest message `from` -> `to` scheduled so far arrives (0: none).
  [[nodiscard]] caf::timespan last_message_at(int from, int to) const {
    auto i = last_message_.find({from, to});
    return i == last_message_.end() ? caf::timespan{0} : i->second;
  }
  [[nodiscard]] caf::actor_clock::time_point start() const noexcept { return start_; }

  /// `rank`, killed before, runs again from `at` (a restarted process).
  void revive(int rank, caf::timespan at) { revivals_.push_back({rank, at}); }

  /// The verdicts rank `rank`'s link gives, in time order.
  [[nodiscard]] std::vector<Verdict> verdicts_for(int rank) const;

  /// Whether `rank` is dead at `now` (killed).
  [[nodiscard]] bool dead(int rank, caf::timespan now) const;

  [[nodiscard]] const Counts& counts() const noexcept { return counts_; }
  [[nodiscard]] const std::string& name(int rank) const { return names_.at(static_cast<std::size_t>(rank)); }

private:
  /// The window that holds a frame between `a` and `b` at `now`, if any.
  [[nodiscard]] const Window* window_at(int a, int b, caf::timespan now) const;

  std::mt19937_64 rng_;
  std::vector<std::string> names_;
  Rates rates_;
  std::vector<Window> windows_;
  std::vector<Kill> kills_;
  std::vector<Kill> revivals_; ///< restarts: a kill's rank, alive again from `at`
  caf::timespan peer_timeout_;
  caf::actor_clock::time_point start_{};
  /// The latest delivery time on each link, so that frames keep their order
  /// (as a stream transport keeps it) unless a reorder draw holds one back.
  std::map<std::pair<int, int>, caf::timespan> last_delivery_;
  std::map<std::pair<int, int>, caf::timespan> last_message_; ///< the same, for messages
  Counts counts_;
};

} // namespace troupe::internal

#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

/// The last collectives a group took part in, so that when one goes wrong (a
/// stall, a timeout, a fingerprint mismatch, a lost peer) every task's log
/// says what it was doing: each collective's key, kind, tensors and bytes,
/// when it started and ended (or that it is still open, and whom it waits
/// for), and how it ended. Recording costs no allocation per collective (a
/// ring of `capacity` fixed entries, TROUPE_FLIGHT_RECORDER_ENTRIES); text is
/// made only when the block is rendered. Used from one actor: not thread-safe.
class FlightRecorder {
public:
  explicit FlightRecorder(std::size_t capacity);

  [[nodiscard]] bool enabled() const noexcept { return !ring_.empty(); }
  /// Collectives held (at most the capacity).
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  /// `key` started (its first contribution arrived) at `now_ns`.
  void begin(const CollectiveKey& key, const CollectiveFingerprint& fp, int64_t now_ns);
  /// `key`'s algorithm across workers (a static name: "ring", ...).
  void set_algorithm(const CollectiveKey& key, const char* algorithm);
  /// `key` ended at `now_ns`: delivered, or failed with `failure`.
  void end(const CollectiveKey& key, int64_t now_ns, std::optional<Errc> failure);

  /// One block: a line saying `why`, then a line per collective, oldest
  /// first; an open one names what `waiting_for` says it waits for.
  /// `task` ("worker:1") names whose block it is, where log lines may not
  /// (the tasks of a SimulatedCluster share one process); empty: nobody's.
  [[nodiscard]] std::string render(const std::string& why,
                                   const std::function<std::string(const CollectiveKey&)>& waiting_for,
                                   int64_t now_ns, const std::string& task = {}) const;

private:
  enum class State : uint8_t { open, done, failed };
  struct Entry {
    CollectiveKey key;
    CollectiveKind kind = CollectiveKind::all_reduce;
    ReduceOp op = ReduceOp::SUM;
    uint32_t tensors = 0;
    uint64_t bytes = 0;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    State state = State::open;
    Errc code = Errc::internal;
    const char* algorithm = nullptr; ///< across workers; none within one
  };
  /// The newest open entry of `key`, or null.
  Entry* open_entry(const CollectiveKey& key);

  std::vector<Entry> ring_;
  std::size_t next_ = 0;  ///< where the next entry goes
  std::size_t count_ = 0; ///< entries held (at most the capacity)
};

/// "12.345 ms": how flight recorder blocks write a duration of `ns` nanoseconds.
[[nodiscard]] std::string flight_record_milliseconds(int64_t ns);

/// Appends `block` to `<dir>/flight-<task>-<pid>.txt` (':' and '/' in the
/// task's name become '-'); "" or why it could not. Nothing when `dir` is
/// empty (TROUPE_FLIGHT_RECORDER_DIR unset).
std::string write_flight_record(const std::string& dir, const std::string& task, const std::string& block);

} // namespace troupe::internal

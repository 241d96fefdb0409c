#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include <troupe/collectives/fwd.hpp>

namespace troupe {

/// Names one collective instance: the group of participants, the
/// strategy.run it belongs to, and its position among that run's collectives.
/// Every participant derives the same key by counting its own collectives, so
/// replicas that issue collectives in different orders meet under one key with
/// different fingerprints, and are told so.
struct CollectiveKey {
  uint64_t group = 0;
  uint64_t run = 0;
  uint32_t seq = 0;

  friend auto operator<=>(const CollectiveKey&, const CollectiveKey&) = default;
};

/// "collective #2 of run 7 (group 1)".
[[nodiscard]] std::string to_string(const CollectiveKey& key);

} // namespace troupe

#pragma once

#include <catch2/catch.hpp>

#include <exception>
#include <string>
#include <vector>

namespace troupe::testing {

/// The text of a replica's exception.
inline std::string what(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

/// Fails the test with the first exception of any worker's replica
/// (SimulatedReplicaGroups::run's result).
inline void require_all_ok(const std::vector<std::vector<std::exception_ptr>>& errors) {
  for (const auto& worker : errors)
    for (const auto& e : worker)
      if (e)
        FAIL(what(e));
}

} // namespace troupe::testing

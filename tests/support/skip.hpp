#pragma once

// Skipping a test case that cannot run on this machine (a missing package,
// no root for network namespaces) so that ctest says so, instead of a pass.

#include <catch2/catch.hpp>

namespace troupe::testing {

/// What a test binary returns when it skipped every case it started; ctest
/// maps it to "Not Run" (SKIP_RETURN_CODE in tests/CMakeLists.txt).
inline constexpr int skip_return_code = 77;

/// Cases skipped so far in this process (defined in tests/catch_main.cpp).
extern int skipped_cases;

} // namespace troupe::testing

/// Ends the current test case as skipped, with `why` in the output.
#define TROUPE_SKIP(why)                 \
  do {                                   \
    WARN("skipped: " << why);            \
    ++troupe::testing::skipped_cases;    \
    return;                              \
  } while (false)

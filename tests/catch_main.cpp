// The one Catch2 main shared by every test binary (compiled once: it is the slowest TU).
//
// Catch2 2.13 has no "skipped" result. A case that cannot run here calls
// TROUPE_SKIP (tests/support/skip.hpp); when every case a run started was
// skipped — as when ctest runs that one case — the binary exits with 77,
// which ctest reports as "Not Run" (SKIP_RETURN_CODE), never as a pass.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/skip.hpp"

namespace {

int started_cases = 0;

struct CaseCounter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo&) override { ++started_cases; }
};

} // namespace

CATCH_REGISTER_LISTENER(CaseCounter)

namespace troupe::testing {

int skipped_cases = 0;

} // namespace troupe::testing

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed == 0 && started_cases > 0 && troupe::testing::skipped_cases == started_cases)
    return troupe::testing::skip_return_code;
  return failed;
}

#include <catch2/catch.hpp>

#include <troupe/net/auth/refusal_log.hpp>

#include "support/capture_stderr.hpp"

using namespace troupe::internal;
using namespace std::chrono_literals;

TEST_CASE("refusal lines are bounded per window, and the lines held back are counted once", "[net][auth]") {
  RefusalLogLimit limit(3, 10s);
  const auto t0 = RefusalLogLimit::Clock::now();
  int allowed = 0;
  for (int i = 0; i < 100; ++i)
    allowed += limit.allow(t0 + std::chrono::milliseconds(i)) ? 1 : 0;
  CHECK(allowed == 3);
  const auto log = troupe::testing::capture_stderr([&] { CHECK(limit.allow(t0 + 10s)); });
  CHECK_THAT(log, Catch::Contains("97 more refused or dropped connections were not logged (at most 3 lines per 10 s)"));
  CHECK(limit.allow(t0 + 10s));
  CHECK(limit.allow(t0 + 10s));
  CHECK_FALSE(limit.allow(t0 + 10s));
}

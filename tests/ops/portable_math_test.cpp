#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include <troupe/core/errors.hpp>
#include <troupe/ops/portable_math.hpp>

using namespace troupe;
using Catch::Matchers::Contains;

TEST_CASE("portable_cos is within a few ulp of cos and exact where cos is", "[core][portable_math]") {
  CHECK(portable_cos(0.0) == 1.0);
  CHECK(portable_cos(std::numbers::pi) == -1.0);
  double worst = 0;
  for (int i = -20000; i <= 20000; ++i) {
    const double x = i * 0.0509;
    worst = std::max(worst, std::fabs(portable_cos(x) - std::cos(x)));
  }
  CHECK(worst < 4e-16);
  CHECK(std::fabs(portable_cos(1e6) - std::cos(1e6)) < 1e-15);
  CHECK_THROWS_WITH(portable_cos(3e6), Contains("outside [-2^20, 2^20]"));
  CHECK_THROWS_WITH(portable_cos(NAN), Contains("outside"));
}

TEST_CASE("portable_log is within a few ulp of log", "[core][portable_math]") {
  CHECK(portable_log(1.0) == 0.0);
  for (double x = 1e-300; x < 1e300; x *= 1.37)
    REQUIRE(portable_log(x) == Approx(std::log(x)).epsilon(1e-15));
}

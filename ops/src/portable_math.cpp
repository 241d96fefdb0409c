#include <troupe/ops/portable_math.hpp>

#include <cmath>
#include <string>

#include <troupe/core/errors.hpp>

// This file must not contract a * b + c into an FMA (a build with -march=native
// would otherwise): core/CMakeLists.txt compiles it with -ffp-contract=off.

namespace troupe {

namespace {

/// sin(x) for |x| <= pi/4 (fdlibm's __kernel_sin without the tail term).
double kernel_sin(double x) {
  constexpr double s1 = -1.66666666666666324348e-01, s2 = 8.33333333332248946124e-03,
                   s3 = -1.98412698298579493134e-04, s4 = 2.75573137070700676789e-06,
                   s5 = -2.50507602534068634195e-08, s6 = 1.58969099521155010221e-10;
  const double z = x * x;
  const double v = z * x;
  const double r = s2 + z * (s3 + z * (s4 + z * (s5 + z * s6)));
  return x + v * (s1 + z * r);
}

/// cos(x) for |x| <= pi/4 (fdlibm's __kernel_cos without the tail term).
double kernel_cos(double x) {
  constexpr double c1 = 4.16666666666666019037e-02, c2 = -1.38888888888741095749e-03,
                   c3 = 2.48015872894767294178e-05, c4 = -2.75573143513906633035e-07,
                   c5 = 2.08757232129817482790e-09, c6 = -1.13596475577881948265e-11;
  const double z = x * x;
  const double r = z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * c6)))));
  const double hz = 0.5 * z;
  const double w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + z * r);
}

} // namespace

/// Accurate to a few ulp: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
/// ln(m) = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.172, summed to s^23.
double portable_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < 0.70710678118654752440) {
    m *= 2;
    --e;
  }
  const double f = m - 1.0; // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double s2 = s * s;
  double p = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2)
    p = p * s2 + 1.0 / k;
  // fdlibm's split of ln 2: e * ln2_hi is exact for |e| < 2^11.
  constexpr double ln2_hi = 6.93147180369123816490e-01;
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  const double fe = static_cast<double>(e);
  return fe * ln2_hi + (2.0 * s * p + fe * ln2_lo);
}

double portable_cos(double x) {
  constexpr double limit = 1048576.0; // 2^20
  if (!(std::fabs(x) <= limit))
    fail(Errc::invalid_argument, "portable_cos: the argument " + std::to_string(x)
                                   + " is outside [-2^20, 2^20], where the reduction by pi/2 "
                                     "stays exact; reduce it modulo 2 pi first");
  // x = n * pi/2 + r with |r| <= pi/4; fdlibm's two-part pi/2 keeps n * pio2_1 exact.
  constexpr double inv_pio2 = 6.36619772367581382433e-01;
  constexpr double pio2_1 = 1.57079632673412561417e+00;
  constexpr double pio2_1t = 6.07710050650619224932e-11;
  const double n = std::nearbyint(x * inv_pio2);
  const double r = (x - n * pio2_1) - n * pio2_1t;
  switch (static_cast<long long>(n) & 3) {
    case 0: return kernel_cos(r);
    case 1: return -kernel_sin(r);
    case 2: return -kernel_cos(r);
    default: return kernel_sin(r);
  }
}

} // namespace troupe

#pragma once

namespace troupe {

/// Math functions that give the same bits on every CPU and C library, for
/// code whose results must not depend on the machine (random initializers,
/// learning-rate schedules, portable kernels). The C library's log and cos
/// pick code for the CPU they run on (glibc has separate FMA versions) and
/// differ between libraries in the last bit; these use +, -, *, /, frexp and
/// rounding only. A few ulp from the correctly rounded value.

/// ln(x) for finite x > 0.
[[nodiscard]] double portable_log(double x);

/// cos(x) for |x| <= 2^20 (about 1e6); a larger |x|, an infinity or NaN is
/// Error(invalid_argument), since the two-part reduction by pi/2 used here
/// loses accuracy beyond it.
[[nodiscard]] double portable_cos(double x);

} // namespace troupe

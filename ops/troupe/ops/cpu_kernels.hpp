#pragma once

// The CPU kernels that run at the speed of the CPU they run on (internal to
// core/). core/cpu_kernels_isa.cpp is compiled once per instruction set
// (x86-64, x86-64-v3 = AVX2 + FMA, x86-64-v4 = AVX-512); each build exports
// one table of these functions, and cpu_kernels() picks a table once per
// process from TROUPE_KERNELS and the CPU. docs/kernels.md says what each
// mode promises about results.

#include <cstdint>

namespace troupe::internal {

/// out [m, n] = op(a) * op(b) on row-major buffers: a is [a_rows, a_cols],
/// b is [b_rows, b_cols], op transposes when asked; k is the inner dimension,
/// m, n, k > 0.
struct GemmArgs {
  const void* a;
  const void* b;
  void* out;
  int64_t a_rows, a_cols, b_rows, b_cols;
  bool transpose_a, transpose_b;
  int64_t m, n, k;
};

/// Coefficients of one Adam step: var -= alpha * m / (sqrt(v) + epsilon),
/// after m += (g - m) * one_minus_beta_1 and v += (g^2 - v) * one_minus_beta_2.
struct AdamCoefficients {
  float alpha, one_minus_beta_1, one_minus_beta_2, epsilon;
};

/// One instruction set's kernels. exp and log are Eigen's polynomials for every
/// element (tails too), never the C library's, whose code depends on the CPU.
struct CpuKernels {
  /// "x86-64", "x86-64-v3" or "x86-64-v4" (or the build's CPU elsewhere).
  const char* isa;
  void (*gemm_f32)(const GemmArgs&);
  void (*gemm_f64)(const GemmArgs&);
  /// Softmax (or log-softmax) of each row of [rows, cols].
  void (*softmax_f32)(const float* in, float* out, int64_t rows, int64_t cols, bool log);
  void (*softmax_f64)(const double* in, double* out, int64_t rows, int64_t cols, bool log);
  /// loss[r] = logsumexp(row r) - row r[labels[r]]; with backprop, also
  /// softmax(row r) - one_hot(labels[r]). Labels are checked by the caller.
  void (*cross_entropy_f32)(const int64_t* labels, const float* logits, int64_t rows,
                            int64_t cols, float* loss, float* backprop);
  void (*cross_entropy_f64)(const int64_t* labels, const double* logits, int64_t rows,
                            int64_t cols, double* loss, double* backprop);
  /// out[r, c] = x[r, c] + bias[c].
  void (*bias_add_f32)(const float* x, const float* bias, float* out, int64_t rows, int64_t cols);
  void (*relu_f32)(const float* x, float* out, int64_t n);
  /// out = gradients * (features > 0).
  void (*relu_grad_f32)(const float* gradients, const float* features, float* out, int64_t n);
  void (*adam_f32)(float* var, float* m, float* v, const float* grad, int64_t n,
                   const AdamCoefficients& c);
  /// Fixes Eigen's cache-size-based blocking of this table's GEMM to constants,
  /// so that the order of its sums no longer depends on the CPU's caches.
  void (*fix_blocking)();
};

/// The kernels this process uses, chosen on first use: TROUPE_KERNELS=fast
/// (default) takes the widest instruction set the CPU and OS support;
/// `portable` the x86-64 baseline with fixed blocking (the same bits on every
/// x86-64 CPU); `x86-64`, `x86-64-v3` or `x86-64-v4` that one (an error naming
/// the missing features if this CPU lacks them).
[[nodiscard]] const CpuKernels& cpu_kernels();

/// What cpu_kernels() would choose for TROUPE_KERNELS = `mode` (tests).
[[nodiscard]] const CpuKernels& choose_cpu_kernels(const char* mode);

/// The instruction sets this build has kernels for and this CPU runs, widest last.
[[nodiscard]] const char* supported_kernel_isas();

} // namespace troupe::internal

// One per build of cpu_kernels_isa.cpp (only the baseline where the CPU is not x86-64).
extern "C" const troupe::internal::CpuKernels* troupe_cpu_kernels_baseline();
extern "C" const troupe::internal::CpuKernels* troupe_cpu_kernels_x86_64_v3();
extern "C" const troupe::internal::CpuKernels* troupe_cpu_kernels_x86_64_v4();

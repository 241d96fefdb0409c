#pragma once

// The GPU kernels behind troupe's ops (internal to ops/). Each entry enqueues
// its work on ctx.stream of ctx.gpu and returns without waiting; the caller is
// a logical GPU's device actor (DeviceMemory::launch), which has made ctx.gpu
// current. Pointers are device memory of that GPU; shapes are checked by the
// ops before a kernel is launched. Entries throw Error(internal) naming the
// kernel and the driver's error when a launch fails.
//
// CUDA builds provide cuda_gpu_kernels() (ops/cuda/*.cu); troupe's tests run
// the same ops on emulated GPUs with kernels in host memory
// (actors/troupe/actors/gpu/emulated/emulated_gpu_kernels.hpp) through ScopedGpuKernels.

#include <cstdint>
#include <memory>

#include <troupe/build_config.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/core/scoped_override.hpp>

namespace troupe::internal {

enum class GpuBinaryOp : uint8_t { add, subtract, multiply, divide };
enum class GpuUnaryOp : uint8_t { negate, relu, square, sqrt };
/// The dtype of class-index labels.
enum class GpuLabelType : uint8_t { int32, int64, uint8 };

/// One operand of an elementwise binary kernel: `n` elements at `data`, or
/// one element broadcast over all of them: data[0] when `broadcast`, else
/// `value` when `data` is null (a host scalar passed by value).
struct GpuOperand {
  const float* data = nullptr;
  float value = 0;
  bool broadcast = false;
};

/// out[m, n] = op(a) * op(b) for row-major float32 buffers: a is
/// [a_rows, a_cols], b is [b_rows, b_cols], op transposes when asked.
struct GpuGemm {
  const float* a;
  const float* b;
  float* out;
  int64_t a_rows, a_cols, b_rows, b_cols;
  bool transpose_a, transpose_b;
  int64_t m, n, k;
};

/// The kernels (float32 unless named otherwise).
struct GpuKernels {
  /// "CUDA", or what emulates it.
  const char* name;
  void (*binary_f32)(const GpuLaunchContext& ctx, GpuBinaryOp op, GpuOperand a, GpuOperand b, float* out,
                     int64_t n);
  void (*unary_f32)(const GpuLaunchContext& ctx, GpuUnaryOp op, const float* x, float* out, int64_t n);
  /// out = gradients * (features > 0).
  void (*relu_grad_f32)(const GpuLaunchContext& ctx, const float* gradients, const float* features, float* out,
                        int64_t n);
  /// out[r, c] = x[r, c] + bias[c].
  void (*bias_add_f32)(const GpuLaunchContext& ctx, const float* x, const float* bias, float* out, int64_t rows,
                       int64_t cols);
  /// x viewed as [outer, length, inner]: out[o, i] = scale * sum over k of x[o, k, i].
  void (*reduce_sum_f32)(const GpuLaunchContext& ctx, const float* x, float* out, int64_t outer, int64_t length,
                         int64_t inner, float scale);
  /// Through cuBLAS (ctx.handles->blas, created on first use), in full float32 (no TF32).
  void (*gemm_f32)(const GpuLaunchContext& ctx, const GpuGemm& args);
  /// Softmax (or log-softmax) of each row of [rows, cols].
  void (*softmax_f32)(const GpuLaunchContext& ctx, const float* in, float* out, int64_t rows, int64_t cols,
                      bool log);
  /// loss[r] = logsumexp(row r) - row r[labels[r]]; with backprop (may be
  /// null), also softmax(row r) - one_hot(labels[r]). A label outside
  /// [0, cols) gives NaN in its row's loss and backprop, as TensorFlow's GPU kernel.
  void (*cross_entropy_f32)(const GpuLaunchContext& ctx, const void* labels, GpuLabelType label_type,
                            const float* logits, int64_t rows, int64_t cols, float* loss, float* backprop);
  /// counts[0] = the number of rows whose argmax (first index on ties)
  /// equals the label; counts[1] = the first row whose label is outside
  /// [0, cols), or `rows` when none is. `counts` is device memory of two int64.
  void (*accuracy_count_f32)(const GpuLaunchContext& ctx, const void* labels, GpuLabelType label_type,
                             const float* logits, int64_t rows, int64_t cols, int64_t* counts);
  /// y += alpha * x.
  void (*axpy_f32)(const GpuLaunchContext& ctx, float* y, float alpha, const float* x, int64_t n);
  /// Keras SGD with momentum: accum = momentum * accum - lr * grad; var += accum,
  /// or with nesterov var += momentum * accum - lr * grad.
  void (*momentum_f32)(const GpuLaunchContext& ctx, float* var, float* accum, const float* grad, int64_t n,
                       float learning_rate, float momentum, bool nesterov);
  /// m += (g - m) * one_minus_beta_1; v += (g^2 - v) * one_minus_beta_2;
  /// var -= alpha * m / (sqrt(v) + epsilon).
  void (*adam_f32)(const GpuLaunchContext& ctx, float* var, float* m, float* v, const float* grad, int64_t n,
                   float alpha, float one_minus_beta_1, float one_minus_beta_2, float epsilon);
  /// outputs[j][i] = scale * (inputs[0][i] + ... + inputs[count - 1][i]),
  /// summed in that order, for each of the `out_count` outputs (one read of
  /// the inputs, as many writes as outputs). Inputs and outputs may live on
  /// other GPUs of the process (peer access enabled by the caller) or on
  /// other logical GPUs of this card, and may alias each other: element i of
  /// every input is read before element i of any output is written.
  void (*sum_n_f32)(const GpuLaunchContext& ctx, const float* const* inputs, int count, float* const* outputs,
                    int out_count, int64_t n, float scale);
};

/// The most inputs, and the most outputs, sum_n_f32 takes at once.
inline constexpr int kGpuSumMaxInputs = 16;

/// The kernels GPU ops use: the ScopedGpuKernels in force, else CUDA's in a
/// CUDA build; Error(not_supported) in a build without CUDA (no GPU tensor
/// can exist there).
[[nodiscard]] const GpuKernels& gpu_kernels();

#if TROUPE_HAVE_CUDA
/// CUDA's kernels (ops/cuda/).
[[nodiscard]] const GpuKernels& cuda_gpu_kernels();
#endif

/// Replaces the kernels while it lives (tests pair it with a ScopedGpuBackend).
using ScopedGpuKernels = ScopedOverride<const GpuKernels>;

} // namespace troupe::internal

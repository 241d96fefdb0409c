// Elementwise kernels: arithmetic, activations, bias, the optimizer updates
// and sum_n. Each thread walks a grid-stride loop over int64 indices.
//
// Where the CPU op rounds a product before adding it (Eigen, compiled without
// FMA contraction), the update kernels spell out __fmul_rn / __fadd_rn:
// nvcc would otherwise fuse them into an FMA and the GPU's weights would
// drift from the CPU's in the last bit.

#include <string>

#include <troupe/core/errors.hpp>

#include "cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "grid_stride.hpp"

namespace troupe::internal::cuda_kernels {

namespace {

// -- binary and unary ---------------------------------------------------------------------

/// A GpuOperand as one thread reads it: its elements, or one value for all of
/// them (a broadcast element is loaded once, up front).
struct ResolvedOperand {
  const float* elements;
  float value;

  __device__ explicit ResolvedOperand(const GpuOperand& operand)
    : elements(operand.broadcast ? nullptr : operand.data),
      value(operand.broadcast ? operand.data[0] : operand.value) {}

  __device__ float operator[](int64_t i) const { return elements != nullptr ? elements[i] : value; }
};

template <GpuBinaryOp Op>
__device__ float apply_binary(float a, float b) {
  if constexpr (Op == GpuBinaryOp::add)
    return a + b;
  else if constexpr (Op == GpuBinaryOp::subtract)
    return a - b;
  else if constexpr (Op == GpuBinaryOp::multiply)
    return a * b;
  else
    return a / b; // IEEE division: nvcc's default -prec-div=true, and no fast math
}

template <GpuBinaryOp Op>
__global__ void binary_kernel(GpuOperand a, GpuOperand b, float* out, int64_t n) {
  const ResolvedOperand lhs{a};
  const ResolvedOperand rhs{b};
  for (int64_t i = grid_start(); i < n; i += grid_stride())
    out[i] = apply_binary<Op>(lhs[i], rhs[i]);
}

template <GpuUnaryOp Op>
__device__ float apply_unary(float x) {
  if constexpr (Op == GpuUnaryOp::negate)
    return -x;
  else if constexpr (Op == GpuUnaryOp::relu)
    return x < 0.0f ? 0.0f : x; // as the CPU's Eigen max(x, 0): NaN and -0 pass through
  else if constexpr (Op == GpuUnaryOp::square)
    return x * x;
  else
    return sqrtf(x); // IEEE square root: nvcc's default -prec-sqrt=true
}

template <GpuUnaryOp Op>
__global__ void unary_kernel(const float* x, float* out, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_stride())
    out[i] = apply_unary<Op>(x[i]);
}

__global__ void relu_grad_kernel(const float* gradients, const float* features, float* out, int64_t n) {
  // TensorFlow's and the CPU's gradients * (features > 0): a NaN gradient stays NaN.
  for (int64_t i = grid_start(); i < n; i += grid_stride())
    out[i] = gradients[i] * (features[i] > 0.0f ? 1.0f : 0.0f);
}

__global__ void bias_add_kernel(const float* x, const float* bias, float* out, int64_t n, int64_t cols) {
  int64_t i = grid_start();
  if (i >= n)
    return;
  // The column advances by stride % cols per step: no 64-bit division per element.
  const int64_t stride = grid_stride();
  const int64_t column_step = stride % cols;
  int64_t column = i % cols;
  for (; i < n; i += stride) {
    out[i] = x[i] + bias[column];
    column += column_step;
    if (column >= cols)
      column -= cols;
  }
}

// -- optimizer updates --------------------------------------------------------------------

__global__ void axpy_kernel(float* y, float alpha, const float* x, int64_t n) {
  for (int64_t i = grid_start(); i < n; i += grid_stride())
    y[i] = __fadd_rn(y[i], __fmul_rn(alpha, x[i]));
}

__global__ void momentum_kernel(float* var, float* accum, const float* grad, int64_t n, float learning_rate,
                                float momentum, bool nesterov) {
  // The CPU op's expressions in its order (apply_momentum in ops/src/optimizer_ops.cpp).
  for (int64_t i = grid_start(); i < n; i += grid_stride()) {
    const float step = __fmul_rn(learning_rate, grad[i]);
    const float a = __fsub_rn(__fmul_rn(momentum, accum[i]), step);
    accum[i] = a;
    var[i] = nesterov ? __fsub_rn(__fadd_rn(var[i], __fmul_rn(momentum, a)), step) : __fadd_rn(var[i], a);
  }
}

__global__ void adam_kernel(float* var, float* m, float* v, const float* grad, int64_t n, float alpha,
                            float one_minus_beta_1, float one_minus_beta_2, float epsilon) {
  // The CPU kernel's expressions in its order (adam_f32 in ops/src/cpu_kernels_isa.cpp).
  for (int64_t i = grid_start(); i < n; i += grid_stride()) {
    const float g = grad[i];
    const float m0 = m[i];
    const float v0 = v[i];
    const float m1 = __fadd_rn(m0, __fmul_rn(__fsub_rn(g, m0), one_minus_beta_1));
    const float m2 = __fadd_rn(v0, __fmul_rn(__fsub_rn(__fmul_rn(g, g), v0), one_minus_beta_2));
    m[i] = m1;
    v[i] = m2;
    var[i] = __fsub_rn(var[i], __fdiv_rn(__fmul_rn(alpha, m1), __fadd_rn(__fsqrt_rn(m2), epsilon)));
  }
}

// -- sum_n --------------------------------------------------------------------------------

/// sum_n's input and output pointers, passed by value in the kernel's parameters.
struct SumOperands {
  const float* inputs[kGpuSumMaxInputs];
  float* outputs[kGpuSumMaxInputs];
  int count;
  int out_count;
};

__global__ void sum_n_kernel(SumOperands io, int64_t n, float scale) {
  for (int64_t i = grid_start(); i < n; i += grid_stride()) {
    // Left to right, every input read before any output (which may alias one) is written.
    float total = io.inputs[0][i];
    for (int input = 1; input < io.count; ++input)
      total = __fadd_rn(total, io.inputs[input][i]);
    const float result = scale * total;
    for (int output = 0; output < io.out_count; ++output)
      io.outputs[output][i] = result;
  }
}

__global__ void fill_kernel(SumOperands io, int64_t n, float value) {
  for (int64_t i = grid_start(); i < n; i += grid_stride())
    for (int output = 0; output < io.out_count; ++output)
      io.outputs[output][i] = value;
}

// -- dispatch -----------------------------------------------------------------------------

template <GpuBinaryOp Op>
void launch_binary(const GpuLaunchContext& ctx, const GpuOperand& a, const GpuOperand& b, float* out, int64_t n) {
  binary_kernel<Op><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(a, b, out, n);
}

template <GpuUnaryOp Op>
void launch_unary(const GpuLaunchContext& ctx, const float* x, float* out, int64_t n) {
  unary_kernel<Op><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, out, n);
}

} // namespace

void binary_f32(const GpuLaunchContext& ctx, GpuBinaryOp op, GpuOperand a, GpuOperand b, float* out, int64_t n) {
  if (n <= 0)
    return; // a broadcast operand's data[0] may not exist then
  switch (op) {
    case GpuBinaryOp::add: launch_binary<GpuBinaryOp::add>(ctx, a, b, out, n); break;
    case GpuBinaryOp::subtract: launch_binary<GpuBinaryOp::subtract>(ctx, a, b, out, n); break;
    case GpuBinaryOp::multiply: launch_binary<GpuBinaryOp::multiply>(ctx, a, b, out, n); break;
    case GpuBinaryOp::divide: launch_binary<GpuBinaryOp::divide>(ctx, a, b, out, n); break;
    default:
      fail(Errc::internal, "binary_f32 on GPU " + std::to_string(ctx.gpu) + ": unknown operation "
                             + std::to_string(static_cast<int>(op)));
  }
  check_launch("binary_f32", ctx.gpu);
}

void unary_f32(const GpuLaunchContext& ctx, GpuUnaryOp op, const float* x, float* out, int64_t n) {
  if (n <= 0)
    return;
  switch (op) {
    case GpuUnaryOp::negate: launch_unary<GpuUnaryOp::negate>(ctx, x, out, n); break;
    case GpuUnaryOp::relu: launch_unary<GpuUnaryOp::relu>(ctx, x, out, n); break;
    case GpuUnaryOp::square: launch_unary<GpuUnaryOp::square>(ctx, x, out, n); break;
    case GpuUnaryOp::sqrt: launch_unary<GpuUnaryOp::sqrt>(ctx, x, out, n); break;
    default:
      fail(Errc::internal, "unary_f32 on GPU " + std::to_string(ctx.gpu) + ": unknown operation "
                             + std::to_string(static_cast<int>(op)));
  }
  check_launch("unary_f32", ctx.gpu);
}

void relu_grad_f32(const GpuLaunchContext& ctx, const float* gradients, const float* features, float* out,
                   int64_t n) {
  if (n <= 0)
    return;
  relu_grad_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(gradients, features, out, n);
  check_launch("relu_grad_f32", ctx.gpu);
}

void bias_add_f32(const GpuLaunchContext& ctx, const float* x, const float* bias, float* out, int64_t rows,
                  int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return;
  const int64_t n = rows * cols;
  bias_add_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, bias, out, n, cols);
  check_launch("bias_add_f32", ctx.gpu);
}

void axpy_f32(const GpuLaunchContext& ctx, float* y, float alpha, const float* x, int64_t n) {
  if (n <= 0)
    return;
  axpy_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(y, alpha, x, n);
  check_launch("axpy_f32", ctx.gpu);
}

void momentum_f32(const GpuLaunchContext& ctx, float* var, float* accum, const float* grad, int64_t n,
                  float learning_rate, float momentum, bool nesterov) {
  if (n <= 0)
    return;
  momentum_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(var, accum, grad, n, learning_rate,
                                                                          momentum, nesterov);
  check_launch("momentum_f32", ctx.gpu);
}

void adam_f32(const GpuLaunchContext& ctx, float* var, float* m, float* v, const float* grad, int64_t n,
              float alpha, float one_minus_beta_1, float one_minus_beta_2, float epsilon) {
  if (n <= 0)
    return;
  adam_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(var, m, v, grad, n, alpha, one_minus_beta_1,
                                                                      one_minus_beta_2, epsilon);
  check_launch("adam_f32", ctx.gpu);
}

void sum_n_f32(const GpuLaunchContext& ctx, const float* const* inputs, int count, float* const* outputs,
               int out_count, int64_t n, float scale) {
  if (count < 0 || count > kGpuSumMaxInputs || out_count < 1 || out_count > kGpuSumMaxInputs)
    fail(Errc::internal, "sum_n_f32 on GPU " + std::to_string(ctx.gpu) + ": " + std::to_string(count)
                           + " inputs and " + std::to_string(out_count) + " outputs, outside the 0 (1) to "
                           + std::to_string(kGpuSumMaxInputs) + " it takes at once");
  if (n <= 0)
    return;
  SumOperands io{};
  for (int input = 0; input < count; ++input)
    io.inputs[input] = inputs[input];
  for (int output = 0; output < out_count; ++output)
    io.outputs[output] = outputs[output];
  io.count = count;
  io.out_count = out_count;
  if (count == 0)  // an empty sum is 0, as the emulated kernel gives
    fill_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(io, n, scale * 0.0f);
  else
    sum_n_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(io, n, scale);
  check_launch("sum_n_f32", ctx.gpu);
}

} // namespace troupe::internal::cuda_kernels

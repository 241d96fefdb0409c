#include <troupe/actors/gpu/emulated/emulated_gpu_kernels.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <troupe/core/errors.hpp>
#include <troupe/ops/cpu_kernels.hpp>

namespace troupe::testing {

namespace {

using internal::GpuBinaryOp;
using internal::GpuGemm;
using internal::GpuLabelType;
using internal::GpuLaunchContext;
using internal::GpuOperand;
using internal::GpuUnaryOp;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Label `row` as int64, whatever its dtype.
int64_t label_at(const void* labels, GpuLabelType type, int64_t row) {
  switch (type) {
    case GpuLabelType::int32: return static_cast<const int32_t*>(labels)[row];
    case GpuLabelType::int64: return static_cast<const int64_t*>(labels)[row];
    case GpuLabelType::uint8: return static_cast<const uint8_t*>(labels)[row];
  }
  return -1; // not a GpuLabelType: reads as out of range
}

/// An operand of binary_f32 as the kernel reads it. A broadcast value is read
/// once, up front, so that an `out` aliasing it cannot change it mid-way.
struct Operand {
  explicit Operand(const GpuOperand& operand)
    : elements(operand.broadcast ? nullptr : operand.data),
      value(operand.broadcast ? operand.data[0] : operand.value) {}
  float operator[](int64_t i) const { return elements != nullptr ? elements[i] : value; }

  const float* elements;
  float value;
};

float apply(GpuBinaryOp op, float a, float b) {
  switch (op) {
    case GpuBinaryOp::add: return a + b;
    case GpuBinaryOp::subtract: return a - b;
    case GpuBinaryOp::multiply: return a * b;
    case GpuBinaryOp::divide: return a / b;
  }
  return kNaN; // not a GpuBinaryOp
}

void binary_f32(const GpuLaunchContext&, GpuBinaryOp op, GpuOperand a, GpuOperand b, float* out,
                int64_t n) {
  if (n == 0)
    return; // a broadcast operand's data[0] may not exist then
  const Operand lhs{a};
  const Operand rhs{b};
  for (int64_t i = 0; i < n; ++i)
    out[i] = apply(op, lhs[i], rhs[i]);
}

void unary_f32(const GpuLaunchContext&, GpuUnaryOp op, const float* x, float* out, int64_t n) {
  if (n == 0)
    return;
  switch (op) {
    case GpuUnaryOp::relu: internal::cpu_kernels().relu_f32(x, out, n); return;
    case GpuUnaryOp::negate:
      for (int64_t i = 0; i < n; ++i)
        out[i] = -x[i];
      return;
    case GpuUnaryOp::square:
      for (int64_t i = 0; i < n; ++i)
        out[i] = x[i] * x[i];
      return;
    case GpuUnaryOp::sqrt:
      for (int64_t i = 0; i < n; ++i)
        out[i] = std::sqrt(x[i]);
      return;
  }
}

void relu_grad_f32(const GpuLaunchContext&, const float* gradients, const float* features,
                   float* out, int64_t n) {
  if (n == 0)
    return;
  internal::cpu_kernels().relu_grad_f32(gradients, features, out, n);
}

void bias_add_f32(const GpuLaunchContext&, const float* x, const float* bias, float* out,
                  int64_t rows, int64_t cols) {
  if (rows == 0 || cols == 0)
    return;
  internal::cpu_kernels().bias_add_f32(x, bias, out, rows, cols);
}

void reduce_sum_f32(const GpuLaunchContext&, const float* x, float* out, int64_t outer,
                    int64_t length, int64_t inner, float scale) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float* column = x + o * length * inner + i;
      // Start from the first element, not 0, so that a sum of -0 stays -0.
      float total = length > 0 ? column[0] : 0.0f;
      for (int64_t k = 1; k < length; ++k)
        total += column[k * inner];
      out[o * inner + i] = scale * total;
    }
}

void gemm_f32(const GpuLaunchContext&, const GpuGemm& args) {
  if (args.m == 0 || args.n == 0)
    return;
  if (args.k == 0) {
    // An empty inner product is 0 (cuBLAS with beta = 0); the CPU kernel wants k > 0.
    std::fill_n(args.out, args.m * args.n, 0.0f);
    return;
  }
  internal::cpu_kernels().gemm_f32({.a = args.a,
                                    .b = args.b,
                                    .out = args.out,
                                    .a_rows = args.a_rows,
                                    .a_cols = args.a_cols,
                                    .b_rows = args.b_rows,
                                    .b_cols = args.b_cols,
                                    .transpose_a = args.transpose_a,
                                    .transpose_b = args.transpose_b,
                                    .m = args.m,
                                    .n = args.n,
                                    .k = args.k});
}

void softmax_f32(const GpuLaunchContext&, const float* in, float* out, int64_t rows, int64_t cols,
                 bool log) {
  if (rows == 0 || cols == 0)
    return;
  internal::cpu_kernels().softmax_f32(in, out, rows, cols, log);
}

void cross_entropy_f32(const GpuLaunchContext&, const void* labels, GpuLabelType label_type,
                       const float* logits, int64_t rows, int64_t cols, float* loss,
                       float* backprop) {
  const auto& cpu = internal::cpu_kernels();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t label = label_at(labels, label_type, r);
    float* backprop_row = backprop != nullptr ? backprop + r * cols : nullptr;
    if (label < 0 || label >= cols) {
      // NaN, as TensorFlow's GPU kernel gives; the CPU kernel must never see such a label.
      loss[r] = kNaN;
      if (backprop_row != nullptr)
        std::fill_n(backprop_row, cols, kNaN);
      continue;
    }
    // One row per call: the CPU kernel works row by row, so the bits match the CPU op's.
    cpu.cross_entropy_f32(&label, logits + r * cols, 1, cols, loss + r, backprop_row);
  }
}

void accuracy_count_f32(const GpuLaunchContext&, const void* labels, GpuLabelType label_type,
                        const float* logits, int64_t rows, int64_t cols, int64_t* counts) {
  int64_t correct = 0;
  int64_t first_bad_row = rows;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t label = label_at(labels, label_type, r);
    if (label < 0 || label >= cols) {
      first_bad_row = std::min(first_bad_row, r);
      continue; // no argmax in [0, cols) can equal it
    }
    const float* row = logits + r * cols;
    // A strict > keeps the first index on ties, and is false against NaN.
    int64_t argmax = 0;
    for (int64_t c = 1; c < cols; ++c)
      if (row[c] > row[argmax])
        argmax = c;
    if (argmax == label)
      ++correct;
  }
  counts[0] = correct;
  counts[1] = first_bad_row;
}

void axpy_f32(const GpuLaunchContext&, float* y, float alpha, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += alpha * x[i];
}

void momentum_f32(const GpuLaunchContext&, float* var, float* accum, const float* grad, int64_t n,
                  float learning_rate, float momentum, bool nesterov) {
  // The CPU op's expressions, in its order (apply_momentum in ops/src/optimizer_ops.cpp).
  for (int64_t i = 0; i < n; ++i) {
    accum[i] = momentum * accum[i] - learning_rate * grad[i];
    if (nesterov)
      var[i] = var[i] + momentum * accum[i] - learning_rate * grad[i];
    else
      var[i] = var[i] + accum[i];
  }
}

void adam_f32(const GpuLaunchContext&, float* var, float* m, float* v, const float* grad, int64_t n,
              float alpha, float one_minus_beta_1, float one_minus_beta_2, float epsilon) {
  if (n == 0)
    return;
  internal::cpu_kernels().adam_f32(var, m, v, grad, n,
                                   {alpha, one_minus_beta_1, one_minus_beta_2, epsilon});
}

void sum_n_f32(const GpuLaunchContext&, const float* const* inputs, int count, float* const* outputs,
               int out_count, int64_t n, float scale) {
  // The CUDA kernel takes its pointers by value, at most kGpuSumMaxInputs of
  // each: an op that passes more must fail here too, not only on a GPU.
  if (count > internal::kGpuSumMaxInputs || out_count < 1 || out_count > internal::kGpuSumMaxInputs)
    fail(Errc::internal, "sum_n_f32: " + std::to_string(count) + " inputs and " + std::to_string(out_count)
                           + " outputs, outside what it takes at once (at most "
                           + std::to_string(internal::kGpuSumMaxInputs) + " each, one output or more)");
  for (int64_t i = 0; i < n; ++i) {
    // Element i of every input is read before element i of any output (which may alias one) is written.
    float total = count > 0 ? inputs[0][i] : 0.0f;
    for (int input = 1; input < count; ++input)
      total += inputs[input][i];
    for (int output = 0; output < out_count; ++output)
      outputs[output][i] = scale * total;
  }
}

constexpr internal::GpuKernels kEmulatedGpuKernels{
  .name = "emulated (host)",
  .binary_f32 = &binary_f32,
  .unary_f32 = &unary_f32,
  .relu_grad_f32 = &relu_grad_f32,
  .bias_add_f32 = &bias_add_f32,
  .reduce_sum_f32 = &reduce_sum_f32,
  .gemm_f32 = &gemm_f32,
  .softmax_f32 = &softmax_f32,
  .cross_entropy_f32 = &cross_entropy_f32,
  .accuracy_count_f32 = &accuracy_count_f32,
  .axpy_f32 = &axpy_f32,
  .momentum_f32 = &momentum_f32,
  .adam_f32 = &adam_f32,
  .sum_n_f32 = &sum_n_f32,
};

} // namespace

const internal::GpuKernels& emulated_gpu_kernels() {
  return kEmulatedGpuKernels;
}

} // namespace troupe::testing

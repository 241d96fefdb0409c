#pragma once

// The entries of CUDA's GpuKernels table (private to ops/cuda/), each with
// the signature and contract of its member in ops/gpu_kernels.hpp;
// cuda_gpu_kernels.cpp assembles them into the table.

#include <cstdint>

#include <troupe/ops/gpu_kernels.hpp>

namespace troupe::internal::cuda_kernels {

// -- elementwise_kernels.cu -----------------------------------------------------------------

void binary_f32(const GpuLaunchContext& ctx, GpuBinaryOp op, GpuOperand a, GpuOperand b, float* out, int64_t n);
void unary_f32(const GpuLaunchContext& ctx, GpuUnaryOp op, const float* x, float* out, int64_t n);
void relu_grad_f32(const GpuLaunchContext& ctx, const float* gradients, const float* features, float* out,
                   int64_t n);
void bias_add_f32(const GpuLaunchContext& ctx, const float* x, const float* bias, float* out, int64_t rows,
                  int64_t cols);
void axpy_f32(const GpuLaunchContext& ctx, float* y, float alpha, const float* x, int64_t n);
void momentum_f32(const GpuLaunchContext& ctx, float* var, float* accum, const float* grad, int64_t n,
                  float learning_rate, float momentum, bool nesterov);
void adam_f32(const GpuLaunchContext& ctx, float* var, float* m, float* v, const float* grad, int64_t n,
              float alpha, float one_minus_beta_1, float one_minus_beta_2, float epsilon);
void sum_n_f32(const GpuLaunchContext& ctx, const float* const* inputs, int count, float* const* outputs,
               int out_count, int64_t n, float scale);

// -- reduction_kernels.cu -------------------------------------------------------------------

void reduce_sum_f32(const GpuLaunchContext& ctx, const float* x, float* out, int64_t outer, int64_t length,
                    int64_t inner, float scale);
void softmax_f32(const GpuLaunchContext& ctx, const float* in, float* out, int64_t rows, int64_t cols, bool log);
void cross_entropy_f32(const GpuLaunchContext& ctx, const void* labels, GpuLabelType label_type,
                       const float* logits, int64_t rows, int64_t cols, float* loss, float* backprop);
void accuracy_count_f32(const GpuLaunchContext& ctx, const void* labels, GpuLabelType label_type,
                        const float* logits, int64_t rows, int64_t cols, int64_t* counts);

// -- blas_kernels.cu ------------------------------------------------------------------------

void gemm_f32(const GpuLaunchContext& ctx, const GpuGemm& args);

} // namespace troupe::internal::cuda_kernels

// CUDA's GpuKernels table (ops/gpu_kernels.hpp): the entries of ops/cuda/*.cu.

#include <troupe/ops/gpu_kernels.hpp>

#include "cuda_kernels.hpp"

namespace troupe::internal {

const GpuKernels& cuda_gpu_kernels() {
  static constexpr GpuKernels kernels{
    .name = "CUDA",
    .binary_f32 = &cuda_kernels::binary_f32,
    .unary_f32 = &cuda_kernels::unary_f32,
    .relu_grad_f32 = &cuda_kernels::relu_grad_f32,
    .bias_add_f32 = &cuda_kernels::bias_add_f32,
    .reduce_sum_f32 = &cuda_kernels::reduce_sum_f32,
    .gemm_f32 = &cuda_kernels::gemm_f32,
    .softmax_f32 = &cuda_kernels::softmax_f32,
    .cross_entropy_f32 = &cuda_kernels::cross_entropy_f32,
    .accuracy_count_f32 = &cuda_kernels::accuracy_count_f32,
    .axpy_f32 = &cuda_kernels::axpy_f32,
    .momentum_f32 = &cuda_kernels::momentum_f32,
    .adam_f32 = &cuda_kernels::adam_f32,
    .sum_n_f32 = &cuda_kernels::sum_n_f32,
  };
  return kernels;
}

} // namespace troupe::internal

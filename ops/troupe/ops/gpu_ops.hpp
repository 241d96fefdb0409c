#pragma once

// The GPU half of troupe's ops (internal to ops/): each op in tensor_ops.cpp,
// nn_ops.cpp and optimizer_ops.cpp checks its operands as on the CPU, then
// comes here when an operand lives on a GPU. Work is enqueued on that GPU's
// stream through its device actor (DeviceMemory::launch) and the op returns
// at once; reading the result on the host (`to("CPU:0")`) waits for it.
//
// The op runs on the GPU of its first GPU operand. Host operands are copied
// there first, as TensorFlow places an op with a GPU input on that GPU; a
// host scalar of an elementwise op travels by value instead. GPU kernels take
// float32 (labels: int32, int64, uint8); another dtype is
// Error(not_supported) naming the op, the device and the fix.

#include <cstdint>

#include <troupe/ops/gpu_kernels.hpp>
#include <troupe/ops/nn_ops.hpp>
#include <troupe/ops/optimizer_ops.hpp>

namespace troupe::internal {

/// Whether any operand is in GPU memory (the op then runs on a GPU).
[[nodiscard]] bool any_on_gpu(const Tensor& a) noexcept;
[[nodiscard]] bool any_on_gpu(const Tensor& a, const Tensor& b) noexcept;
[[nodiscard]] bool any_on_gpu(const Tensor& a, const Tensor& b, const Tensor& c) noexcept;
[[nodiscard]] bool any_on_gpu(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d) noexcept;

/// a op b with `shape` (checked by the caller: equal shapes or a rank-0 operand).
[[nodiscard]] Tensor gpu_binary(GpuBinaryOp kind, const Tensor& a, const Tensor& b, const Shape& shape,
                                const char* op);
[[nodiscard]] Tensor gpu_unary(GpuUnaryOp kind, const Tensor& x, const char* op);
[[nodiscard]] Tensor gpu_relu_grad(const Tensor& gradients, const Tensor& features);
[[nodiscard]] Tensor gpu_bias_add(const Tensor& value, const Tensor& bias);
/// x viewed as [outer, length, inner] summed over `length` into `shape`, times `scale`.
[[nodiscard]] Tensor gpu_reduce_sum(const Tensor& x, int64_t outer, int64_t length, int64_t inner,
                                    const Shape& shape, float scale, const char* op);
/// Shapes checked by the caller; m, n, k as there.
[[nodiscard]] Tensor gpu_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, int64_t m,
                                int64_t n, int64_t k);
[[nodiscard]] Tensor gpu_softmax(const Tensor& logits, bool log);
/// Labels and logits checked by the caller (shapes, dtypes); label values are
/// not: an out-of-range label gives NaN in its row, as TensorFlow's GPU kernel.
[[nodiscard]] SoftmaxCrossEntropy gpu_cross_entropy(const Tensor& labels, const Tensor& logits, int64_t classes,
                                                    bool with_loss, bool with_backprop, const char* op);
/// Waits for the GPU (the count comes back to the host); an out-of-range
/// label is Error(invalid_argument) naming its row, as on the CPU.
[[nodiscard]] int64_t gpu_accuracy_count(const Tensor& labels, const Tensor& logits, int64_t classes);
void gpu_axpy(Tensor& y, double alpha, const Tensor& x);
void gpu_momentum(Tensor& var, Tensor& accum, const Tensor& grad, const MomentumOptions& options);
/// `alpha` is the step's bias-corrected learning rate.
void gpu_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, double alpha, const AdamOptions& options);

} // namespace troupe::internal

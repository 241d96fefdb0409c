#pragma once

#include <cstdint>

#include <troupe/core/tensor.hpp>
// Training code that includes this header for the NN ops gets the optimizer
// updates too, as it did before they had a header of their own.
#include <troupe/ops/optimizer_ops.hpp>

namespace troupe {

// Neural-network kernels on host tensors, as TensorFlow's `tf.linalg.matmul`,
// `tf.nn.*` and `tf.math.*` ops, for models whose backward pass is written by
// hand (there is no autodiff in troupe).
//
// Common rules, as in core/tensor_ops.hpp:
// - Each op returns a new tensor on the first operand's device; inputs are never written.
// - Operands that must agree and do not throw Error(dtype_mismatch /
//   shape_mismatch) naming both operands and the fix; a dtype the op does not
//   take throws Error(not_supported) naming the dtypes it does take; an empty
//   handle throws Error(invalid_argument).
// - float16 and bfloat16 compute in float32 and round once at the end.
// - Integer arithmetic wraps around on overflow, as TensorFlow's kernels.
// - Kernels run on the calling thread only (Eigen is never multi-threaded
//   here): in troupe the replicas are the parallelism.

// -- matrix products ------------------------------------------------------------------

/// The matrix product of rank-2 `a` and `b`, as tf.linalg.matmul: [M, K] x [K, N]
/// gives [M, N], where `transpose_a` reads `a` as its transpose (so `a` is [K, M])
/// and `transpose_b` reads `b` as its transpose (`b` is [N, K]). Transposes are
/// folded into the product, never materialised. Takes float16, bfloat16,
/// float32, float64, int32 and int64; `a` and `b` must share the dtype.
[[nodiscard]] Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false,
                            bool transpose_b = false);

/// `value + bias` with `bias` [N] added to every row of `value` [..., N], as
/// tf.nn.bias_add (NHWC): `value` must have rank 2 or more. The gradient of the
/// bias is `reduce_sum(upstream, 0)` for a rank-2 `value`.
[[nodiscard]] Tensor bias_add(const Tensor& value, const Tensor& bias);

// -- activations ------------------------------------------------------------------------

/// max(features, 0) elementwise, as tf.nn.relu. Any numeric dtype.
[[nodiscard]] Tensor relu(const Tensor& features);

/// The gradient of relu: `gradients` where `features > 0`, else 0, computed as
/// TensorFlow's ReluGrad does, `gradients * (features > 0)` (so the gradient at
/// exactly 0 is 0). Both operands must have the same dtype and shape.
[[nodiscard]] Tensor relu_grad(const Tensor& gradients, const Tensor& features);

/// Softmax along the last axis, as tf.nn.softmax: exp(x - max) / sum(exp(x - max))
/// per row, so large logits (1000) do not overflow. Floating dtypes, rank >= 1.
[[nodiscard]] Tensor softmax(const Tensor& logits);

/// log(softmax(logits)) along the last axis, computed stably as
/// x - max - log(sum(exp(x - max))), as tf.nn.log_softmax.
[[nodiscard]] Tensor log_softmax(const Tensor& logits);

// -- losses -------------------------------------------------------------------------------

/// Per-example losses -log(softmax(logits)[label]), as
/// tf.nn.sparse_softmax_cross_entropy_with_logits: `logits` is [..., C]
/// (floating), `labels` has the shape of `logits` without its last axis and
/// dtype int32, int64 or uint8; the result has the shape of `labels` and the
/// dtype of `logits`. A label outside [0, C) is Error(invalid_argument) naming
/// the label, its position and C (TensorFlow's CPU kernel rejects it too).
[[nodiscard]] Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels,
                                                              const Tensor& logits);

/// The gradient of each example's loss with respect to its logits:
/// softmax(logits) - one_hot(labels), shaped as `logits`. It is not divided
/// by the batch size: for a mean loss over B examples, divide it by B.
[[nodiscard]] Tensor sparse_softmax_cross_entropy_with_logits_grad(const Tensor& labels,
                                                                   const Tensor& logits);

/// Loss and gradient of sparse_softmax_cross_entropy_with_logits from one pass
/// over the logits (TensorFlow's raw op returns the same pair).
struct SoftmaxCrossEntropy {
  /// Per-example losses, shaped as the labels.
  Tensor loss;
  /// softmax(logits) - one_hot(labels), shaped as the logits, not divided by the batch size.
  Tensor backprop;
};

/// Both results of the sparse softmax cross-entropy; the same values as the two
/// functions above, for half the work.
[[nodiscard]] SoftmaxCrossEntropy
sparse_softmax_cross_entropy_with_logits_and_grad(const Tensor& labels, const Tensor& logits);

// -- comparisons and metrics -------------------------------------------------------------

/// The index of the largest element along `axis` (negative counts from the
/// end), as tf.math.argmax: an int64 tensor with `axis` removed. Ties go to
/// the smallest index. Comparisons with NaN are false, so a NaN is chosen only
/// when it comes first. Any dtype; an empty axis is Error(invalid_argument).
[[nodiscard]] Tensor argmax(const Tensor& input, int axis);

/// `a == b` elementwise as a bool tensor, as tf.math.equal: same dtype, and the
/// same shape or one operand rank 0. Compares values: -0 == +0, NaN != NaN.
[[nodiscard]] Tensor equal(const Tensor& a, const Tensor& b);

/// The number of examples whose argmax over the last axis of `logits` equals
/// the label (for accuracy: divide by the batch size). Shapes and dtypes as in
/// sparse_softmax_cross_entropy_with_logits; labels outside [0, C) are an error.
[[nodiscard]] int64_t accuracy_count(const Tensor& labels, const Tensor& logits);

// -- elementwise math ---------------------------------------------------------------------

/// x * x elementwise, as tf.math.square. Any numeric dtype (integers wrap).
[[nodiscard]] Tensor square(const Tensor& x);

/// The square root elementwise, as tf.math.sqrt: floating dtypes; negative
/// inputs give NaN.
[[nodiscard]] Tensor sqrt(const Tensor& x);

} // namespace troupe

#pragma once

#include <cstdint>

#include <troupe/core/tensor.hpp>

namespace troupe {

// -- fused optimizer updates (in place) ---------------------------------------------------
//
// These write through `mutable_data`, so a buffer shared with another handle
// is copied first and the other handles keep the old values (copy-on-write).
// All tensors must be floating, of one dtype and one shape; the scalars are
// converted to that dtype's compute type (float for float16/bfloat16/float32).
// Operands that do not agree are Error(dtype_mismatch / shape_mismatch) naming
// both, a non-floating one Error(not_supported), an empty handle
// Error(invalid_argument); kernels run on the calling thread, as in nn_ops.hpp.

/// y += alpha * x (BLAS axpy); plain SGD is `axpy_inplace(var, -learning_rate, grad)`.
void axpy_inplace(Tensor& y, double alpha, const Tensor& x);

/// Settings of apply_momentum; the defaults are Keras SGD's.
struct MomentumOptions {
  double learning_rate = 0.01;
  double momentum = 0.0;
  /// Nesterov momentum, as keras.optimizers.SGD(nesterov=True).
  bool nesterov = false;
};

/// One Keras SGD-with-momentum step (TensorFlow's ResourceApplyKerasMomentum):
/// accum = momentum * accum - learning_rate * grad, then var += accum, or with
/// Nesterov var += momentum * accum - learning_rate * grad. `accum` starts as zeros.
void apply_momentum(Tensor& var, Tensor& accum, const Tensor& grad,
                    const MomentumOptions& options = {});

/// Settings of apply_adam; the defaults are keras.optimizers.Adam's.
struct AdamOptions {
  double learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
};

/// One Adam step (TensorFlow's ApplyAdam, as Keras runs it), where `step` is
/// the 1-based number of this update:
///   lr_t = learning_rate * sqrt(1 - beta_2^step) / (1 - beta_1^step)
///   m += (grad - m) * (1 - beta_1);  v += (grad^2 - v) * (1 - beta_2)
///   var -= lr_t * m / (sqrt(v) + epsilon)
/// `m` and `v` start as zeros. `step` < 1 is Error(invalid_argument).
void apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, int64_t step,
                const AdamOptions& options = {});

} // namespace troupe

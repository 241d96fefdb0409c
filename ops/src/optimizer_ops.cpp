#include <troupe/ops/optimizer_ops.hpp>

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include <Eigen/Core>

#include <troupe/core/denormals.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/ops/cpu_kernels.hpp>
#include <troupe/ops/eigen_types.hpp>
#include <troupe/ops/gpu_ops.hpp>
#include <troupe/ops/tensor_checks.hpp>

namespace troupe {

using internal::mutable_view;
using internal::require_floating;
using internal::require_same_dtype;
using internal::require_same_shape;
using internal::require_valid;
using internal::view;
using internal::visit_floating;

using internal::compute_t;
using internal::eigen_t;

namespace {

/// Checks that every tensor in `ts` is valid, floating and of the first one's dtype and shape.
void check_update(std::initializer_list<std::pair<const Tensor*, const char*>> ts, const char* op) {
  const auto& [first, first_name] = *ts.begin();
  for (const auto& [t, what] : ts) {
    require_valid(*t, op, what);
    require_floating(*t, op, what);
    if (t != first) {
      require_same_dtype(*first, first_name, *t, what, op);
      require_same_shape(*first, first_name, *t, what, op);
    }
  }
}

/// base^exponent for exponent >= 1 by repeated squaring: + and * only, so the
/// same bits on every CPU and C library (unlike std::pow).
double power(double base, int64_t exponent) {
  double result = 1.0;
  for (; exponent > 0; exponent >>= 1, base *= base)
    if ((exponent & 1) != 0)
      result *= base;
  return result;
}

} // namespace

void axpy_inplace(Tensor& y, double alpha, const Tensor& x) {
  const ScopedFlushDenormals flush_denormals;
  check_update({{&y, "y"}, {&x, "x"}}, "axpy_inplace");
  if (internal::any_on_gpu(y, x)) {
    // The update runs where the tensor it writes lives.
    if (!y.on_host())
      return internal::gpu_axpy(y, alpha, x);
    return axpy_inplace(y, alpha, x.to(y.device()));
  }
  visit_floating(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    // Write access first: when x shares y's buffer, y gets its own copy and x keeps the old values.
    auto out = mutable_view<T>(y);
    const auto in = view<T>(x);
    out = (out.template cast<C>() + static_cast<C>(alpha) * in.template cast<C>())
            .template cast<eigen_t<T>>();
  });
}

void apply_momentum(Tensor& var, Tensor& accum, const Tensor& grad,
                    const MomentumOptions& options) {
  const ScopedFlushDenormals flush_denormals;
  check_update({{&var, "var"}, {&accum, "accum"}, {&grad, "grad"}}, "apply_momentum");
  if (internal::any_on_gpu(var, accum, grad)) {
    if (!var.on_host())
      return internal::gpu_momentum(var, accum, grad, options);
    if (!accum.on_host())
      fail(Errc::invalid_argument, "apply_momentum: var is on " + var.device().short_name() + " but accum is on "
                                     + accum.device().short_name() + "; the tensors an update writes must live on "
                                       "one device (create them there, or copy with .to())");
    return apply_momentum(var, accum, grad.to(var.device()), options);
  }
  visit_floating(var.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    using E = eigen_t<T>;
    auto w = mutable_view<T>(var);
    auto a = mutable_view<T>(accum);
    const auto g = view<T>(grad);
    const auto lr = static_cast<C>(options.learning_rate);
    const auto momentum = static_cast<C>(options.momentum);
    a = (momentum * a.template cast<C>() - lr * g.template cast<C>()).template cast<E>();
    if (options.nesterov)
      w = (w.template cast<C>() + momentum * a.template cast<C>() - lr * g.template cast<C>())
            .template cast<E>();
    else
      w = (w.template cast<C>() + a.template cast<C>()).template cast<E>();
  });
}

void apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, int64_t step,
                const AdamOptions& options) {
  const ScopedFlushDenormals flush_denormals;
  check_update({{&var, "var"}, {&m, "m"}, {&v, "v"}, {&grad, "grad"}}, "apply_adam");
  if (step < 1)
    fail(Errc::invalid_argument, "apply_adam: step is " + std::to_string(step)
                                   + " but counts updates from 1; pass 1 for the first update");
  // The bias corrections in double, as a scalar per step (Keras computes them
  // in float32); powers by squaring, not std::pow, whose last bit depends on
  // the C library and the CPU.
  const double alpha = options.learning_rate * std::sqrt(1.0 - power(options.beta_2, step))
                       / (1.0 - power(options.beta_1, step));
  if (internal::any_on_gpu(var, m, v, grad)) {
    if (!var.on_host())
      return internal::gpu_adam(var, m, v, grad, alpha, options);
    // var is on the host here: a moment on a GPU cannot be written with it.
    if (!m.on_host())
      internal::require_same_device(var, "var", m, "m", "apply_adam");
    if (!v.on_host())
      internal::require_same_device(var, "var", v, "v", "apply_adam");
    return apply_adam(var, m, v, grad.to(var.device()), step, options);
  }
  if (var.dtype() == DType::float32) {
    // Write access first, as below: shared buffers are copied before the kernel writes.
    float* w = var.mutable_data<float>();
    float* m1 = m.mutable_data<float>();
    float* m2 = v.mutable_data<float>();
    internal::cpu_kernels().adam_f32(
      w, m1, m2, grad.data<float>(), var.num_elements(),
      {static_cast<float>(alpha), static_cast<float>(1.0 - options.beta_1),
       static_cast<float>(1.0 - options.beta_2), static_cast<float>(options.epsilon)});
    return;
  }
  visit_floating(var.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    using E = eigen_t<T>;
    auto w = mutable_view<T>(var);
    auto m1 = mutable_view<T>(m);
    auto m2 = mutable_view<T>(v);
    const auto grad_view = view<T>(grad);
    const auto g = grad_view.template cast<C>();
    const auto one_minus_beta_1 = static_cast<C>(1.0 - options.beta_1);
    const auto one_minus_beta_2 = static_cast<C>(1.0 - options.beta_2);
    m1 =
      (m1.template cast<C>() + (g - m1.template cast<C>()) * one_minus_beta_1).template cast<E>();
    m2 = (m2.template cast<C>() + (g.square() - m2.template cast<C>()) * one_minus_beta_2)
           .template cast<E>();
    w = (w.template cast<C>()
         - static_cast<C>(alpha) * m1.template cast<C>()
             / (m2.template cast<C>().sqrt() + static_cast<C>(options.epsilon)))
          .template cast<E>();
  });
}

} // namespace troupe

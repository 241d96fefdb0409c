// The kernels of core/cpu_kernels.hpp for one instruction set. core/CMakeLists.txt
// compiles this file once per instruction set with TROUPE_KERNEL_ENTRY naming
// its table function, and renames every other symbol the object defines
// (cmake/isolate_object.cmake): the Eigen and standard-library templates
// compiled here for AVX2 or AVX-512 can then never stand in for the baseline
// copies the linker would otherwise merge them with (one definition per name).
// Keep this file free of anything that throws or allocates outside Eigen.

// In troupe the replicas are the parallelism: no Eigen threads.
#define EIGEN_DONT_PARALLELIZE

#include <cstdint>

#include <Eigen/Core>

#include <troupe/ops/cpu_kernels.hpp>
#include <troupe/ops/eigen_gemm.hpp>

#ifndef TROUPE_KERNEL_ENTRY
#error "compile with -DTROUPE_KERNEL_ENTRY=troupe_cpu_kernels_<isa> (see core/CMakeLists.txt)"
#endif
#ifndef TROUPE_KERNEL_ISA
#error "compile with -DTROUPE_KERNEL_ISA=\"<isa name>\" (see core/CMakeLists.txt)"
#endif

namespace {

using troupe::internal::AdamCoefficients;
using troupe::internal::eigen_gemm;
namespace ei = Eigen::internal;

// -- exp and log through Eigen's packet polynomials -------------------------------------
//
// Eigen evaluates exp() packet by packet and the leftover elements with
// std::exp, whose last bit depends on the C library and the CPU. These send
// every element through the packet code, the tail in a zero-padded packet.

template <class T>
using Packet = typename ei::packet_traits<T>::type;

template <class T>
constexpr int64_t packet_size = ei::unpacket_traits<Packet<T>>::size;

/// x[i] = exp(x[i] - shift) for i < n.
template <class T>
void exp_shifted_inplace(T* x, int64_t n, T shift) {
  using P = Packet<T>;
  constexpr int64_t w = packet_size<T>;
  const P s = ei::pset1<P>(shift);
  int64_t i = 0;
  for (; i + w <= n; i += w)
    ei::pstoreu(x + i, ei::pexp(ei::psub(ei::ploadu<P>(x + i), s)));
  if (i < n) {
    alignas(64) T pad[w] = {};
    for (int64_t j = i; j < n; ++j)
      pad[j - i] = x[j];
    ei::pstoreu(pad, ei::pexp(ei::psub(ei::ploadu<P>(pad), s)));
    for (int64_t j = i; j < n; ++j)
      x[j] = pad[j - i];
  }
}

template <class T>
T log_of(T x) {
  return ei::pfirst(ei::plog(ei::pset1<Packet<T>>(x)));
}

// -- softmax and cross-entropy ------------------------------------------------------------

template <class T>
using Row = Eigen::Array<T, 1, Eigen::Dynamic>;

template <class T>
void softmax(const T* in, T* out, int64_t rows, int64_t cols, bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const Eigen::Map<const Row<T>> x{in + r * cols, cols};
    Eigen::Map<Row<T>> y{out + r * cols, cols};
    // Shift by the row maximum so that exp() cannot overflow (logits of 1000).
    const T max = x.maxCoeff();
    y = x;
    exp_shifted_inplace(y.data(), cols, max);
    const T sum = y.sum();
    if (log)
      y = (x - max) - log_of(sum);
    else
      y *= T{1} / sum;
  }
}

template <class T>
void cross_entropy(const int64_t* labels, const T* logits, int64_t rows, int64_t cols, T* loss,
                   T* backprop) {
  Row<T> scratch;
  if (backprop == nullptr)
    scratch.resize(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t label = labels[r];
    const Eigen::Map<const Row<T>> x{logits + r * cols, cols};
    Eigen::Map<Row<T>> e{backprop != nullptr ? backprop + r * cols : scratch.data(), cols};
    const T max = x.maxCoeff();
    e = x;
    exp_shifted_inplace(e.data(), cols, max);
    const T sum = e.sum();
    loss[r] = log_of(sum) - (x[label] - max);
    if (backprop != nullptr) {
      e *= T{1} / sum;
      e[label] -= T{1};
    }
  }
}

// -- elementwise ----------------------------------------------------------------------------

using FloatArray = Eigen::Array<float, Eigen::Dynamic, 1>;
using FloatRows = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void bias_add_f32(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  const Eigen::Map<const FloatRows> in{x, rows, cols};
  const Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>> b{bias, cols};
  Eigen::Map<FloatRows>{out, rows, cols} = in.rowwise() + b;
}

void relu_f32(const float* x, float* out, int64_t n) {
  Eigen::Map<FloatArray>{out, n} = Eigen::Map<const FloatArray>{x, n}.max(0.0f);
}

void relu_grad_f32(const float* gradients, const float* features, float* out, int64_t n) {
  // TensorFlow's formula, gradients * (features > 0): branch-free.
  const Eigen::Map<const FloatArray> g{gradients, n};
  const Eigen::Map<const FloatArray> f{features, n};
  Eigen::Map<FloatArray>{out, n} = g * (f > 0.0f).cast<float>();
}

void adam_f32(float* var, float* m, float* v, const float* grad, int64_t n,
              const AdamCoefficients& c) {
  Eigen::Map<FloatArray> w{var, n};
  Eigen::Map<FloatArray> m1{m, n};
  Eigen::Map<FloatArray> m2{v, n};
  const Eigen::Map<const FloatArray> g{grad, n};
  m1 += (g - m1) * c.one_minus_beta_1;
  m2 += (g.square() - m2) * c.one_minus_beta_2;
  w -= c.alpha * m1 / (m2.sqrt() + c.epsilon);
}

void fix_blocking() {
  // Eigen's own defaults for x86 when it cannot ask the CPU.
  Eigen::setCpuCacheSizes(32 * 1024, 256 * 1024, 2 * 1024 * 1024);
}

constexpr troupe::internal::CpuKernels table{
  TROUPE_KERNEL_ISA,
  &eigen_gemm<float>,
  &eigen_gemm<double>,
  &softmax<float>,
  &softmax<double>,
  &cross_entropy<float>,
  &cross_entropy<double>,
  &bias_add_f32,
  &relu_f32,
  &relu_grad_f32,
  &adam_f32,
  &fix_blocking,
};

} // namespace

extern "C" const troupe::internal::CpuKernels* TROUPE_KERNEL_ENTRY() {
  return &table;
}

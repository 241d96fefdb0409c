#pragma once

// How troupe's CPU kernels see element types through Eigen (internal to the
// kernels of core/ and collectives/; includes Eigen).

#include <cstdint>

#include <Eigen/Core>

#include <troupe/core/dtype.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe::internal {

// Our 16-bit floats are plain bit containers; Eigen's have the same layout
// and bring the arithmetic.
static_assert(sizeof(float16) == sizeof(Eigen::half) && alignof(float16) == alignof(Eigen::half));
static_assert(sizeof(bfloat16) == sizeof(Eigen::bfloat16)
              && alignof(bfloat16) == alignof(Eigen::bfloat16));

template <class T>
struct EigenScalar {
  using type = T;
};
template <>
struct EigenScalar<float16> {
  using type = Eigen::half;
};
template <>
struct EigenScalar<bfloat16> {
  using type = Eigen::bfloat16;
};

/// The Eigen element type of T.
template <class T>
using eigen_t = typename EigenScalar<T>::type;

/// The type T's arithmetic runs in: float for the 16-bit floats (as Eigen and
/// TensorFlow compute and accumulate them), unsigned for integers (signed
/// overflow is undefined in C++; TensorFlow's integer kernels wrap around, as
/// unsigned arithmetic does), T itself otherwise. uint8 computes in uint32
/// (no int promotion surprises); narrowing back keeps the low 8 bits, so
/// results wrap modulo 256 as TensorFlow's uint8 kernels do.
template <class T>
struct Compute {
  using type = T;
};
template <>
struct Compute<float16> {
  using type = float;
};
template <>
struct Compute<bfloat16> {
  using type = float;
};
template <>
struct Compute<int32_t> {
  using type = uint32_t;
};
template <>
struct Compute<int64_t> {
  using type = uint64_t;
};
template <>
struct Compute<uint8_t> {
  using type = uint32_t;
};

template <class T>
using compute_t = typename Compute<T>::type;

/// Calls fn(T{}) for a floating dtype; check it first (require_floating), as
/// any other dtype is visited as double.
template <class Fn>
void visit_floating(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::float16: fn(float16{}); break;
    case DType::bfloat16: fn(bfloat16{}); break;
    case DType::float32: fn(float{}); break;
    default: fn(double{}); break;
  }
}

/// A tensor's elements as an Eigen array of its Eigen element type.
template <class T>
using Vector = Eigen::Array<eigen_t<T>, Eigen::Dynamic, 1>;

/// Read-only view of `t`'s elements (T must be its dtype).
template <class T>
Eigen::Map<const Vector<T>> view(const Tensor& t) {
  return {reinterpret_cast<const eigen_t<T>*>(t.raw_data()), t.num_elements()};
}

/// Writable view of `t`'s elements (copy-on-write first, as Tensor::mutable_raw_data).
template <class T>
Eigen::Map<Vector<T>> mutable_view(Tensor& t) {
  return {reinterpret_cast<eigen_t<T>*>(t.mutable_raw_data()), t.num_elements()};
}

} // namespace troupe::internal

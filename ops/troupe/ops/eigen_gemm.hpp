#pragma once

// out = op(a) * op(b) through Eigen on the buffers of a GemmArgs (internal to
// core/'s kernels; includes Eigen). Used by every instruction-set build of
// cpu_kernels_isa.cpp and, for integers, by nn_ops.cpp.

#include <Eigen/Core>

#include <troupe/ops/cpu_kernels.hpp>

namespace troupe::internal {

/// Multiplies as S: the bits of a, b and out are read as S (m, n, k > 0).
template <class S>
void eigen_gemm(const GemmArgs& g) {
  using RowMajor = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const RowMajor> a{static_cast<const S*>(g.a), g.a_rows, g.a_cols};
  const Eigen::Map<const RowMajor> b{static_cast<const S*>(g.b), g.b_rows, g.b_cols};
  Eigen::Map<RowMajor> out{static_cast<S*>(g.out), g.m, g.n};
  // A transposed map is a column-major view of the same bytes: Eigen's GEMM
  // packs either storage order, so no transpose is ever copied.
  if (g.transpose_a && g.transpose_b)
    out.noalias() = a.transpose() * b.transpose();
  else if (g.transpose_a)
    out.noalias() = a.transpose() * b;
  else if (g.transpose_b)
    out.noalias() = a * b.transpose();
  else
    out.noalias() = a * b;
}

} // namespace troupe::internal

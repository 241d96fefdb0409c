// gemm through cuBLAS, in full float32: the handle keeps cuBLAS's default
// math mode (no TF32) and atomics mode (off: the same bits every run).

#include <climits>
#include <cstdint>
#include <memory>
#include <string>

#include <cublas_v2.h>

#include <troupe/core/errors.hpp>

#include "cuda_check.hpp"
#include "cuda_kernels.hpp"

namespace troupe::internal::cuda_kernels {

namespace {

constexpr const char* kGemm = "gemm_f32";

/// Error(internal) "gemm_f32 on GPU 0: cublasSgemm failed: CUBLAS_STATUS_X (what it means)".
void check_blas(cublasStatus_t status, int gpu, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(Errc::internal, failure_prefix(kGemm, gpu, call) + cublasGetStatusName(status) + " ("
                           + cublasGetStatusString(status) + ")");
}

/// The stream's cuBLAS handle, created on first use and kept in ctx.handles,
/// which the device actor drops after its stream; bound to ctx.stream anew
/// on every call.
cublasHandle_t blas_handle(const GpuLaunchContext& ctx) {
  if (ctx.handles == nullptr)
    fail(Errc::internal, std::string{kGemm} + " on GPU " + std::to_string(ctx.gpu)
                           + ": the launch context has no library handles");
  std::shared_ptr<void>& slot = ctx.handles->blas;
  if (!slot) {
    cublasHandle_t created = nullptr;
    check_blas(cublasCreate(&created), ctx.gpu, "cublasCreate");
    // The handle may die on another thread, whose current GPU is another one.
    slot = std::shared_ptr<void>(created, [gpu = ctx.gpu](cublasHandle_t handle) {
      int previous = -1;
      const bool restore = cudaGetDevice(&previous) == cudaSuccess && previous != gpu;
      (void) cudaSetDevice(gpu);
      (void) cublasDestroy(handle);
      if (restore)
        (void) cudaSetDevice(previous);
    });
  }
  const auto handle = static_cast<cublasHandle_t>(slot.get());
  check_blas(cublasSetStream(handle, stream_of(ctx)), ctx.gpu, "cublasSetStream");
  return handle;
}

/// `value` as cuBLAS's int, or Error(invalid_argument) naming the sizes.
int blas_int(int64_t value, const GpuGemm& args, int gpu) {
  if (value < 0 || value > INT_MAX)
    fail(Errc::invalid_argument, std::string{kGemm} + " on GPU " + std::to_string(gpu) + ": a " + std::to_string(args.a_rows)
                                   + "x" + std::to_string(args.a_cols) + " by " + std::to_string(args.b_rows) + "x"
                                   + std::to_string(args.b_cols) + " product (m=" + std::to_string(args.m)
                                   + ", n=" + std::to_string(args.n) + ", k=" + std::to_string(args.k)
                                   + ") has a dimension beyond cuBLAS's limit of " + std::to_string(INT_MAX)
                                   + "; split the matrices");
  return static_cast<int>(value);
}

} // namespace

void gemm_f32(const GpuLaunchContext& ctx, const GpuGemm& args) {
  if (args.m <= 0 || args.n <= 0)
    return;
  if (args.k <= 0) {
    // An empty inner product: zeros, without asking cuBLAS about k = 0.
    check_cuda(cudaMemsetAsync(args.out, 0, static_cast<std::size_t>(args.m * args.n) * sizeof(float),
                               stream_of(ctx)),
               kGemm, ctx.gpu, "cudaMemsetAsync");
    return;
  }
  const int m = blas_int(args.m, args, ctx.gpu);
  const int n = blas_int(args.n, args, ctx.gpu);
  const int k = blas_int(args.k, args, ctx.gpu);
  const int lda = blas_int(args.a_cols, args, ctx.gpu);
  const int ldb = blas_int(args.b_cols, args, ctx.gpu);
  const cublasHandle_t handle = blas_handle(ctx);
  // cuBLAS is column-major, and a row-major [r, c] buffer is its transpose
  // [c, r] with leading dimension c. So compute out^T = op(b)^T op(a)^T, an
  // [n, m] column-major result that is `out` row-major: b's buffer is the
  // first operand (transposed when b is), a's the second, ld = row length.
  const cublasOperation_t op_b = args.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = args.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float one = 1.0f;
  const float zero = 0.0f;
  check_blas(cublasSgemm(handle, op_b, op_a, n, m, k, &one, args.b, ldb, args.a, lda, &zero, args.out, n), ctx.gpu,
             "cublasSgemm");
}

} // namespace troupe::internal::cuda_kernels

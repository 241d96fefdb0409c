#include <troupe/ops/gpu_kernels.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

const GpuKernels& gpu_kernels() {
  if (const auto* installed = ScopedGpuKernels::current())
    return *installed;
#if TROUPE_HAVE_CUDA
  return cuda_gpu_kernels();
#else
  fail(Errc::not_supported, "a GPU kernel was asked for, but this build of troupe has no CUDA support "
                            "(TROUPE_ENABLE_CUDA=OFF or no CUDA toolkit found)");
#endif
}

} // namespace troupe::internal

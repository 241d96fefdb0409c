#include <troupe/actors/gpu/gpu_backend.hpp>

#include <troupe/build_config.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>

#if TROUPE_HAVE_CUDA
#include "cuda/cuda_gpu_backend.hpp"
#endif

namespace troupe::internal {

namespace {

/// A build without CUDA: no GPUs, and a reason that names the fix.
class NoGpuBackend final : public GpuBackend {
public:
  int device_count() override { return 0; }
  std::string unavailable_reason() override {
    return "this build of troupe has no CUDA support: it was configured with TROUPE_ENABLE_CUDA=OFF or found no "
           "CUDA toolkit; rebuild with the toolkit under /usr/local/cuda";
  }
  GpuProperties properties(int gpu) override { no_gpu(gpu); }
  void* allocate_device(int gpu, std::size_t) override { no_gpu(gpu); }
  void free_device(int, void*) noexcept override {}
  void* allocate_pinned(std::size_t) override { no_gpu(0); }
  void free_pinned(void*) noexcept override {}
  void make_current(int gpu) override { no_gpu(gpu); }
  bool can_read_peer(int gpu, int) override { no_gpu(gpu); }
  GpuStream create_stream(int gpu) override { no_gpu(gpu); }
  void destroy_stream(int, GpuStream) noexcept override {}
  void copy_async(int gpu, GpuStream, void*, const void*, std::size_t, GpuCopyKind, int) override { no_gpu(gpu); }
  void copy_2d_async(int gpu, GpuStream, void*, std::size_t, const void*, std::size_t, std::size_t,
                     std::size_t) override {
    no_gpu(gpu);
  }
  void zero_async(int gpu, GpuStream, void*, std::size_t) override { no_gpu(gpu); }
  void notify_when_done(int gpu, GpuStream, std::function<void(const std::string&)>) override { no_gpu(gpu); }
  GpuEvent create_event(int gpu) override { no_gpu(gpu); }
  void destroy_event(int, GpuEvent) noexcept override {}
  void record_event(int gpu, GpuStream, GpuEvent) override { no_gpu(gpu); }
  void wait_event(int gpu, GpuStream, GpuEvent) override { no_gpu(gpu); }

private:
  [[noreturn]] void no_gpu(int gpu) {
    fail(Errc::internal, "GPU " + std::to_string(gpu) + " was used, but " + unavailable_reason());
  }
};

std::string absence_reason() {
  auto& backend = gpu_backend();
  return backend.device_count() == 0 ? backend.unavailable_reason() : std::string();
}

// Linked into every program that runs a Runtime (which calls gpu_backend()).
[[maybe_unused]] const bool absence_reason_installed = (set_gpu_absence_reason(&absence_reason), true);

} // namespace

GpuBackend& gpu_backend() {
  if (auto* installed = ScopedGpuBackend::current())
    return *installed;
#if TROUPE_HAVE_CUDA
  static GpuBackend& builtin = *make_cuda_gpu_backend().release();
#else
  static GpuBackend& builtin = *new NoGpuBackend;
#endif
  // Never destroyed: device memory may be freed during static destruction.
  return builtin;
}

} // namespace troupe::internal

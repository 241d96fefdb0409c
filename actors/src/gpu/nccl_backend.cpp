#include <troupe/actors/gpu/nccl_backend.hpp>

#include <string>
#include <utility>

#include <troupe/build_config.hpp>
#include <troupe/core/errors.hpp>

#if TROUPE_HAVE_NCCL
#include "cuda/cuda_nccl_backend.hpp"
#endif

namespace troupe::internal {

namespace {

/// A build without NCCL: no communicators, and a reason that names the fix.
class NoNcclBackend final : public NcclBackend {
public:
  bool available() override { return false; }
  std::string unavailable_reason() override {
    return "this build of troupe has no NCCL: it was configured with TROUPE_ENABLE_CUDA=OFF or found no CUDA "
           "toolkit or no NCCL; install NCCL (libnccl.so, nccl.h) under /usr/local/cuda and rebuild";
  }
  std::string version() override { return "none"; }
  NcclUniqueId unique_id() override { no_nccl("ncclGetUniqueId"); }
  NcclComm init_rank(int gpu, const NcclUniqueId&, int, int) override {
    no_nccl("a communicator on GPU " + std::to_string(gpu));
  }
  NcclState state(NcclComm, std::string&) override { no_nccl("ncclCommGetAsyncError"); }
  NcclState enqueue(int gpu, NcclComm, GpuStream, const std::vector<NcclCall>&, std::string&) override {
    no_nccl("a collective on GPU " + std::to_string(gpu));
  }
  // No communicator can exist, so there is none to end.
  void abort(NcclComm) noexcept override {}

private:
  [[noreturn]] void no_nccl(const std::string& what) {
    fail(Errc::internal, "NCCL was used (" + what + "), but " + unavailable_reason());
  }
};

} // namespace

NcclBackend& nccl_backend() {
  if (auto* installed = ScopedNcclBackend::current())
    return *installed;
#if TROUPE_HAVE_NCCL
  static NcclBackend& builtin = *make_cuda_nccl_backend().release();
#else
  static NcclBackend& builtin = *new NoNcclBackend;
#endif
  // Never destroyed: communicators may be ended during static destruction.
  return builtin;
}

} // namespace troupe::internal

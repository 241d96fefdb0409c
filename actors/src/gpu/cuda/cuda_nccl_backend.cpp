#include "cuda_nccl_backend.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

static_assert(sizeof(ncclUniqueId) == NcclUniqueId::size, "NcclUniqueId must hold an ncclUniqueId");

ncclComm_t as_comm(NcclComm comm) { return static_cast<ncclComm_t>(comm); }

/// NCCL's name for `result`, with its last error message when it has one.
/// (ncclGetLastError ignores its argument today and is process-wide.)
std::string describe(ncclResult_t result, ncclComm_t comm) {
  std::string text = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0')
    text += std::string(" (") + last + ")";
  return text;
}

std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

/// Checked before a group opens, so that a call NCCL cannot take throws
/// without leaving a group half-issued.
ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::float32: return ncclFloat32;
    case DType::float64: return ncclFloat64;
    case DType::float16: return ncclFloat16;
    case DType::bfloat16: return ncclBfloat16;
    case DType::int32: return ncclInt32;
    case DType::int64: return ncclInt64;
    case DType::uint8: return ncclUint8;
    case DType::bool_: break;
  }
  fail(Errc::not_supported,
       "NCCL has no collective for " + std::string(name(dtype)) + " tensors: cast them to uint8 or int32 first");
}

ncclRedOp_t nccl_op(NcclReduction reduction) {
  switch (reduction) {
    case NcclReduction::sum: return ncclSum;
    case NcclReduction::avg: return ncclAvg;
    case NcclReduction::max: return ncclMax;
    case NcclReduction::min: return ncclMin;
    case NcclReduction::prod: return ncclProd;
  }
  return ncclSum;
}

const char* call_name(NcclCall::Kind kind) {
  switch (kind) {
    case NcclCall::Kind::all_reduce: return "ncclAllReduce";
    case NcclCall::Kind::all_gather: return "ncclAllGather";
    case NcclCall::Kind::broadcast: return "ncclBroadcast";
    case NcclCall::Kind::reduce_scatter: return "ncclReduceScatter";
  }
  return "an NCCL collective";
}

ncclResult_t issue(const NcclCall& call, ncclDataType_t type, ncclComm_t comm, cudaStream_t stream) {
  switch (call.kind) {
    case NcclCall::Kind::all_reduce:
      return ncclAllReduce(call.send, call.recv, call.count, type, nccl_op(call.reduction), comm, stream);
    case NcclCall::Kind::all_gather:
      return ncclAllGather(call.send, call.recv, call.count, type, comm, stream);
    case NcclCall::Kind::broadcast:
      return ncclBroadcast(call.send, call.recv, call.count, type, call.root, comm, stream);
    case NcclCall::Kind::reduce_scatter:
      return ncclReduceScatter(call.send, call.recv, call.count, type, nccl_op(call.reduction), comm, stream);
  }
  return ncclInvalidArgument;
}

class CudaNcclBackend final : public NcclBackend {
public:
  CudaNcclBackend() {
    int count = 0;
    const auto status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      // No driver or no card: a machine without a GPU, not an error of the program.
      reason_ = "NCCL needs a GPU, and CUDA reports " + describe(status);
      (void) cudaGetLastError();
    } else if (count == 0) {
      reason_ = "NCCL needs a GPU, and CUDA found none";
    }
    available_ = reason_.empty();
  }

  bool available() override { return available_; }

  std::string unavailable_reason() override { return reason_; }

  std::string version() override {
    int code = 0;
    if (ncclGetVersion(&code) != ncclSuccess)
      return "NCCL (unknown version)";
    // NCCL_VERSION(X, Y, Z) is X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
    const int major = code >= 10000 ? code / 10000 : code / 1000;
    const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
    return "NCCL " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
  }

  NcclUniqueId unique_id() override {
    ncclUniqueId id{};
    if (const auto result = ncclGetUniqueId(&id); result != ncclSuccess)
      fail(Errc::internal, "ncclGetUniqueId failed: " + describe(result, nullptr));
    NcclUniqueId out;
    std::memcpy(out.bytes.data(), &id, NcclUniqueId::size);
    return out;
  }

  NcclComm init_rank(int gpu, const NcclUniqueId& id, int ranks, int rank) override {
    const std::string where = "GPU " + std::to_string(gpu) + ": NCCL rank " + std::to_string(rank) + " of "
                              + std::to_string(ranks);
    // NCCL creates the rank on the calling thread's current device.
    if (const auto status = cudaSetDevice(gpu); status != cudaSuccess) {
      (void) cudaGetLastError();
      fail(Errc::internal, where + ": cudaSetDevice failed (" + describe(status) + ")");
    }
    ncclUniqueId nccl_id;
    std::memcpy(&nccl_id, id.bytes.data(), NcclUniqueId::size);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    const auto result = ncclCommInitRankConfig(&comm, ranks, nccl_id, rank, &config);
    if (result == ncclSuccess || result == ncclInProgress)
      return comm;
    const std::string reason = describe(result, comm);
    // A nonblocking rank may exist in a failed state; NCCL's fix is to abort it.
    if (comm != nullptr)
      (void) ncclCommAbort(comm);
    fail(Errc::internal, where + ": ncclCommInitRankConfig failed: " + reason);
  }

  NcclState state(NcclComm comm, std::string& error) override {
    ncclResult_t state = ncclSuccess;
    if (const auto result = ncclCommGetAsyncError(as_comm(comm), &state); result != ncclSuccess) {
      error = "ncclCommGetAsyncError failed: " + describe(result, as_comm(comm));
      return NcclState::failed;
    }
    switch (state) {
      case ncclSuccess: return NcclState::ready;
      case ncclInProgress: return NcclState::in_progress;
      default: error = describe(state, as_comm(comm)); return NcclState::failed;
    }
  }

  NcclState enqueue(int gpu, NcclComm comm, GpuStream stream, const std::vector<NcclCall>& calls,
                    std::string& error) override {
    std::vector<ncclDataType_t> types;
    types.reserve(calls.size());
    for (const auto& call : calls)
      types.push_back(nccl_type(call.dtype));
    if (const auto status = cudaSetDevice(gpu); status != cudaSuccess) {
      (void) cudaGetLastError();
      error = "GPU " + std::to_string(gpu) + ": cudaSetDevice failed (" + describe(status) + ")";
      return NcclState::failed;
    }
    auto* const c = as_comm(comm);
    auto* const s = static_cast<cudaStream_t>(stream);
    if (const auto result = ncclGroupStart(); result != ncclSuccess) {
      error = "ncclGroupStart failed: " + describe(result, c);
      return NcclState::failed;
    }
    // A call of a nonblocking communicator may answer ncclInProgress: queued, not failed.
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const auto result = issue(calls[i], types[i], c, s);
      if (result != ncclSuccess && result != ncclInProgress) {
        error = std::string(call_name(calls[i].kind)) + " (call " + std::to_string(i + 1) + " of "
                + std::to_string(calls.size()) + ") failed: " + describe(result, c);
        // Closes the group, so that this thread's next group starts clean.
        (void) ncclGroupEnd();
        return NcclState::failed;
      }
    }
    switch (const auto result = ncclGroupEnd()) {
      case ncclSuccess: return NcclState::ready;
      case ncclInProgress: return NcclState::in_progress;
      default: error = "ncclGroupEnd failed: " + describe(result, c); return NcclState::failed;
    }
  }

  // ncclCommAbort blocks even for a nonblocking communicator (NCCL 2.28: it
  // joins its background work, then frees it), so the handle is dead once it
  // returns and is never polled afterwards. NCCL frees a process's ranks of
  // one communicator together, when the last of them is aborted.

  void abort(NcclComm comm) noexcept override { (void) ncclCommAbort(as_comm(comm)); }

private:
  bool available_ = false;
  std::string reason_;
};

} // namespace

std::unique_ptr<NcclBackend> make_cuda_nccl_backend() {
  return std::make_unique<CudaNcclBackend>();
}

} // namespace troupe::internal

// Tensor <-> DLPack (dlpack/dlpack.h 0.6, Debian's libdlpack-dev): the
// tensor exchange PyTorch, TensorFlow, JAX, CuPy and NumPy share, zero-copy
// both ways.

#include <troupe/core/tensor.hpp>

#include <dlpack/dlpack.h>

static_assert(DLPACK_VERSION >= 60, "troupe needs DLPack 0.6 or newer (kDLCUDA, DLDevice): Debian's libdlpack-dev");

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

/// DLPack 0.8's bool code, which DLPack 0.6 (Debian's) does not name yet:
/// taken from newer producers, never given.
constexpr uint8_t dl_bool_code = 6;

std::string describe(const DLDataType& t) {
  const char* code = t.code == kDLInt          ? "kDLInt"
                     : t.code == kDLUInt       ? "kDLUInt"
                     : t.code == kDLFloat      ? "kDLFloat"
                     : t.code == kDLBfloat     ? "kDLBfloat"
                     : t.code == kDLComplex    ? "kDLComplex"
                     : t.code == kDLOpaqueHandle ? "kDLOpaqueHandle"
                     : t.code == dl_bool_code  ? "kDLBool"
                                               : nullptr;
  return std::string("{code ") + (code ? code : std::to_string(t.code)) + ", bits " + std::to_string(t.bits)
         + ", lanes " + std::to_string(t.lanes) + "}";
}

DType dtype_from(const DLDataType& t) {
  if (t.lanes != 1)
    fail(Errc::invalid_argument, "Tensor::from_dlpack: dtype " + describe(t) + " is a vector type ("
                                   + std::to_string(t.lanes) + " lanes); troupe has scalar elements only: pass lanes 1");
  const auto bits = t.bits;
  if (t.code == kDLFloat && bits == 16) return DType::float16;
  if (t.code == kDLFloat && bits == 32) return DType::float32;
  if (t.code == kDLFloat && bits == 64) return DType::float64;
  if (t.code == kDLBfloat && bits == 16) return DType::bfloat16;
  if (t.code == kDLInt && bits == 32) return DType::int32;
  if (t.code == kDLInt && bits == 64) return DType::int64;
  if (t.code == kDLUInt && bits == 8) return DType::uint8;
  if (t.code == dl_bool_code && bits == 8) return DType::bool_;
  fail(Errc::invalid_argument, "Tensor::from_dlpack: dtype " + describe(t) + " has no troupe dtype; troupe takes "
                                 "float16/32/64, bfloat16, int32, int64, uint8 and bool: convert it first");
}

DLDataType dtype_to(DType dtype) {
  switch (dtype) {
  case DType::float16: return {kDLFloat, 16, 1};
  case DType::float32: return {kDLFloat, 32, 1};
  case DType::float64: return {kDLFloat, 64, 1};
  case DType::bfloat16: return {kDLBfloat, 16, 1};
  case DType::int32: return {kDLInt, 32, 1};
  case DType::int64: return {kDLInt, 64, 1};
  case DType::uint8: return {kDLUInt, 8, 1};
  case DType::bool_: break;
  }
  fail(Errc::invalid_argument, "Tensor::to_dlpack: DLPack 0.6 has no bool type (its consumers would read uint8); "
                               "cast the tensor first: t.cast(DType::uint8)");
}

const char* device_name(DLDeviceType type) {
  switch (type) {
  case kDLCPU: return "kDLCPU";
  case kDLCUDA: return "kDLCUDA";
  case kDLCUDAHost: return "kDLCUDAHost";
  case kDLOpenCL: return "kDLOpenCL";
  case kDLVulkan: return "kDLVulkan";
  case kDLMetal: return "kDLMetal";
  case kDLVPI: return "kDLVPI";
  case kDLROCM: return "kDLROCM";
  case kDLROCMHost: return "kDLROCMHost";
  case kDLExtDev: return "kDLExtDev";
  case kDLCUDAManaged: return "kDLCUDAManaged";
  }
  return "an unknown device type";
}

/// The troupe device of DLPack's `device`.
DeviceSpec device_from(const DLDevice& device) {
  // CUDA host memory is pinned host memory: the host addresses it.
  if (device.device_type == kDLCPU || device.device_type == kDLCUDAHost)
    return Tensor::default_device();
  if (device.device_type == kDLCUDA)
    return DeviceSpec::from_string(internal::device_of_card(device.device_id));
  fail(Errc::invalid_argument, std::string("Tensor::from_dlpack: memory on ") + device_name(device.device_type) + " "
                                 + std::to_string(device.device_id) + " is not memory troupe uses; copy it to the "
                                 "CPU (kDLCPU) or a CUDA GPU (kDLCUDA) first");
}

/// What a DLManagedTensor that troupe made owns: a handle of the bytes and
/// the shape array DLPack points into.
struct Export {
  DLManagedTensor managed{};
  Tensor tensor;
  std::vector<int64_t> shape;
};

} // namespace

Tensor Tensor::from_dlpack(DLManagedTensor* tensor) {
  if (tensor == nullptr)
    fail(Errc::invalid_argument, "Tensor::from_dlpack: the DLManagedTensor pointer is null");
  const DLTensor& t = tensor->dl_tensor;
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
    fail(Errc::invalid_argument, "Tensor::from_dlpack: ndim " + std::to_string(t.ndim)
                                   + (t.ndim < 0 ? " is negative" : " with a null shape array"));
  const DType dtype = dtype_from(t.dtype);
  std::vector<int64_t> dims(t.shape, t.shape + t.ndim);
  const Shape shape(dims);
  for (int64_t d : dims)
    if (d < 0)
      fail(Errc::invalid_argument, "Tensor::from_dlpack: shape " + shape.to_string() + " has a negative dimension");
  if (t.strides != nullptr) {
    // Compact row-major strides (in elements) are what troupe reads; a
    // dimension of size 1 may carry any stride (PyTorch gives such ones).
    int64_t expected = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (dims[static_cast<std::size_t>(i)] != 1 && t.strides[i] != expected) {
        std::string given;
        for (int k = 0; k < t.ndim; ++k)
          given += (k == 0 ? "" : ", ") + std::to_string(t.strides[k]);
        fail(Errc::invalid_argument, "Tensor::from_dlpack: strides (" + given + ") of shape " + shape.to_string()
                                       + " are not row-major and contiguous; make the tensor contiguous first "
                                         "(torch: .contiguous())");
      }
      expected *= dims[static_cast<std::size_t>(i)];
    }
  }
  const auto device = device_from(t.device);
  auto* data = static_cast<char*>(t.data) + t.byte_offset;
  // The deleter runs once the last handle goes; until then the producer's memory stays.
  return from_external(data, shape, dtype, [tensor] {
    if (tensor->deleter != nullptr)
      tensor->deleter(tensor);
  }, device);
}

DLManagedTensor* Tensor::to_dlpack() const {
  if (!valid())
    fail(Errc::invalid_argument, "Tensor::to_dlpack: called on an empty Tensor handle");
  const DLDataType dtype = dtype_to(dtype_);
  DLDevice device{kDLCPU, 0};
  if (!on_host_) {
    auto memory = internal::device_memory_for(this->device());
    // A consumer on another stream reads the bytes at once: what troupe's
    // device still has queued for them must be done.
    memory->synchronize();
    device = {kDLCUDA, memory->card()};
  }
  auto out = std::make_unique<Export>();
  out->tensor = *this;
  out->shape = shape_.dims();
  auto& t = out->managed.dl_tensor;
  t.data = const_cast<std::byte*>(data_); // DLPack's pointer is not const; the contract is documented
  t.device = device;
  t.ndim = rank();
  t.dtype = dtype;
  t.shape = out->shape.empty() ? nullptr : out->shape.data();
  t.strides = nullptr; // compact row-major
  t.byte_offset = 0;
  out->managed.manager_ctx = out.get();
  out->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); };
  return &out.release()->managed;
}

} // namespace troupe

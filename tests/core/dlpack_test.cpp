// Tensor over external memory and DLPack, zero-copy both ways, on the host
// (tests/actors/gpu_dlpack_test.cpp has GPU memory).

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>
#include <dlpack/dlpack.h>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>

using namespace troupe;
using Catch::Matchers::Contains;

namespace {

/// A producer's tensor (as PyTorch's would be): its own bytes, shape and
/// strides, and a deleter that counts its calls.
struct Foreign {
  std::vector<std::byte> bytes;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
  int* deleted = nullptr;

  Foreign(DLDataType dtype, std::vector<int64_t> dims, int* deleted_count, bool with_strides = false)
    : shape(std::move(dims)), deleted(deleted_count) {
    int64_t n = 1;
    for (auto d : shape)
      n *= d;
    bytes.resize(static_cast<std::size_t>(n) * dtype.bits / 8 + 16);
    if (with_strides) {
      strides.resize(shape.size());
      int64_t s = 1;
      for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = s;
        s *= shape[i];
      }
    }
    auto& t = managed.dl_tensor;
    t.data = bytes.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = with_strides ? strides.data() : nullptr;
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      auto* me = static_cast<Foreign*>(self->manager_ctx);
      ++*me->deleted;
    };
  }
};

} // namespace

TEST_CASE("a tensor over external memory uses it without a copy and releases it once", "[core][dlpack]") {
  std::vector<float> user{1, 2, 3, 4, 5, 6};
  int released = 0;
  {
    Tensor t = Tensor::from_external(user.data(), Shape{2, 3}, DType::float32, [&] { ++released; });
    CHECK(reinterpret_cast<const float*>(t.device_data()) == user.data());
    CHECK(t.to_vector<float>() == user);
    Tensor view = t.reshape(Shape{6});
    CHECK(released == 0);
    // Copy on write: with another handle, a write goes to a copy ...
    view.mutable_data<float>()[0] = 10;
    CHECK(user[0] == 1);
    // ... and through the sole handle of the bytes, into the user's memory.
    t.mutable_data<float>()[1] = 20;
    CHECK(user[1] == 20);
  }
  CHECK(released == 1);
}

TEST_CASE("a tensor over external memory without a release leaves the memory to its owner", "[core][dlpack]") {
  // Freed by troupe, `owned` would be freed twice (a crash under the
  // allocator's checks), and its bytes would not be readable after.
  auto owned = std::make_unique<std::vector<int64_t>>(std::vector<int64_t>{4, 5, 6});
  {
    Tensor t = Tensor::from_external(owned->data(), Shape{3}, DType::int64, {});
    CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{4, 5, 6});
  }
  CHECK(*owned == std::vector<int64_t>{4, 5, 6});
  owned.reset();
}

TEST_CASE("a tensor over external memory refuses a null or misaligned pointer", "[core][dlpack]") {
  std::vector<double> user(4);
  CHECK_THROWS_WITH(Tensor::from_external(nullptr, Shape{4}, DType::float64, {}), Contains("data pointer is null"));
  auto* misaligned = reinterpret_cast<std::byte*>(user.data()) + 2;
  CHECK_THROWS_WITH(Tensor::from_external(misaligned, Shape{2}, DType::float64, {}),
                    Contains("not aligned to its float64 elements (8 bytes)"));
  CHECK_NOTHROW(Tensor::from_external(nullptr, Shape{0, 3}, DType::float64, {})); // no bytes
}

TEST_CASE("every dtype DLPack shares with troupe goes out and back without a copy", "[core][dlpack]") {
  const std::vector<std::pair<DType, DLDataType>> shared{
    {DType::float16, {kDLFloat, 16, 1}}, {DType::bfloat16, {kDLBfloat, 16, 1}}, {DType::float32, {kDLFloat, 32, 1}},
    {DType::float64, {kDLFloat, 64, 1}}, {DType::int32, {kDLInt, 32, 1}},       {DType::int64, {kDLInt, 64, 1}},
    {DType::uint8, {kDLUInt, 8, 1}}};
  for (const auto& [dtype, dl] : shared) {
    INFO(name(dtype));
    const Tensor original = Tensor::full(Shape{2, 3}, 7.0, dtype);
    DLManagedTensor* out = original.to_dlpack();
    const auto& t = out->dl_tensor;
    CHECK(t.dtype.code == dl.code);
    CHECK(t.dtype.bits == dl.bits);
    CHECK(t.dtype.lanes == 1);
    CHECK(t.device.device_type == kDLCPU);
    CHECK(t.ndim == 2);
    CHECK(t.shape[0] == 2);
    CHECK(t.shape[1] == 3);
    CHECK(t.strides == nullptr);
    CHECK(t.data == original.device_data()); // the same bytes
    Tensor back = Tensor::from_dlpack(out);   // takes `out`: its deleter runs with the last handle
    CHECK(back.dtype() == dtype);
    CHECK(back.shape() == original.shape());
    CHECK(back.device_data() == original.device_data());
    CHECK(back.to_vector<double>() == original.to_vector<double>());
  }
}

TEST_CASE("a DLPack tensor from another library is used in place and its deleter runs once", "[core][dlpack]") {
  int deleted = 0;
  auto foreign = std::make_unique<Foreign>(DLDataType{kDLFloat, 32, 1}, std::vector<int64_t>{2, 2}, &deleted, true);
  auto* floats = reinterpret_cast<float*>(foreign->bytes.data());
  for (int i = 0; i < 4; ++i)
    floats[i] = static_cast<float>(i) + 0.5f;
  {
    Tensor t = Tensor::from_dlpack(&foreign->managed);
    CHECK(t.device().short_name() == "CPU:0");
    CHECK(reinterpret_cast<const float*>(t.device_data()) == floats);
    CHECK(t.to_vector<float>() == std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f});
    Tensor copy = t;
    t = Tensor();
    CHECK(deleted == 0); // `copy` still holds the bytes
  }
  CHECK(deleted == 1);

  // A byte offset, and a size-1 dimension with any stride (PyTorch gives such ones).
  Foreign offset(DLDataType{kDLInt, 64, 1}, {3, 1}, &deleted, true);
  offset.strides = {1, 7};
  offset.managed.dl_tensor.strides = offset.strides.data();
  offset.managed.dl_tensor.byte_offset = 8;
  auto* ints = reinterpret_cast<int64_t*>(offset.bytes.data());
  for (int i = 0; i < 4; ++i)
    ints[i] = i * 10;
  CHECK(Tensor::from_dlpack(&offset.managed).to_vector<int64_t>() == std::vector<int64_t>{10, 20, 30});
  CHECK(deleted == 2);

  // DLPack 0.8's bool code, from a newer producer.
  Foreign flags(DLDataType{6, 8, 1}, {2}, &deleted);
  flags.bytes[0] = std::byte{1};
  CHECK(Tensor::from_dlpack(&flags.managed).to_vector<bool>() == std::vector<bool>{true, false});
}

TEST_CASE("a DLPack tensor troupe cannot take is refused, named, and stays its producer's", "[core][dlpack]") {
  int deleted = 0;
  auto refused = [&](Foreign& f, const std::string& text) {
    CHECK_THROWS_WITH(Tensor::from_dlpack(&f.managed), Contains(text));
    CHECK(deleted == 0);
  };
  Foreign vector4(DLDataType{kDLFloat, 32, 4}, {2}, &deleted);
  refused(vector4, "is a vector type (4 lanes)");
  Foreign int8(DLDataType{kDLInt, 8, 1}, {2}, &deleted);
  refused(int8, "dtype {code kDLInt, bits 8, lanes 1} has no troupe dtype");
  Foreign complex(DLDataType{kDLComplex, 64, 1}, {2}, &deleted);
  refused(complex, "kDLComplex");
  Foreign transposed(DLDataType{kDLFloat, 32, 1}, {2, 3}, &deleted, true);
  transposed.strides = {1, 2};
  transposed.managed.dl_tensor.strides = transposed.strides.data();
  refused(transposed, "strides (1, 2) of shape (2, 3) are not row-major and contiguous");
  Foreign opencl(DLDataType{kDLFloat, 32, 1}, {2}, &deleted);
  opencl.managed.dl_tensor.device = {kDLOpenCL, 0};
  refused(opencl, "memory on kDLOpenCL 0 is not memory troupe uses");
  Foreign cuda(DLDataType{kDLFloat, 32, 1}, {2}, &deleted);
  cuda.managed.dl_tensor.device = {kDLCUDA, 0};
  refused(cuda, "CUDA device 0 serves no GPU of this process");
  CHECK_THROWS_WITH(Tensor::from_dlpack(nullptr), Contains("pointer is null"));
  CHECK_THROWS_WITH(Tensor(true).to_dlpack(), Contains("DLPack 0.6 has no bool type")
                                                && Contains("t.cast(DType::uint8)"));
  CHECK_THROWS_WITH(Tensor().to_dlpack(), Contains("empty Tensor handle"));
}

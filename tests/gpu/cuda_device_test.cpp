// GPU device actors on a real GPU through CUDA. Every case skips, naming why,
// where the process has no GPU (no card, no driver, or a build without CUDA);
// tests/actors/gpu_device_test.cpp runs the same code paths on emulated GPUs.

#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/actors/gpu/gpu_devices.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/troupe.hpp>

#include "support/error_code_of.hpp"
#include "gpu/no_gpu_reason.hpp"
#include "support/skip.hpp"

using namespace troupe;
using Catch::Matchers::Contains;
using testing::error_code_of;
using testing::error_message_of;
using testing::no_gpu_reason;

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

Tensor iota(int64_t n) {
  std::vector<float> values(static_cast<std::size_t>(n));
  std::iota(values.begin(), values.end(), 0.25f);
  return Tensor::from_vector(values);
}

} // namespace

TEST_CASE("a GPU round-trips a tensor through its device actors and logical devices", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  const Tensor host = iota(2 * 1024 * 1024).reshape({2048, 1024});   // 8 MiB
  const Tensor on0 = host.to("GPU:0");
  CHECK(on0.device().short_name() == "GPU:0");
  const Tensor on1 = on0.to("GPU:1");   // the same card's other logical device
  CHECK(on1.to("CPU:0").to_vector<float>() == host.to_vector<float>());
  CHECK(on0.slice(7, 9).to("CPU:0").to_vector<float>() == host.slice(7, 9).to_vector<float>());
  CHECK(to_string(Tensor::zeros({2, 2}, DType::float32, "GPU:1")) == to_string(Tensor::zeros({2, 2}, DType::float32)));
}

TEST_CASE("a copy between two physical GPUs keeps every element", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  if (internal::gpu_backend().device_count() < 2)
    TROUPE_SKIP("one GPU: a copy across cards needs two");
  Runtime rt;
  const Tensor host = iota(1 << 20);
  CHECK(host.to("GPU:0").to("GPU:1").to("CPU:0").to_vector<float>() == host.to_vector<float>());
}

TEST_CASE("a GPU's caching allocator reuses blocks and names the device when it is full", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1, .gpu_memory_limit_bytes = 16 * MiB});
  auto& allocator = rt.impl().gpus()->memory(0).allocator();
  const Tensor held = Tensor::zeros({3 * 1024 * 1024}, DType::float32, "GPU:0");   // 12 MiB
  const auto too_big = [] { (void) Tensor::zeros({2 * 1024 * 1024}, DType::float32, "GPU:0"); };
  CHECK(error_code_of(too_big) == Errc::resource_exhausted);
  CHECK_THAT(error_message_of(too_big), Contains("GPU:0 is out of memory") && Contains("12.00 MiB"));
  const auto before = allocator.stats().raw_allocations;
  for (int i = 0; i < 10; ++i)
    (void) Tensor::zeros({1024}, DType::float32, "GPU:0");
  CHECK(allocator.stats().raw_allocations == before + 1);
  CHECK(held.to("CPU:0").to_vector<float>() == std::vector<float>(3 * 1024 * 1024, 0.0f));
}

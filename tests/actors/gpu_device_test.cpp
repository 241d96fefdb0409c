// GPU device actors, GPU tensors and their copies, on GPUs emulated in host
// memory (actors/troupe/actors/gpu/emulated/emulated_gpu_backend.hpp): the same code paths as on
// a real GPU, minus CUDA itself, which tests/gpu/ covers where a GPU exists.

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/actors/gpu/gpu_devices.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/troupe.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpu_backend.hpp>
#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>
#include "support/error_code_of.hpp"
#include "support/skip.hpp"

using namespace troupe;
using Catch::Matchers::Contains;
using internal::GpuCopyKind;
using testing::EmulatedGpuBackend;
using testing::EmulatedGpus;
using testing::error_code_of;
using testing::error_message_of;

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

Tensor iota(int64_t n) {
  std::vector<float> values(static_cast<std::size_t>(n));
  std::iota(values.begin(), values.end(), 0.5f);
  return Tensor::from_vector(values);
}

std::vector<std::string> gpu_names(const Runtime& rt) {
  std::vector<std::string> names;
  for (const auto& d : rt.devices())
    if (d.is_gpu())
      names.push_back(d.short_name());
  return names;
}

} // namespace

TEST_CASE("without a GPU, a GPU device is an error that says why and names the fix", "[actors][gpu]") {
  if (internal::gpu_backend().device_count() > 0)
    TROUPE_SKIP("this machine has a GPU; tests/gpu covers it");
  Runtime rt({.logical_cpu_devices = 2});
  CHECK(gpu_names(rt).empty());
  const auto message = error_message_of([&] { (void) rt.resolve_device("GPU:0"); });
  CHECK_THAT(message, Contains("device \"GPU:0\" does not exist in this runtime (devices: CPU:0, CPU:1)"));
  CHECK_THAT(message, Contains("this process has no GPU (" + internal::gpu_backend().unavailable_reason() + ")"));
  const auto zeros = error_message_of([] { (void) Tensor::zeros({4}, DType::float32, "/gpu:0"); });
  CHECK_THAT(zeros, Contains("device \"/device:GPU:0\" does not exist: this process has no GPU"));
  CHECK_THAT(zeros, Contains("use a CPU device such as \"CPU:0\""));
  CHECK(error_code_of([] { (void) Tensor(1.0f).to("GPU:0"); }) == Errc::not_found);
}

TEST_CASE("each logical GPU gets its own device actor and stream, stopped with its runtime", "[actors][gpu]") {
  EmulatedGpus gpus(2);
  {
    Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
    CHECK(gpu_names(rt) == std::vector<std::string>{"GPU:0", "GPU:1", "GPU:2", "GPU:3"});
    CHECK(rt.resolve_device("/job:localhost/replica:0/task:0/device:GPU:3").short_name() == "GPU:3");
    CHECK_THAT(error_message_of([&] { (void) rt.resolve_device("GPU:4"); }),
               Contains("devices: CPU:0, GPU:0, GPU:1, GPU:2, GPU:3)") && Contains("logical_gpu_devices_per_gpu = k"));
    auto* devices = rt.impl().gpus();
    REQUIRE(devices != nullptr);
    CHECK(devices->memory(1).gpu() == 0);
    CHECK(devices->memory(2).gpu() == 1);
    // Each logical GPU takes an equal share of its card's free memory, less 5%.
    CHECK(devices->memory(0).allocator().limit_bytes() == static_cast<std::size_t>(64 * MiB * 0.95) / 2);
    CHECK(gpus.backend->streams_created() == 4);
    CHECK(gpus.backend->streams_alive() == 4);
  }
  CHECK(gpus.backend->streams_alive() == 0);
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("a tensor goes host to GPU, across GPUs and back with every element intact", "[actors][gpu]") {
  EmulatedGpus gpus(2);
  {
    Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
    const Tensor host = iota(100'000).reshape({1000, 100});
    const Tensor on0 = host.to("GPU:0");
    CHECK(on0.device().short_name() == "GPU:0");
    CHECK_FALSE(on0.on_host());
    CHECK(on0.shape() == host.shape());
    CHECK(on0.to("GPU:0").shares_buffer_with(on0));
    const Tensor on3 = on0.to("/gpu:3");   // another card
    const Tensor on2 = on3.to("/job:localhost/replica:0/task:0/device:GPU:2");   // the same card
    CHECK(on2.device().short_name() == "GPU:2");
    const Tensor back = on2.to("CPU:0");
    CHECK(back.on_host());
    CHECK(back.device().short_name() == "CPU:0");
    CHECK(back.to_vector<float>() == host.to_vector<float>());
    // A view keeps its offset on the device too.
    CHECK(on0.slice(10, 12).to("CPU:0").to_vector<float>() == host.slice(10, 12).to_vector<float>());
    CHECK(gpus.backend->copies(GpuCopyKind::host_to_device) == 1);
    CHECK(gpus.backend->copies(GpuCopyKind::device_to_device) == 2);
    CHECK(gpus.backend->copies(GpuCopyKind::device_to_host) == 2);
  }
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("Tensor::zeros on a GPU reads back as zeros and prints as the host tensor does", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt;
  for (const DType dtype : {DType::float32, DType::int64, DType::bool_}) {
    const Tensor gpu = Tensor::zeros({2, 3}, dtype, "GPU:0");
    CHECK(gpu.device().short_name() == "GPU:0");
    CHECK(to_string(gpu) == to_string(Tensor::zeros({2, 3}, dtype)));
  }
  const Tensor values = Tensor::from_vector<int32_t>({1, 2, 3}).to("GPU:0");
  CHECK(to_string(values) == "<Tensor: shape=(3,), dtype=int32, value=[1 2 3]>");
  CHECK(to_string(Tensor::zeros({0}, DType::float32, "GPU:0")) == "<Tensor: shape=(0,), dtype=float32, value=[]>");
}

TEST_CASE("reading GPU memory on the host is an error naming the device and the fix", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt;
  Tensor t = iota(6).to("GPU:0");
  for (auto read : std::vector<std::function<void()>>{
         [&] { (void) t.data<float>(); }, [&] { (void) t.raw_data(); }, [&] { (void) t.item<float>(); },
         [&] { (void) t.to_vector<float>(); }, [&] { (void) t.cast(DType::float64); },
         [&] { (void) t.mutable_data<float>(); }}) {
    const auto message = error_message_of(read);
    CHECK_THAT(message, Contains("is in GPU:0 memory, which the host cannot read") && Contains(".to(\"CPU:0\")"));
    CHECK(error_code_of(read) == Errc::failed_precondition);
  }
  CHECK_THAT(error_message_of([&] { (void) t.on_device(DeviceSpec::local("CPU", 0)); }),
             Contains("move it with to(\"/device:CPU:0\"), which copies"));
}

TEST_CASE("writing a shared GPU tensor copies it on the device first", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt;
  const Tensor original = iota(8).to("GPU:0");
  Tensor writer = original;
  const std::byte* before = writer.device_data();
  std::byte* mine = writer.mutable_device_data();
  CHECK(mine != before);
  CHECK(original.device_data() == before);
  CHECK_FALSE(writer.shares_buffer_with(original));
  CHECK(writer.to("CPU:0").to_vector<float>() == iota(8).to_vector<float>());
  // The sole handle writes in place.
  CHECK(writer.mutable_device_data() == mine);
}

TEST_CASE("a request beyond a logical GPU's memory is resource_exhausted naming what it holds", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .gpu_memory_limit_bytes = 1 * MiB});
  const Tensor held = Tensor::zeros({196'608}, DType::float32, "GPU:0");   // 768 KiB
  const auto too_big = [] { (void) Tensor::zeros({131'072}, DType::float32, "GPU:0"); };   // 512 KiB
  CHECK(error_code_of(too_big) == Errc::resource_exhausted);
  const auto message = error_message_of(too_big);
  CHECK_THAT(message, Contains("GPU:0 is out of memory") && Contains("512.00 KiB") && Contains("768.00 KiB"));
  CHECK_THAT(message, Contains("gpu_memory_limit_bytes"));
}

TEST_CASE("GPU memory is cached while the runtime lives and returned once its tensors are gone", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  {
    Runtime rt;
    auto& allocator = rt.impl().gpus()->memory(0).allocator();
    const void* first = nullptr;
    {
      const Tensor a = Tensor::zeros({1024}, DType::float32, "GPU:0");
      first = a.device_data();
    }
    CHECK(allocator.stats().in_use_bytes == 0);
    CHECK(allocator.stats().cached_bytes == 4096);
    const Tensor b = Tensor::zeros({1000}, DType::float32, "GPU:0");   // the same bucket
    CHECK(b.device_data() == first);
    CHECK(allocator.stats().cache_hits == 1);
  }
  CHECK(gpus.backend->device_bytes_held() == 0);
  CHECK(gpus.backend->pinned_bytes_held() == 0);
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("a GPU tensor outlives its runtime: its memory is freed, a copy says the runtime is gone", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Tensor survivor;
  {
    Runtime rt;
    survivor = iota(16).to("GPU:0");
  }
  CHECK(gpus.backend->device_bytes_held() > 0);
  const auto message = error_message_of([&] { (void) survivor.to("CPU:0"); });
  CHECK_THAT(message, Contains("the Runtime that owned this GPU was destroyed"));
  CHECK_THAT(to_string(survivor), Contains("<Tensor: shape=(16,), dtype=float32, on GPU:0, unreadable:"));
  CHECK_THAT(error_message_of([] { (void) Tensor::zeros({1}, DType::float32, "GPU:0"); }),
             Contains("no Runtime of this process is running"));
  survivor = Tensor{};
  CHECK(gpus.backend->device_bytes_held() == 0);
}

TEST_CASE("a failed copy back is the caller's error and leaves the device usable", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt;
  const Tensor host = iota(32);
  const Tensor on_gpu = host.to("GPU:0");
  (void) on_gpu.to("CPU:0");  // the copy there, which does not wait, is done
  gpus.backend->fail_next_copy();
  CHECK_THAT(error_message_of([&] { (void) on_gpu.to("CPU:0"); }),
             Contains("a copy to the host failed: GPU:0: GPU 0: cudaMemcpyAsync failed"));
  // A copy refused at enqueue changed nothing on the GPU.
  CHECK(on_gpu.to("CPU:0").to_vector<float>() == host.to_vector<float>());
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("a copy to a GPU returns at once, and one that fails poisons the device, naming the cause",
          "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt;
  const Tensor host = iota(32);
  gpus.backend->fail_next_copy();
  const Tensor lost = host.to("GPU:0");  // nobody waits for it: the failure is the device's
  CHECK_THAT(error_message_of([&] { (void) lost.to("CPU:0"); }),
             Contains("GPU:0: a copy from the host failed: GPU 0: cudaMemcpyAsync failed"));
  // Every later read fails with the first cause instead of returning what the lost copy left behind.
  CHECK_THAT(error_message_of([&] { (void) host.to("GPU:0").to("CPU:0"); }),
             Contains("a copy from the host failed"));
}

TEST_CASE("a failed stream fails every later transfer with the first cause", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt;
  const Tensor host = iota(32);
  gpus.backend->fail_streams_from_now("cudaErrorIllegalAddress: an illegal memory access was encountered");
  const Tensor on_gpu = host.to("GPU:0");
  CHECK_THAT(error_message_of([&] { (void) on_gpu.to("CPU:0"); }),
             Contains("GPU:0: the stream failed: cudaErrorIllegalAddress"));
  // CUDA's errors of this kind are sticky: the GPU's results are lost.
  CHECK_THAT(error_message_of([&] { (void) host.to("GPU:0").to("CPU:0"); }),
             Contains("GPU:0: the stream failed: cudaErrorIllegalAddress"));
  CHECK(gpus.backend->misuse().empty());
}

TEST_CASE("a replica that copies to a GPU suspends its fiber while the device actor works", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 4, .threads = 1, .logical_gpu_devices_per_gpu = 2});
  MirroredStrategy strategy(rt, {"CPU:0", "CPU:1", "CPU:2", "CPU:3"});
  // One scheduler thread: a replica that blocked it would stop the device
  // actors too, and the run would never finish.
  const auto result = strategy.run([] {
    const int r = get_replica_context().replica_id_in_sync_group();
    const Tensor mine = Tensor::full({256}, r + 1.0, DType::float32);
    const Tensor there = mine.to("GPU:" + std::to_string(r % 2)).to("GPU:" + std::to_string((r + 1) % 2));
    return there.to("CPU:" + std::to_string(r));
  });
  const auto locals = strategy.experimental_local_results(result);
  REQUIRE(locals.size() == 4);
  for (int r = 0; r < 4; ++r)
    CHECK(locals[static_cast<std::size_t>(r)].to_vector<float>() == std::vector<float>(256, r + 1.0f));
}

TEST_CASE("GPU options are checked, and a simulation has no GPUs", "[actors][gpu]") {
  EmulatedGpus gpus(1);
  CHECK_THAT(error_message_of([] { Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 0}); }),
             Contains("logical_gpu_devices_per_gpu must be 1 or more") && Contains("got 0"));
  Runtime sim(Simulation{.seed = 3});
  CHECK(gpu_names(sim).empty());
  CHECK_THAT(error_message_of([&] { (void) sim.resolve_device("GPU:0"); }),
             Contains("a simulation runs on CPU devices only"));
}

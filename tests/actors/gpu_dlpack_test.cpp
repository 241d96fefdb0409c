// DLPack with GPU memory, on GPUs emulated in host memory
// (actors/troupe/actors/gpu/emulated/emulated_gpus.hpp): kDLCUDA names the
// card, troupe the card's logical GPUs.

#include <vector>

#include <catch2/catch.hpp>
#include <dlpack/dlpack.h>

#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>
#include <troupe/troupe.hpp>

using namespace troupe;
using testing::EmulatedGpus;

TEST_CASE("a GPU tensor goes to DLPack as kDLCUDA of its card and comes back without a copy", "[actors][gpu][dlpack]") {
  EmulatedGpus gpus(2);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor t = Tensor::from_vector<float>({1, 2, 3}).to("GPU:1");
  DLManagedTensor* out = t.to_dlpack();
  CHECK(out->dl_tensor.device.device_type == kDLCUDA);
  CHECK(out->dl_tensor.device.device_id == 1);
  CHECK(out->dl_tensor.data == t.device_data());
  const Tensor back = Tensor::from_dlpack(out);
  CHECK(back.device().short_name() == "GPU:1");
  CHECK(back.device_data() == t.device_data());
  CHECK(back.to("CPU:0").to_vector<float>() == std::vector<float>{1, 2, 3});
}

TEST_CASE("CUDA memory from DLPack lands on its card's first logical GPU", "[actors][gpu][dlpack]") {
  EmulatedGpus gpus(2);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2}); // GPU:0,1 on card 0; GPU:2,3 on card 1
  const Tensor on3 = Tensor::from_vector<int64_t>({7, 8}).to("GPU:3");
  DLManagedTensor* out = on3.to_dlpack();
  CHECK(out->dl_tensor.device.device_id == 1);
  const Tensor back = Tensor::from_dlpack(out);
  CHECK(back.device().short_name() == "GPU:2");
  CHECK(back.device_data() == on3.device_data());
  CHECK(back.to("CPU:0").to_vector<int64_t>() == std::vector<int64_t>{7, 8});
  // A card without a GPU of this process is named.
  DLManagedTensor* on_card5 = on3.to_dlpack();
  on_card5->dl_tensor.device.device_id = 5;
  CHECK_THROWS_WITH(Tensor::from_dlpack(on_card5), Catch::Contains("CUDA device 5 serves no GPU of this process")
                                                     && Catch::Contains("cards 0, 1"));
  on_card5->deleter(on_card5); // refused: still the producer's to delete
}

// troupe's ops on GPU tensors, on GPUs emulated in host memory with host
// kernels (actors/troupe/actors/gpu/emulated/emulated_gpus.hpp): dispatch by the operands'
// device, placement of host operands, shapes, errors and the device actor's
// handling of failed launches. The CUDA kernels themselves are compared to the
// CPU ops in tests/gpu where a GPU exists.

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/ops/gpu_kernels.hpp>
#include <troupe/troupe.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>
#include "support/error_code_of.hpp"
#include "support/gpu_memory_pressure.hpp"
#include "support/test_values.hpp"

using namespace troupe;
using Catch::Matchers::Contains;
using testing::EmulatedGpus;
using testing::error_code_of;
using testing::error_message_of;

namespace {

Tensor values(const Shape& shape, uint64_t seed) {
  return testing::test_values(shape, seed);
}

Tensor host(const Tensor& t) {
  return t.to("CPU:0");
}

bool on_gpu0(const Tensor& t) {
  return t.device().short_name() == "GPU:0";
}

} // namespace

TEST_CASE("elementwise ops on a GPU tensor run on its GPU and give the CPU's values", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor a = values({3, 5}, 1);
  const Tensor b = values({3, 5}, 2) + 3.0f;  // no zero divisors
  const Tensor ga = a.to("GPU:0");
  const Tensor gb = b.to("GPU:0");
  for (auto [result, expected] : std::vector<std::pair<Tensor, Tensor>>{
         {ga + gb, a + b},
         {ga - gb, a - b},
         {ga * gb, a * b},
         {ga / gb, a / b},
         {-ga, -a},
         {ga * 2.5f, a * 2.5f},
         {1.0f - ga, 1.0f - a},
         {relu(ga), relu(a)},
         {relu_grad(gb, ga), relu_grad(b, a)},
         {square(ga), square(a)},
         {sqrt(gb), sqrt(b)},
       }) {
    CHECK(on_gpu0(result));
    CHECK(array_equal(host(result), expected));
  }
}

TEST_CASE("a GPU rank-0 tensor broadcasts, and a host operand is copied to the op's GPU", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor a = values({4, 2}, 3);
  const Tensor scale = Tensor(0.5f).to("GPU:0");
  CHECK(array_equal(host(a.to("GPU:0") * scale), a * 0.5f));
  CHECK(array_equal(host(scale * a.to("GPU:0")), a * 0.5f));
  // A host tensor meets a GPU one: the op runs on the GPU, as TensorFlow places it.
  const Tensor mixed = a + a.to("GPU:0");
  CHECK(on_gpu0(mixed));
  CHECK(array_equal(host(mixed), a + a));
}

TEST_CASE("operands on two GPUs meet on the first GPU operand's device", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  const Tensor a = values({64}, 4);
  const Tensor b = values({64}, 5);
  const Tensor sum = a.to("GPU:1") + b.to("GPU:0");
  CHECK(sum.device().short_name() == "GPU:1");
  CHECK(array_equal(host(sum), a + b));
}

TEST_CASE("matmul, bias_add and softmax on a GPU match the CPU", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor a = values({6, 4}, 6);
  const Tensor b = values({4, 3}, 7);
  const Tensor at = values({4, 6}, 8);
  const Tensor bt = values({3, 4}, 9);
  const Tensor bias = values({3}, 10);
  CHECK(all_close(host(matmul(a.to("GPU:0"), b.to("GPU:0"))), matmul(a, b)));
  CHECK(all_close(host(matmul(at.to("GPU:0"), b.to("GPU:0"), true, false)), matmul(at, b, true, false)));
  CHECK(all_close(host(matmul(a.to("GPU:0"), bt.to("GPU:0"), false, true)), matmul(a, bt, false, true)));
  CHECK(all_close(host(matmul(at.to("GPU:0"), bt.to("GPU:0"), true, true)), matmul(at, bt, true, true)));
  const Tensor empty_inner = matmul(Tensor::zeros({2, 0}, DType::float32, "GPU:0"),
                                    Tensor::zeros({0, 3}, DType::float32, "GPU:0"));
  CHECK(array_equal(host(empty_inner), Tensor::zeros({2, 3}, DType::float32)));
  const Tensor logits = matmul(a, b);
  CHECK(all_close(host(bias_add(logits.to("GPU:0"), bias.to("GPU:0"))), bias_add(logits, bias)));
  CHECK(all_close(host(softmax(logits.to("GPU:0"))), softmax(logits)));
  CHECK(all_close(host(log_softmax(logits.to("GPU:0"))), log_softmax(logits)));
}

TEST_CASE("reductions on a GPU match the CPU along every axis", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor x = values({3, 4, 5}, 11);
  const Tensor gx = x.to("GPU:0");
  CHECK(all_close(host(reduce_sum(gx)), reduce_sum(x)));
  CHECK(all_close(host(reduce_mean(gx)), reduce_mean(x)));
  for (int axis : {0, 1, 2, -1}) {
    CHECK(all_close(host(reduce_sum(gx, axis)), reduce_sum(x, axis)));
    CHECK(all_close(host(reduce_mean(gx, axis)), reduce_mean(x, axis)));
  }
  // An empty float mean is NaN, as on the CPU.
  CHECK(std::isnan(host(reduce_mean(Tensor::zeros({0}, DType::float32, "GPU:0"))).item<float>()));
}

TEST_CASE("softmax cross-entropy and accuracy on a GPU match the CPU", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor logits = values({5, 4}, 12);
  for (const Tensor& labels : {Tensor::from_vector(std::vector<int64_t>{0, 3, 1, 2, 3}),
                               Tensor::from_vector(std::vector<int32_t>{0, 3, 1, 2, 3}),
                               Tensor::from_vector(std::vector<uint8_t>{0, 3, 1, 2, 3})}) {
    const auto cpu = sparse_softmax_cross_entropy_with_logits_and_grad(labels, logits);
    const auto gpu = sparse_softmax_cross_entropy_with_logits_and_grad(labels.to("GPU:0"), logits.to("GPU:0"));
    CHECK(on_gpu0(gpu.loss));
    CHECK(all_close(host(gpu.loss), cpu.loss));
    CHECK(all_close(host(gpu.backprop), cpu.backprop));
    CHECK(all_close(host(sparse_softmax_cross_entropy_with_logits(labels.to("GPU:0"), logits.to("GPU:0"))),
                    cpu.loss));
    CHECK(accuracy_count(labels.to("GPU:0"), logits.to("GPU:0")) == accuracy_count(labels, logits));
  }
}

TEST_CASE("a label out of range gives NaN on a GPU, as TensorFlow's GPU kernel, and fails accuracy_count",
          "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor logits = values({3, 4}, 13).to("GPU:0");
  const Tensor labels = Tensor::from_vector(std::vector<int64_t>{1, 7, 0}).to("GPU:0");
  const auto result = sparse_softmax_cross_entropy_with_logits_and_grad(labels, logits);
  const Tensor loss = host(result.loss);
  CHECK(std::isfinite(loss.data<float>()[0]));
  CHECK(std::isnan(loss.data<float>()[1]));
  CHECK(std::isfinite(loss.data<float>()[2]));
  CHECK(std::isnan(host(result.backprop).data<float>()[4]));
  CHECK(error_code_of([&] { (void) accuracy_count(labels, logits); }) == Errc::invalid_argument);
  CHECK_THAT(error_message_of([&] { (void) accuracy_count(labels, logits); }),
             Contains("the label at position 1 is outside [0, 4)"));
}

TEST_CASE("optimizer updates on GPU variables match the CPU step by step", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Shape shape{7, 3};
  Tensor var = values(shape, 14);
  Tensor m = Tensor::zeros(shape, DType::float32);
  Tensor v = Tensor::zeros(shape, DType::float32);
  Tensor accum = Tensor::zeros(shape, DType::float32);
  Tensor momentum_var = var;
  Tensor sgd_var = var;
  Tensor g_var = var.to("GPU:0");
  Tensor g_m = m.to("GPU:0");
  Tensor g_v = v.to("GPU:0");
  Tensor g_accum = accum.to("GPU:0");
  Tensor g_momentum_var = var.to("GPU:0");
  Tensor g_sgd_var = var.to("GPU:0");
  const MomentumOptions momentum{.learning_rate = 0.1, .momentum = 0.9, .nesterov = true};
  for (int64_t step = 1; step <= 3; ++step) {
    const Tensor grad = values(shape, 20 + static_cast<uint64_t>(step));
    apply_adam(var, m, v, grad, step);
    apply_adam(g_var, g_m, g_v, grad.to("GPU:0"), step);
    apply_momentum(momentum_var, accum, grad, momentum);
    apply_momentum(g_momentum_var, g_accum, grad, momentum);  // a host gradient is copied to the GPU
    axpy_inplace(sgd_var, -0.05, grad);
    axpy_inplace(g_sgd_var, -0.05, grad.to("GPU:0"));
  }
  CHECK(on_gpu0(g_var));
  CHECK(all_close(host(g_var), var, 1e-6, 1e-7));
  CHECK(all_close(host(g_m), m, 1e-6, 1e-7));
  CHECK(all_close(host(g_v), v, 1e-6, 1e-7));
  CHECK(all_close(host(g_momentum_var), momentum_var, 1e-6, 1e-7));
  CHECK(all_close(host(g_accum), accum, 1e-6, 1e-7));
  CHECK(all_close(host(g_sgd_var), sgd_var, 1e-6, 1e-7));
}

TEST_CASE("an update writes a GPU variable in place, copying a shared buffer first", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  Tensor var = Tensor::full({4}, 1.0, DType::float32).to("GPU:0");
  const Tensor snapshot = var;  // shares the buffer
  axpy_inplace(var, 2.0, Tensor::full({4}, 1.0, DType::float32).to("GPU:0"));
  CHECK(array_equal(host(var), Tensor::full({4}, 3.0, DType::float32)));
  CHECK(array_equal(host(snapshot), Tensor::full({4}, 1.0, DType::float32)));
}

TEST_CASE("GPU ops refuse other dtypes and split devices with errors that name the fix", "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor ints = Tensor::from_vector(std::vector<int32_t>{1, 2, 3}).to("GPU:0");
  CHECK(error_code_of([&] { (void) (ints + ints); }) == Errc::not_supported);
  CHECK_THAT(error_message_of([&] { (void) (ints + ints); }),
             Contains("add on GPU:0: GPU kernels take float32 tensors, but the left operand is a int32 tensor"));
  Tensor var = Tensor::zeros({3}, DType::float32, "GPU:0");
  Tensor m = Tensor::zeros({3}, DType::float32);
  Tensor v = Tensor::zeros({3}, DType::float32, "GPU:0");
  CHECK_THAT(error_message_of([&] { apply_adam(var, m, v, Tensor::zeros({3}, DType::float32), 1); }),
             Contains("apply_adam: var is on GPU:0 but m is on CPU:0"));
  // Shapes are checked before anything reaches the GPU.
  CHECK(error_code_of([&] { (void) matmul(var, var); }) == Errc::invalid_argument);
}

TEST_CASE("a kernel that fails to launch fails every later read of its GPU, naming the op",
          "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  internal::GpuKernels failing = testing::emulated_gpu_kernels();
  failing.gemm_f32 = [](const internal::GpuLaunchContext&, const internal::GpuGemm&) {
    fail(Errc::internal, "cublasSgemm failed: CUBLAS_STATUS_EXECUTION_FAILED");
  };
  const internal::ScopedGpuKernels scope(failing);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor a = Tensor::full({2, 2}, 1.0, DType::float32).to("GPU:0");
  const Tensor product = matmul(a, a);  // returns at once: the launch fails on the device actor
  const auto message = error_message_of([&] { (void) host(product); });
  CHECK_THAT(message, Contains("GPU:0: matmul failed to launch"));
  CHECK_THAT(message, Contains("CUBLAS_STATUS_EXECUTION_FAILED"));
  // The GPU's results are lost from there on, as with CUDA's sticky errors.
  CHECK_THAT(error_message_of([&] { (void) host(a + a); }), Contains("matmul failed to launch"));
}

TEST_CASE("under a tight memory limit, cached blocks go back to the device only behind its actor's barrier",
          "[actors][gpu][ops]") {
  EmulatedGpus gpus(1);
  Runtime rt({.logical_cpu_devices = 1, .gpu_memory_limit_bytes = 14u << 20});
  const auto [on_gpu, on_host] = testing::accumulate_under_memory_pressure();
  CHECK(all_close(host(on_gpu), on_host, 1e-4, 1e-2));
  const auto stats =
    dynamic_cast<internal::GpuDeviceMemory&>(*internal::device_memory_for(DeviceSpec::from_string("GPU:0")))
      .allocator()
      .stats();
  CHECK(stats.raw_allocations > 7);  // blocks went back to the device and were allocated again
  CHECK(gpus.backend->misuse().empty());
}

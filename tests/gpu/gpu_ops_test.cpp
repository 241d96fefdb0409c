// troupe's ops on a real GPU (the CUDA kernels of ops/cuda) against the same
// ops on the CPU, within float tolerance. Every case skips, naming why, where
// the process has no GPU; tests/actors/gpu_ops_test.cpp runs the dispatch on
// emulated GPUs everywhere.

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <troupe/actors/gpu/gpu_device_memory.hpp>
#include <troupe/core/device_memory.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/troupe.hpp>

#include "gpu/no_gpu_reason.hpp"
#include "support/gpu_memory_pressure.hpp"
#include "support/skip.hpp"
#include "support/test_values.hpp"

using namespace troupe;
using testing::no_gpu_reason;
using testing::test_values;

namespace {

Tensor host(const Tensor& t) {
  return t.to("CPU:0");
}

Tensor gpu(const Tensor& t) {
  return t.to("GPU:0");
}

/// Float tolerance for results whose summation order differs (cuBLAS, tree reductions).
bool close(const Tensor& gpu_result, const Tensor& cpu_result, double rtol = 1e-5, double atol = 1e-5) {
  return all_close(host(gpu_result), cpu_result, rtol, atol);
}

} // namespace

TEST_CASE("CUDA elementwise kernels give the CPU's values, over 3 million elements too", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1});
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{3'000'017}}) {
    const Tensor a = test_values({n}, 1);
    const Tensor b = test_values({n}, 2) + 3.0f;
    const Tensor ga = gpu(a);
    const Tensor gb = gpu(b);
    CHECK(array_equal(host(ga + gb), a + b));
    CHECK(array_equal(host(ga - gb), a - b));
    CHECK(array_equal(host(ga * gb), a * b));
    CHECK(array_equal(host(ga / gb), a / b));
    CHECK(array_equal(host(-ga), -a));
    CHECK(array_equal(host(ga * 2.5f), a * 2.5f));
    CHECK(array_equal(host(ga * gpu(Tensor(0.5f))), a * 0.5f));
    CHECK(array_equal(host(relu(ga)), relu(a)));
    CHECK(array_equal(host(relu_grad(gb, ga)), relu_grad(b, a)));
    CHECK(array_equal(host(square(ga)), square(a)));
    CHECK(array_equal(host(sqrt(gb)), sqrt(b)));
  }
}

TEST_CASE("cuBLAS matmul matches the CPU for every transpose and odd sizes", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor a = test_values({67, 129}, 3);
  const Tensor b = test_values({129, 33}, 4);
  const Tensor at = test_values({129, 67}, 5);
  const Tensor bt = test_values({33, 129}, 6);
  CHECK(close(matmul(gpu(a), gpu(b)), matmul(a, b), 1e-4, 1e-4));
  CHECK(close(matmul(gpu(at), gpu(b), true, false), matmul(at, b, true, false), 1e-4, 1e-4));
  CHECK(close(matmul(gpu(a), gpu(bt), false, true), matmul(a, bt, false, true), 1e-4, 1e-4));
  CHECK(close(matmul(gpu(at), gpu(bt), true, true), matmul(at, bt, true, true), 1e-4, 1e-4));
  // The main job's shapes: a batch of 512 through 784 x 256.
  const Tensor x = test_values({512, 784}, 7);
  const Tensor w = test_values({784, 256}, 8);
  CHECK(close(matmul(gpu(x), gpu(w)), matmul(x, w), 1e-4, 1e-3));
}

TEST_CASE("CUDA reductions match the CPU along every axis and over 10 million elements", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor x = test_values({33, 65, 17}, 9);
  for (int axis : {0, 1, 2}) {
    CHECK(close(reduce_sum(gpu(x), axis), reduce_sum(x, axis), 1e-5, 1e-4));
    CHECK(close(reduce_mean(gpu(x), axis), reduce_mean(x, axis), 1e-5, 1e-5));
  }
  const Tensor big = test_values({10'000'019}, 10);
  const double exact = [&] {
    double sum = 0;
    for (float v : big.to_vector<float>())
      sum += v;
    return sum;
  }();
  const double on_gpu = host(reduce_sum(gpu(big))).item<float>();
  CHECK(std::abs(on_gpu - exact) <= 1e-5 * 10'000'019 * 2);
}

TEST_CASE("CUDA bias_add, softmax, cross-entropy and accuracy match the CPU", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1});
  const Tensor logits = test_values({1000, 10}, 11) * 4.0f;
  const Tensor bias = test_values({10}, 12);
  std::vector<int64_t> label_values(1000);
  for (std::size_t i = 0; i < label_values.size(); ++i)
    label_values[i] = static_cast<int64_t>((i * 7) % 10);
  const Tensor labels = Tensor::from_vector(label_values);
  CHECK(array_equal(host(bias_add(gpu(logits), gpu(bias))), bias_add(logits, bias)));
  CHECK(close(softmax(gpu(logits)), softmax(logits)));
  CHECK(close(log_softmax(gpu(logits)), log_softmax(logits)));
  const auto cpu = sparse_softmax_cross_entropy_with_logits_and_grad(labels, logits);
  const auto on_gpu = sparse_softmax_cross_entropy_with_logits_and_grad(gpu(labels), gpu(logits));
  CHECK(close(on_gpu.loss, cpu.loss));
  CHECK(close(on_gpu.backprop, cpu.backprop));
  CHECK(accuracy_count(gpu(labels), gpu(logits)) == accuracy_count(labels, logits));
  CHECK(accuracy_count(gpu(labels.cast(DType::int32)), gpu(logits)) == accuracy_count(labels, logits));
}

TEST_CASE("CUDA optimizer updates follow the CPU's over several steps", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1});
  const Shape shape{257, 31};
  Tensor var = test_values(shape, 13);
  Tensor m = Tensor::zeros(shape, DType::float32);
  Tensor v = Tensor::zeros(shape, DType::float32);
  Tensor accum = Tensor::zeros(shape, DType::float32);
  Tensor momentum_var = var;
  Tensor g_var = gpu(var);
  Tensor g_m = gpu(m);
  Tensor g_v = gpu(v);
  Tensor g_accum = gpu(accum);
  Tensor g_momentum_var = gpu(var);
  const MomentumOptions momentum{.learning_rate = 0.1, .momentum = 0.9, .nesterov = true};
  for (int64_t step = 1; step <= 5; ++step) {
    const Tensor grad = test_values(shape, 20 + static_cast<uint64_t>(step));
    apply_adam(var, m, v, grad, step);
    apply_adam(g_var, g_m, g_v, gpu(grad), step);
    apply_momentum(momentum_var, accum, grad, momentum);
    apply_momentum(g_momentum_var, g_accum, gpu(grad), momentum);
  }
  CHECK(close(g_var, var, 1e-5, 1e-6));
  CHECK(close(g_m, m, 1e-5, 1e-6));
  CHECK(close(g_v, v, 1e-5, 1e-6));
  CHECK(close(g_momentum_var, momentum_var, 1e-5, 1e-6));
}

TEST_CASE("a long chain of asynchronous GPU ops reuses freed memory in stream order", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = 2});
  Tensor x = test_values({1 << 20}, 14);
  Tensor g = gpu(x);
  for (int i = 0; i < 200; ++i) {
    x = relu(x * 1.001f + 0.25f) - 0.125f;
    g = relu(g * 1.001f + 0.25f) - 0.125f;  // each temporary is freed while the stream is still behind
  }
  CHECK(close(g, x));
  // A result read by another logical GPU's stream waits for the stream that wrote it.
  const Tensor other = gpu(x).to("GPU:1") + g;
  CHECK(other.device().short_name() == "GPU:1");
  CHECK(close(other, x + x));
}

TEST_CASE("under a tight memory limit, cached blocks go back to the driver only after their queued kernels", "[gpu]") {
  if (const auto why = no_gpu_reason(); !why.empty())
    TROUPE_SKIP(why);
  Runtime rt({.logical_cpu_devices = 1, .gpu_memory_limit_bytes = 14u << 20});
  const auto [acc, acc_host] = testing::accumulate_under_memory_pressure();
  CHECK(close(acc, acc_host, 1e-4, 1e-2));
  const auto stats = dynamic_cast<internal::GpuDeviceMemory&>(*internal::device_memory_for(
                                                                 DeviceSpec::from_string("GPU:0")))
                       .allocator()
                       .stats();
  CHECK(stats.raw_allocations > 7);  // blocks did go back to the driver and came again
}

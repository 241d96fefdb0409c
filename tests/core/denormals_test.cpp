#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <thread>

#include <troupe/core/denormals.hpp>
#include <troupe/ops/nn_ops.hpp>
#include <troupe/ops/tensor_ops.hpp>

using namespace troupe;

namespace {

constexpr float smallest_normal = std::numeric_limits<float>::min();
const float denormal = smallest_normal / 1024; // 1.1e-41

/// Runs `fn` on a new thread, whose floating-point mode is the C default.
template <class Fn>
void on_plain_thread(Fn fn) {
  std::thread thread(fn);
  thread.join();
}

} // namespace

TEST_CASE("kernels flush denormal results and inputs to zero on any thread and restore its mode",
          "[core][denormals]") {
  on_plain_thread([] {
    REQUIRE_FALSE(denormals_flushed());
    // What the thread's own arithmetic gives: a denormal.
    volatile float a = smallest_normal;
    volatile float b = 1.0f / 1024;
    REQUIRE(a * b == denormal);

    // Results: a product below the smallest normal is 0 (flush-to-zero).
    CHECK(multiply(Tensor(smallest_normal), Tensor(1.0f / 1024)).item<float>() == 0.0f);
    // Inputs: a denormal operand reads as 0 (denormals-are-zero), so the
    // product with 2^30, a normal 1.2e-32 without it, is 0.
    CHECK(multiply(Tensor(denormal), Tensor(1073741824.0f)).item<float>() == 0.0f);
    CHECK(matmul(Tensor::from_vector(std::vector<float>{denormal}).reshape({1, 1}),
                 Tensor::from_vector(std::vector<float>{1073741824.0f}).reshape({1, 1}))
            .to_vector<float>()
          == std::vector<float>{0.0f});
    CHECK(Tensor(1e-40).cast(DType::float32).item<float>() == 0.0f);
    CHECK(sqrt(Tensor(denormal)).item<float>() == 0.0f);

    // The thread gets its own mode back.
    CHECK_FALSE(denormals_flushed());
    CHECK(a * b == denormal);
  });
}

TEST_CASE("ScopedFlushDenormals sets the mode for its lifetime and keeps a mode already set",
          "[core][denormals]") {
  on_plain_thread([] {
    {
      const ScopedFlushDenormals flush;
      CHECK(denormals_flushed());
      volatile float a = smallest_normal;
      CHECK(a / 1024 == 0.0f);
    }
    CHECK_FALSE(denormals_flushed());
    flush_denormals_on_this_thread();
    { const ScopedFlushDenormals flush; }
    CHECK(denormals_flushed()); // not undone by a scope that found it set
  });
}

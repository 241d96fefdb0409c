// The bare-CUDA baselines of bench/gpu_device.cpp, measured on the same card in
// the same run: a kernel launch waited for by an event (or by a 4-byte copy
// back to the host), and the card's device-to-device copy bandwidth.

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gpu_reference.hpp"

namespace troupe::bench {

namespace {

__global__ void add_one(float* x) {
  x[threadIdx.x] += 1.0f;
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

} // namespace

std::vector<double> bare_launch_seconds(int iterations, bool read_back) {
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  float* x = nullptr;
  float* host = nullptr;
  check(cudaMalloc(&x, sizeof(float)), "cudaMalloc");
  check(cudaMemset(x, 0, sizeof(float)), "cudaMemset");
  check(cudaHostAlloc(&host, sizeof(float), cudaHostAllocDefault), "cudaHostAlloc");
  cudaEvent_t done = nullptr;
  check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
  std::vector<double> samples;
  for (int i = 0; i < iterations + 10; ++i) {
    const auto start = Clock::now();
    add_one<<<1, 1, 0, stream>>>(x);
    check(cudaGetLastError(), "add_one<<<>>>");
    if (read_back) {
      check(cudaMemcpyAsync(host, x, sizeof(float), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    } else {
      check(cudaEventRecord(done, stream), "cudaEventRecord");
      check(cudaEventSynchronize(done), "cudaEventSynchronize");
    }
    if (i >= 10)  // warm-up first
      samples.push_back(seconds_between(start, Clock::now()));
  }
  cudaEventDestroy(done);
  cudaFreeHost(host);
  cudaFree(x);
  cudaStreamDestroy(stream);
  return samples;
}

double pipelined_launch_seconds(int count, int rounds) {
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  float* x = nullptr;
  check(cudaMalloc(&x, sizeof(float)), "cudaMalloc");
  check(cudaMemset(x, 0, sizeof(float)), "cudaMemset");
  std::vector<double> samples;
  for (int round = 0; round < rounds + 1; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < count; ++i)
      add_one<<<1, 1, 0, stream>>>(x);
    check(cudaGetLastError(), "add_one<<<>>>");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (round > 0)  // the first round warms up
      samples.push_back(seconds_between(start, Clock::now()) / count);
  }
  cudaFree(x);
  cudaStreamDestroy(stream);
  return median(samples);
}

double device_copy_bytes_per_second(std::size_t bytes, int repetitions) {
  check(cudaSetDevice(0), "cudaSetDevice");
  void* a = nullptr;
  void* b = nullptr;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMemset(a, 1, bytes), "cudaMemset");
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> seconds;
  for (int i = 0; i < repetitions + 2; ++i) {
    check(cudaEventRecord(start), "cudaEventRecord");
    check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (i >= 2)
      seconds.push_back(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) / median(seconds);  // bytes read + bytes written
}

} // namespace troupe::bench

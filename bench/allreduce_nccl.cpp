// NCCL all-reduce figures of issue 13, troupe beside raw NCCL on the same
// GPUs in the same run:
// - raw NCCL: one communicator per GPU of this machine (ncclCommInitAll), an
//   out-of-place float32 sum per GPU in one group, back to back on one stream
//   per GPU, ended by a stream synchronize;
// - troupe: MirroredStrategy over every GPU with
//   CommunicationImplementation::NCCL, ReplicaContext::all_reduce(SUM) of a
//   GPU tensor, back to back in one strategy.run, ended by reading 4 bytes of
//   the last result back (every result is checked).
// Each size: 5 warm-up collectives, then loops of at least 10 lasting about
// 0.2 s; the time per collective is the median loop's. Bandwidths are
// nccl-tests': algbw = bytes / time, busbw = algbw * 2(n-1)/n. Targets: troupe
// reaches 0.95 of NCCL's busbw from 64 MiB on, and adds at most 5 us per
// 8-byte collective. Exits 77 (skipped) without a GPU.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/actors/gpu/nccl_backend.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"

using namespace troupe;
using namespace troupe::bench;

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t latency_bytes = 8;
constexpr double target_busbw_ratio = 0.95;  // troupe / NCCL, from target_ratio_from_bytes on
constexpr std::size_t target_ratio_from_bytes = 64 * MiB;
constexpr double target_overhead_us = 5;     // troupe - NCCL per collective, at latency_bytes
constexpr int warmup_collectives = 5;
constexpr int min_collectives = 10;
constexpr double loop_seconds = 0.2;

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

void check(ncclResult_t result, const char* call) {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + ncclGetErrorString(result) + " ("
                             + ncclGetLastError(nullptr) + ")");
}

/// The time per collective of `collectives(count)`, which issues `count`
/// collectives and waits for them: after the warm-up, the median of `rounds`
/// loops of enough collectives for about loop_seconds (at least min_collectives).
struct Timing {
  double seconds = 0;
  int collectives = 0;  ///< per loop
};

template <class Collectives>
Timing time_collectives(Collectives&& collectives, int rounds) {
  collectives(warmup_collectives);
  auto start = Clock::now();
  collectives(min_collectives);
  const double estimate = seconds_between(start, Clock::now()) / min_collectives;
  const int count = std::max(min_collectives, static_cast<int>(std::ceil(loop_seconds / std::max(estimate, 1e-9))));
  std::vector<double> samples;
  for (int round = 0; round < rounds; ++round) {
    start = Clock::now();
    collectives(count);
    samples.push_back(seconds_between(start, Clock::now()) / count);
  }
  return {median(samples), count};
}

/// Raw NCCL over every GPU of this process, with buffers of the largest size.
class RawNccl {
public:
  RawNccl(int gpus, std::size_t max_bytes) : comms_(static_cast<std::size_t>(gpus)) {
    check(ncclCommInitAll(comms_.data(), gpus, nullptr), "ncclCommInitAll");
    for (int g = 0; g < gpus; ++g) {
      check(cudaSetDevice(g), "cudaSetDevice");
      cudaStream_t stream = nullptr;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      streams_.push_back(stream);
      void* send = nullptr;
      void* recv = nullptr;
      check(cudaMalloc(&send, max_bytes), "cudaMalloc");
      check(cudaMalloc(&recv, max_bytes), "cudaMalloc");
      check(cudaMemset(send, 0, max_bytes), "cudaMemset");
      send_.push_back(send);
      recv_.push_back(recv);
    }
  }

  ~RawNccl() {
    for (std::size_t g = 0; g < comms_.size(); ++g) {
      if (g < streams_.size())
        cudaStreamSynchronize(streams_[g]);
      ncclCommDestroy(comms_[g]);
    }
    for (std::size_t g = 0; g < streams_.size(); ++g) {
      cudaSetDevice(static_cast<int>(g));
      cudaFree(send_[g]);
      cudaFree(recv_[g]);
      cudaStreamDestroy(streams_[g]);
    }
  }

  RawNccl(const RawNccl&) = delete;
  RawNccl& operator=(const RawNccl&) = delete;

  /// `count` all-reduces of `bytes` on every GPU, then waits for them.
  void all_reduce(std::size_t bytes, int count) {
    for (int i = 0; i < count; ++i) {
      // One thread drives every GPU: their calls must form one group.
      check(ncclGroupStart(), "ncclGroupStart");
      for (std::size_t g = 0; g < comms_.size(); ++g)
        check(ncclAllReduce(send_[g], recv_[g], bytes / sizeof(float), ncclFloat32, ncclSum, comms_[g], streams_[g]),
              "ncclAllReduce");
      check(ncclGroupEnd(), "ncclGroupEnd");
    }
    for (auto* stream : streams_)
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }

private:
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<void*> send_;
  std::vector<void*> recv_;
};

/// "12.345", or "-" where there is no figure.
std::string figure(double value, bool present, const char* format = "%.3f") {
  if (!present)
    return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

void print_row(const char* system, int gpus, std::size_t bytes, const Timing& timing) {
  const double algbw = static_cast<double>(bytes) / timing.seconds;
  std::printf("NCCL_ROW,%s,%d,%zu,%d,%.2f,%.3f,%s\n", system, gpus, bytes, timing.collectives, timing.seconds * 1e6,
              algbw / 1e9, figure(algbw * all_reduce_busbw_factor(gpus) / 1e9, gpus > 1).c_str());
}

void run(const std::vector<std::size_t>& sizes, int rounds) {
  int gpus = 0;
  check(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  const auto properties = internal::gpu_backend().properties(0);
  std::printf("# %d x %s, %s, %s\n", gpus, properties.name.c_str(), internal::nccl_backend().version().c_str(),
              load_average().c_str());
  std::printf("# all-reduce, float32 sum, out of place; us per collective: the median of %d loop(s) of >= %d "
              "back-to-back collectives lasting about %.1f s\n",
              rounds, min_collectives, loop_seconds);
  if (gpus > 1)
    std::printf("# busbw = algbw * 2(n-1)/n (nccl-tests); ratio = troupe busbw / NCCL busbw\n");
  else
    std::printf("# one GPU: busbw is \"-\" (2(n-1)/n = 0) and the ratio compares algbw instead\n");

  RawNccl raw(gpus, *std::max_element(sizes.begin(), sizes.end()));
  Runtime rt;
  MirroredStrategy strategy(rt, {}, CommunicationOptions{.implementation = CommunicationImplementation::NCCL});
  if (strategy.num_replicas_in_sync() != gpus)
    throw std::runtime_error("MirroredStrategy has " + std::to_string(strategy.num_replicas_in_sync())
                             + " replicas, expected one per GPU (" + std::to_string(gpus) + ")");

  std::printf("# NCCL_ROW,system,gpus,bytes,collectives_per_loop,us_per_collective,algbw_GBps,busbw_GBps\n");
  std::printf("# NCCL_TARGET,bytes,troupe_over_nccl_bw,target_min,troupe_minus_nccl_us,target_max_us,verdict\n");
  for (const std::size_t bytes : sizes) {
    const Timing nccl = time_collectives([&](int count) { raw.all_reduce(bytes, count); }, rounds);

    const auto n = static_cast<int64_t>(bytes / sizeof(float));
    const PerReplica<Tensor> inputs = strategy.run([&] {
      auto& ctx = get_replica_context();
      return Tensor::zeros({n}, DType::float32, ctx.devices().front())
             + static_cast<float>(ctx.replica_id_in_sync_group() + 1);
    });
    const float expected = static_cast<float>(gpus * (gpus + 1) / 2);
    const Timing troupe = time_collectives(
      [&](int count) {
        const auto last = strategy.run([&] {
          auto& ctx = get_replica_context();
          const Tensor& input = inputs.values()[static_cast<std::size_t>(ctx.replica_id_in_sync_group())];
          Tensor sum;
          for (int i = 0; i < count; ++i)
            sum = ctx.all_reduce(ReduceOp::SUM, input);
          return sum.slice(n - 1, n).to("CPU:0");
        });
        for (const auto& value : last.values())
          if (value.item<float>() != expected)
            throw std::runtime_error("troupe's all_reduce of " + std::to_string(bytes) + " bytes gave "
                                     + std::to_string(value.item<float>()) + ", expected "
                                     + std::to_string(expected));
      },
      rounds);

    print_row("nccl", gpus, bytes, nccl);
    print_row("troupe", gpus, bytes, troupe);
    // Equal busbw factors: the busbw ratio is the algbw ratio, for one GPU too.
    const double ratio = nccl.seconds / troupe.seconds;
    const double overhead_us = (troupe.seconds - nccl.seconds) * 1e6;
    const bool ratio_target = bytes >= target_ratio_from_bytes;
    const bool overhead_target = bytes == latency_bytes;
    const char* verdict = "-";
    if (ratio_target)
      verdict = ratio >= target_busbw_ratio ? "met" : "missed";
    else if (overhead_target)
      verdict = overhead_us <= target_overhead_us ? "met" : "missed";
    std::printf("NCCL_TARGET,%zu,%.3f,%s,%.2f,%s,%s\n", bytes, ratio,
                figure(target_busbw_ratio, ratio_target, "%.2f").c_str(), overhead_us,
                figure(target_overhead_us, overhead_target, "%.0f").c_str(), verdict);
    std::fflush(stdout);
  }
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"NCCL all-reduce: troupe's MirroredStrategy beside raw NCCL on every GPU (issue 13)"};
  bool quick = false;
  std::size_t max_mib = 0;
  app.add_flag("--quick", quick, "8 B, 1 MiB and 64 MiB, one loop each (smoke test)");
  app.add_option("--max-mib", max_mib, "largest size in MiB (the 8-byte row always runs)")
    ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (internal::gpu_backend().device_count() == 0) {
    std::printf("allreduce_nccl: skipped, no GPU: %s\n", internal::gpu_backend().unavailable_reason().c_str());
    return 77;
  }
  std::vector<std::size_t> sizes{latency_bytes};
  const std::vector<std::size_t> mib = quick ? std::vector<std::size_t>{1, 64}
                                             : std::vector<std::size_t>{1, 4, 16, 64, 256, 1024};
  for (const std::size_t m : mib)
    if (max_mib == 0 || m <= max_mib)
      sizes.push_back(m * MiB);
  try {
    run(sizes, quick ? 1 : 3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allreduce_nccl: %s\n", e.what());
    return 1;
  }
  return 0;
}

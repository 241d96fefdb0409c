// GPU figures of issue 12, each beside its limit measured in the same run on
// the same card:
// - dispatch: a trivial op and a trivial strategy.run step on one GPU, waited
//   for by reading 4 bytes back, against a bare CUDA launch waited for the
//   same way (and by an event);
// - all-reduce between 2 and 4 logical GPUs of one card (MirroredStrategy,
//   GpuAllReduce), 1 MiB to 256 MiB, against the floor of reading N·S and
//   writing S at the card's device-to-device copy bandwidth (issue 12's), and
//   against reading N·S and writing N·S, the floor when every replica gets
//   its own output buffer.
// Exits 77 (skipped) without a GPU. Every all-reduce result is checked.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"
#include "gpu_all_reduce_rows.hpp"
#include "gpu_reference.hpp"

using namespace troupe;
using namespace troupe::bench;

namespace {

double median_us(const std::vector<double>& seconds) {
  return median(seconds) * 1e6;
}

void dispatch_rows(int iterations) {
  const double bare_event = median_us(bare_launch_seconds(iterations, false));
  const double bare_read = median_us(bare_launch_seconds(iterations, true));
  Runtime rt({.logical_cpu_devices = 1});
  Tensor x = Tensor::zeros({1}, DType::float32, "GPU:0");
  std::vector<double> op_samples;
  for (int i = 0; i < iterations + 10; ++i) {
    const auto start = Clock::now();
    x = x + 1.0f;
    const Tensor back = x.to("CPU:0");
    do_not_optimize(back.data<float>()[0]);
    if (i >= 10)
      op_samples.push_back(seconds_between(start, Clock::now()));
  }
  MirroredStrategy strategy(rt, {"GPU:0"});
  Tensor y = Tensor::zeros({1}, DType::float32, "GPU:0");
  std::vector<double> run_samples;
  for (int i = 0; i < iterations + 10; ++i) {
    const auto start = Clock::now();
    auto result = strategy.run([&] {
      y = y + 1.0f;
      return y.to("CPU:0");
    });
    do_not_optimize(result.values()[0].data<float>()[0]);
    if (i >= 10)
      run_samples.push_back(seconds_between(start, Clock::now()));
  }
  // Ops queued back to back, one readback at the end: the dispatch cost an op
  // adds when the host runs ahead of the GPU.
  constexpr int queued = 1000;
  std::vector<double> queued_samples;
  for (int round = 0; round < 6; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < queued; ++i)
      x = x + 1.0f;
    do_not_optimize(x.to("CPU:0").data<float>()[0]);
    if (round > 0)
      queued_samples.push_back(seconds_between(start, Clock::now()) / queued);
  }
  const double bare_queued = pipelined_launch_seconds(queued, 5) * 1e6;
  const double op_queued = median_us(queued_samples);
  const double op = median_us(op_samples);
  const double run = median_us(run_samples);
  std::printf("# DISPATCH_ROW,case,median_us,bare_launch_readback_us,overhead_us,target_overhead_us\n");
  std::printf("DISPATCH_ROW,bare_launch_event_wait,%.2f,%.2f,%.2f,-\n", bare_event, bare_read, bare_event - bare_read);
  std::printf("DISPATCH_ROW,bare_launch_readback,%.2f,%.2f,0,-\n", bare_read, bare_read);
  std::printf("DISPATCH_ROW,troupe_op_readback,%.2f,%.2f,%.2f,10\n", op, bare_read, op - bare_read);
  std::printf("DISPATCH_ROW,troupe_run_step_readback,%.2f,%.2f,%.2f,10\n", run, bare_read, run - bare_read);
  std::printf("# DISPATCH_ROW,case,median_us_per_op,bare_launch_queued_us,overhead_us,-\n");
  std::printf("DISPATCH_ROW,troupe_op_queued,%.2f,%.2f,%.2f,-\n", op_queued, bare_queued, op_queued - bare_queued);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"GPU dispatch overhead and all-reduce between logical GPUs (issue 12)"};
  bool quick = false;
  std::vector<std::size_t> sizes{std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20,
                                 std::size_t{64} << 20, std::size_t{256} << 20};
  app.add_flag("--quick", quick, "few iterations and sizes (smoke test)");
  add_float32_sizes_option(app, sizes);
  CLI11_PARSE(app, argc, argv);
  if (internal::gpu_backend().device_count() == 0) {
    std::printf("gpu_device: skipped, no GPU: %s\n", internal::gpu_backend().unavailable_reason().c_str());
    return 77;
  }
  const auto properties = internal::gpu_backend().properties(0);
  std::printf("# %s, %s\n", properties.name.c_str(), load_average().c_str());
  dispatch_rows(quick ? 50 : 2000);
  const double copy_bps = device_copy_bytes_per_second(std::size_t{1} << 30, quick ? 3 : 10);
  std::printf("COPY_BW,device_to_device,GBps=%.1f (bytes read + written per second, 1 GiB cudaMemcpy)\n",
              copy_bps / 1e9);
  if (quick)
    sizes = {std::size_t{1} << 20};
  print_gpu_all_reduce_rows(sizes, quick ? 3 : 20, copy_bps);
  return 0;
}

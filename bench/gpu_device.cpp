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

#include <troupe/core/gpu_backend.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"
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

void all_reduce_rows(const std::vector<std::size_t>& sizes, int replicas, int repetitions, double copy_bps) {
  Runtime rt({.logical_cpu_devices = 1, .logical_gpu_devices_per_gpu = replicas});
  std::vector<std::string> devices;
  for (int r = 0; r < replicas; ++r)
    devices.push_back("GPU:" + std::to_string(r));
  MirroredStrategy strategy(rt, devices);
  for (const std::size_t bytes : sizes) {
    const auto n = static_cast<int64_t>(bytes / sizeof(float));
    std::vector<Tensor> inputs;
    for (int r = 0; r < replicas; ++r)
      inputs.push_back(Tensor::full({n}, r + 1.0, DType::float32).to(devices[static_cast<std::size_t>(r)]));
    // The all-reduce returns while the GPUs still work: time `repetitions`
    // of them in one run, ended by reading one element of the last result back.
    auto reduce_many = [&](int count) {
      return strategy.run([&] {
        auto& ctx = get_replica_context();
        const auto r = static_cast<std::size_t>(ctx.replica_id_in_sync_group());
        Tensor sum;
        for (int i = 0; i < count; ++i)
          sum = ctx.all_reduce(ReduceOp::SUM, inputs[r]);
        return sum.slice(n - 1, n).to("CPU:0");
      });
    };
    const double expected = replicas * (replicas + 1) / 2.0;
    auto check = [&](const PerReplica<Tensor>& last) {
      for (const auto& value : last.values())
        if (value.item<float>() != expected) {
          std::fprintf(stderr, "gpu_device: all_reduce of %d replicas, %zu bytes gave %g, expected %g\n", replicas,
                       bytes, static_cast<double>(value.item<float>()), expected);
          std::exit(1);
        }
    };
    check(reduce_many(2));  // warm-up
    std::vector<double> samples;
    for (int round = 0; round < 3; ++round) {
      const auto start = Clock::now();
      check(reduce_many(repetitions));
      samples.push_back(seconds_between(start, Clock::now()) / repetitions);
    }
    // The floor: read every replica's S bytes and write S once, at the card's copy bandwidth.
    const double floor_s = static_cast<double>((replicas + 1) * bytes) / copy_bps;
    Row row{.system = "troupe",
            .transport = "gpu_logical",
            .ranks = replicas,
            .bytes = bytes,
            .median_s = median(samples),
            .busbw_factor = all_reduce_busbw_factor(replicas),
            .limit_bytes_per_second = static_cast<double>(bytes) / floor_s};
    std::printf("%s\n", format_row(row).c_str());
    // Each replica's output is its own buffer, so N·S bytes must be written,
    // not S: the floor of any all-reduce that gives every replica its own copy.
    const double separate_floor_s = static_cast<double>(2 * replicas * bytes) / copy_bps;
    std::printf("SEPARATE_OUTPUTS_FLOOR,%d,%zu,floor_us=%.1f,ratio=%.3f\n", replicas, bytes, separate_floor_s * 1e6,
                separate_floor_s / median(samples));
  }
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
  std::printf("%s\n", row_columns().c_str());
  for (int replicas : {2, 4})
    all_reduce_rows(sizes, replicas, quick ? 3 : 20, copy_bps);
  return 0;
}

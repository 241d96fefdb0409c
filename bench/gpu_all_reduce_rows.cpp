#include "gpu_all_reduce_rows.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <troupe/troupe.hpp>

namespace troupe::bench {

namespace {

void rows_for(const std::vector<std::size_t>& sizes, int replicas, int repetitions, double copy_bps) {
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
          std::fprintf(stderr, "all_reduce of %d replicas, %zu bytes gave %g, expected %g\n", replicas,
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

void print_gpu_all_reduce_rows(const std::vector<std::size_t>& sizes, int repetitions, double copy_bps) {
  std::printf("%s\n", row_columns().c_str());
  for (int replicas : {2, 4})
    rows_for(sizes, replicas, repetitions, copy_bps);
}

} // namespace troupe::bench

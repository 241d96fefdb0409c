// What the NCCL route costs the host per collective (issue 13's 8-byte
// target), measured without a GPU: MirroredStrategy with
// CommunicationImplementation::NCCL over emulated GPUs and an emulated NCCL
// (tests/support: host memory, where an 8-byte all-reduce costs next to
// nothing), beside the same loop on as many logical CPU devices (troupe's
// collective round trip without device actors: the floor of this design),
// and beside the emulated NCCL called directly (one rank), in the same run.
//
//   nccl_dispatch [--quick] [--replicas 1,2,4] [--collectives 2000] [--repeats 7]
//
// Each figure: every replica issues --collectives all_reduce(SUM)s of two
// float32 values back to back in one strategy.run, timing its own loop; the
// figure is the median over --repeats rounds (after one warm-up round) of
// the slowest replica's time per collective. Every result is read back after
// the timed loop and checked (a wrong sum exits with status 1).
//
// On a real GPU, NCCL's own launch comes on top of the NCCL route's figure:
// with nonblocking communicators, NCCL 2.28 starts a thread per group
// (group.cc, ncclGroupEndInternal) and the device actor polls until the group
// is on the stream. bench/allreduce_nccl measures that beside raw NCCL.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"

using namespace troupe;
using namespace troupe::bench;

namespace {

constexpr std::size_t value_bytes = 8;  // two float32 values
constexpr double target_overhead_us = 5;

struct Options {
  bool quick = false;
  std::vector<int> replicas{1, 2, 4};
  int collectives = 2000;
  int repeats = 7;
};

Options parse(int argc, char** argv) {
  Options opts;
  CLI::App app("The host's cost per 8-byte all_reduce on the NCCL route (emulated GPUs and NCCL) beside troupe's "
               "CPU route and the emulated NCCL alone, same run.",
               "nccl_dispatch");
  app.add_flag("--quick", opts.quick, "a smoke test: 200 collectives, 2 rounds (seconds, not a measurement)");
  app.add_option("--replicas", opts.replicas, "replica counts, one emulated GPU each (default 1,2,4)")
    ->delimiter(',')
    ->check(CLI::Range(1, 16));
  app.add_option("--collectives", opts.collectives, "collectives per replica per round (default 2000)")
    ->check(CLI::Range(1, 10000000));
  app.add_option("--repeats", opts.repeats, "timed rounds per figure (default 7)")->check(CLI::Range(1, 1000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (opts.quick) {
    if (app.count("--collectives") == 0)
      opts.collectives = 200;
    if (app.count("--repeats") == 0)
      opts.repeats = 2;
  }
  return opts;
}

/// Seconds per collective of the slowest replica in each round, after a
/// warm-up round. Replica r's value lives on `prefix` + r ("GPU:1", "CPU:1").
std::vector<double> time_rounds(Strategy& strategy, const Options& opts, const std::string& prefix) {
  const int n = strategy.num_replicas_in_sync();
  const float expected = static_cast<float>(n * (n + 1) / 2);
  std::vector<double> rounds;
  for (int round = 0; round <= opts.repeats; ++round) {
    std::vector<double> seconds(static_cast<std::size_t>(n), 0);
    std::vector<std::string> wrong(static_cast<std::size_t>(n));
    strategy.run([&] {
      auto& ctx = get_replica_context();
      const int r = ctx.replica_id_in_sync_group();
      const Tensor x = Tensor::full({2}, r + 1.0, DType::float32).to(prefix + std::to_string(r));
      std::vector<Tensor> sums(static_cast<std::size_t>(opts.collectives));
      const auto start = Clock::now();
      for (auto& sum : sums)
        sum = ctx.all_reduce(ReduceOp::SUM, x);
      seconds[static_cast<std::size_t>(r)] = seconds_between(start, Clock::now());
      for (const auto& sum : sums) {
        const auto values = sum.to("CPU:0").to_vector<float>();
        if (values != std::vector<float>(2, expected))
          wrong[static_cast<std::size_t>(r)] = "replica " + std::to_string(r) + "'s all_reduce gave "
                                               + std::to_string(values.at(0)) + ", expected "
                                               + std::to_string(expected);
      }
    });
    for (const auto& w : wrong)
      if (!w.empty())
        throw std::runtime_error(w);
    if (round > 0)
      rounds.push_back(*std::max_element(seconds.begin(), seconds.end()) / opts.collectives);
  }
  return rounds;
}

/// Seconds per 8-byte all-reduce of the emulated NCCL called directly, one
/// rank: enqueue, then its state until the group is on the stream.
double time_raw_emulated(const Options& opts) {
  testing::EmulatedGpus gpus(1);
  testing::EmulatedNccl emulated;
  auto& gpu = internal::gpu_backend();
  auto& nccl = internal::nccl_backend();
  const auto stream = gpu.create_stream(0);
  void* send = gpu.allocate_device(0, value_bytes);
  void* recv = gpu.allocate_device(0, value_bytes);
  const auto comm = nccl.init_rank(0, nccl.unique_id(), 1, 0);
  std::string error;
  auto until_ready = [&] {
    for (;;) {
      const auto state = nccl.state(comm, error);
      if (state == internal::NcclState::ready)
        return;
      if (state == internal::NcclState::failed)
        throw std::runtime_error("the emulated NCCL failed: " + error);
    }
  };
  until_ready();
  internal::NcclCall call;
  call.kind = internal::NcclCall::Kind::all_reduce;
  call.dtype = DType::float32;
  call.count = value_bytes / sizeof(float);
  call.send = send;
  call.recv = recv;
  std::vector<double> rounds;
  for (int round = 0; round <= opts.repeats; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < opts.collectives; ++i) {
      if (nccl.enqueue(0, comm, stream, {call}, error) == internal::NcclState::failed)
        throw std::runtime_error("the emulated NCCL failed: " + error);
      until_ready();
    }
    if (round > 0)
      rounds.push_back(seconds_between(start, Clock::now()) / opts.collectives);
  }
  nccl.abort(comm);
  gpu.free_device(0, send);
  gpu.free_device(0, recv);
  gpu.destroy_stream(0, stream);
  return median(rounds);
}

} // namespace

int main(int argc, char** argv) {
  const Options opts = parse(argc, argv);
  try {
    std::printf("# nccl_dispatch: %d collectives x %d rounds per figure; %s; %s\n", opts.collectives, opts.repeats,
                cpu_model().c_str(), load_average().c_str());
    const double raw_us = time_raw_emulated(opts) * 1e6;
    std::printf("# emulated NCCL alone (1 rank, enqueue + state until ready): %.2f us per collective\n", raw_us);
    std::printf("%s\n", row_columns().c_str());
    bool met = true;
    for (const int n : opts.replicas) {
      double cpu_s = 0;
      {
        Runtime rt({.logical_cpu_devices = n});
        std::vector<std::string> devices;
        for (int r = 0; r < n; ++r)
          devices.push_back("CPU:" + std::to_string(r));
        MirroredStrategy strategy(rt, devices);
        cpu_s = median(time_rounds(strategy, opts, "CPU:"));
      }
      double nccl_s = 0;
      {
        testing::EmulatedGpus gpus(n);
        testing::EmulatedNccl emulated;
        Runtime rt({.logical_cpu_devices = 1});
        CommunicationOptions options;
        options.implementation = CommunicationImplementation::NCCL;
        MirroredStrategy strategy(rt, {}, options);
        nccl_s = median(time_rounds(strategy, opts, "GPU:"));
      }
      const double factor = all_reduce_busbw_factor(n);
      const double limit = value_bytes / cpu_s;  // the CPU route's pace, as an algbw
      std::printf("%s\n", format_row({"troupe-cpu-route", "local", n, value_bytes, cpu_s, factor, limit}).c_str());
      std::printf("%s\n",
                  format_row({"troupe-nccl-route", "emulated-nccl", n, value_bytes, nccl_s, factor, limit}).c_str());
      const double added_us = nccl_s * 1e6 - raw_us;
      const bool ok = added_us <= target_overhead_us;
      met = met && ok;
      std::printf("# %d replica(s): NCCL route %.2f us per collective, CPU route %.2f us; the route adds %.2f us "
                  "over the emulated NCCL: %s (target <= %.0f us)\n",
                  n, nccl_s * 1e6, cpu_s * 1e6, added_us, ok ? "met" : "MISSED", target_overhead_us);
    }
    std::printf("# TARGET per-collective overhead <= %.0f us: %s\n", target_overhead_us, met ? "met" : "MISSED");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nccl_dispatch: %s\n", e.what());
    return 1;
  }
  return 0;
}

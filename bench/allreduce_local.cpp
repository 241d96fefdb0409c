// Benchmark of the local (shared-memory) all-reduce of MirroredStrategy's
// replicas on logical CPU devices, against the memory-bandwidth floor measured
// in the same run, plus the overhead of strategy.run itself. In a CUDA build
// on a machine with a GPU, also the all-reduce between 2 and 4 logical GPUs
// of the first card (bench/gpu_all_reduce_rows.hpp), 1 MiB to 256 MiB,
// beside that card's copy bandwidth.
//
//   allreduce_local [--quick] [--ranks 2,4,8] [--sizes 4K,64K,1M,16M,64M]
//                   [--overhead-replicas 1,2,8] [--no-overhead]
//
// Every iteration is verified (outside the timed region): every replica's result
// must equal the exact float32 sum of the inputs in every element; a mismatch
// prints what differs and exits with status 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"
#if TROUPE_BENCH_GPU
#include <troupe/actors/gpu/gpu_backend.hpp>

#include "gpu_all_reduce_rows.hpp"
#include "gpu_reference.hpp"
#endif

namespace {

using troupe::Tensor;
using troupe::bench::Clock;
using troupe::bench::seconds_between;

// -- options ---------------------------------------------------------------------

struct Options {
  bool quick = false;
  bool overhead = true;
  std::vector<int> ranks{2, 4, 8};
  std::vector<std::size_t> sizes{std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{1} << 20,
                                 std::size_t{16} << 20, std::size_t{64} << 20};
  std::vector<int> overhead_replicas{1, 2, 8};
};

Options parse(int argc, char** argv) {
  Options opts;
  CLI::App app("All-reduce of MirroredStrategy's replicas on logical CPU devices against the "
               "memory-bandwidth floor, and the overhead of strategy.run.",
               "allreduce_local");
  app.add_flag("--quick", opts.quick,
               "a smoke test: fewer sizes and iterations (seconds, not a measurement)");
  app.add_flag_callback(
    "--no-overhead", [&] { opts.overhead = false; }, "skip the strategy.run overhead cases");
  app.add_option("--ranks", opts.ranks, "replica counts (default 2,4,8; 2,4 with --quick)")
    ->delimiter(',')
    ->check(CLI::Range(1, 64));
  app
    .add_option("--overhead-replicas", opts.overhead_replicas,
                "replica counts of the overhead cases (default 1,2,8)")
    ->delimiter(',')
    ->check(CLI::Range(1, 64));
  troupe::bench::add_float32_sizes_option(app, opts.sizes);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e)); // prints the help or the error
  }
  if (opts.quick) {
    if (app.count("--sizes") == 0)
      opts.sizes = {std::size_t{4} << 10, std::size_t{1} << 20};
    if (app.count("--ranks") == 0)
      opts.ranks = {2, 4};
  }
  return opts;
}

// -- inputs and verification --------------------------------------------------------

// Replica r's element i is ((7i + 13r) mod 17) - 8: small integers that differ
// per replica and per element, so that any sum of up to 64 of them is exact in
// float32. The pattern repeats every 17 elements.
constexpr int period = 17;

float input_value(int replica, int64_t i) {
  return static_cast<float>((7 * (i % period) + 13 * replica) % period - 8);
}

struct VerificationError {
  std::string message;
};

// Checks that `result` holds the sum over `ranks` replicas in every element.
void verify(const Tensor& result, int replica, int ranks, int64_t count, const std::vector<float>& expected) {
  auto where = [&] {
    return "replica " + std::to_string(replica) + " of " + std::to_string(ranks) + ", " +
           std::to_string(count) + " float32 elements: ";
  };
  if (!result.valid())
    throw VerificationError{where() + "the result is an empty tensor"};
  if (result.dtype() != troupe::DType::float32 || result.num_elements() != count)
    throw VerificationError{where() + "the result has dtype " + std::string(troupe::name(result.dtype())) +
                            " and " + std::to_string(result.num_elements()) + " elements"};
  const float* out = result.data<float>();
  int64_t bad = 0;
  int64_t first_bad = -1;
  for (int64_t i = 0, j = 0; i < count; ++i) {
    if (out[i] != expected[static_cast<std::size_t>(j)]) {
      if (first_bad < 0)
        first_bad = i;
      ++bad;
    }
    if (++j == period)
      j = 0;
  }
  if (bad > 0) {
    const auto e = expected[static_cast<std::size_t>(first_bad % period)];
    throw VerificationError{where() + std::to_string(bad) + " wrong elements; the first is element " +
                            std::to_string(first_bad) + " = " + std::to_string(out[first_bad]) +
                            ", expected " + std::to_string(e)};
  }
}

// Verifies every replica's result (a buffer shared by several replicas is read
// once), then overwrites the result with NaN when this is its last handle, so
// that a later iteration that reuses the buffer without writing it fails.
// Returns whether the result could be poisoned.
bool verify_and_poison(troupe::PerReplica<Tensor>&& results, int ranks, int64_t count,
                       const std::vector<float>& expected) {
  std::vector<Tensor> values = results.values();
  results = {};
  if (static_cast<int>(values.size()) != ranks)
    throw VerificationError{"strategy.run returned " + std::to_string(values.size()) + " values for " +
                            std::to_string(ranks) + " replicas"};
  for (std::size_t r = 0; r < values.size(); ++r) {
    bool seen = false;
    for (std::size_t q = 0; q < r && !seen; ++q)
      seen = values[r].shares_buffer_with(values[q]) && values[r].raw_data() == values[q].raw_data();
    if (!seen)
      verify(values[r], static_cast<int>(r), ranks, count, expected);
  }
  // Keep one handle per distinct buffer and poison those that nobody else holds.
  bool poisoned = true;
  for (std::size_t r = 0; r < values.size(); ++r) {
    Tensor t = std::move(values[r]);
    values[r] = Tensor{};
    if (!t.valid())
      continue;
    bool shared_later = false;
    for (std::size_t q = r + 1; q < values.size(); ++q)
      shared_later = shared_later || t.shares_buffer_with(values[q]);
    if (shared_later)
      continue; // a later handle of the same buffer does it
    if (t.use_count() != 1) {
      poisoned = false;
      continue;
    }
    float* p = t.mutable_data<float>();
    std::fill(p, p + count, std::numeric_limits<float>::quiet_NaN());
  }
  return poisoned;
}

// -- the all-reduce cases --------------------------------------------------------------

struct CaseBudget {
  int warmup;
  int min_iters;
  int max_iters;
  double seconds; // of timed runs, after min_iters
};

CaseBudget budget_for(std::size_t bytes, bool quick) {
  if (quick)
    return {1, 3, 20, 0.02};
  if (bytes <= (std::size_t{64} << 10))
    return {20, 50, 3000, 0.4};
  if (bytes <= (std::size_t{1} << 20))
    return {5, 20, 1000, 0.6};
  return {2, 5, 200, 0.8};
}

struct CaseResult {
  int ranks;
  std::size_t bytes;
  troupe::bench::Summary seconds;
  double copy_bw; ///< median of the copy-bandwidth probes taken next to this case's runs
  double kernel_s; ///< median of the plain reduce kernel over the same inputs, one thread
};

// The plain in-process reduce: troupe's own kernel summing the replicas'
// inputs into one output on this thread, no actors, no split: what a 1 MiB
// all-reduce's fixed cost is compared to. `before_each` runs untimed before
// every iteration: the copy probe, so that the kernel starts from the same
// cache state as the all-reduce runs it is compared to (each follows a probe
// that evicts the inputs); without it the kernel reads them from cache.
double plain_kernel_seconds(const std::vector<Tensor>& inputs, int64_t count, int iters,
                            const std::function<void()>& before_each = {}) {
  std::vector<const std::byte*> pointers;
  for (const auto& t : inputs)
    pointers.push_back(reinterpret_cast<const std::byte*>(t.data<float>()));
  std::vector<float> out(static_cast<std::size_t>(count));
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    if (before_each)
      before_each();
    const auto t0 = Clock::now();
    troupe::internal::reduce_elements(troupe::DType::float32, troupe::ReduceOp::SUM, pointers.data(),
                                      static_cast<int>(pointers.size()), reinterpret_cast<std::byte*>(out.data()), 0,
                                      count, false);
    times.push_back(seconds_between(t0, Clock::now()));
  }
  return troupe::bench::median(times);
}

// Cases of at least this size are what the target judges: each of their timed
// runs is followed by a copy probe. Smaller cases are probed before and after.
constexpr std::size_t probe_every_run_bytes = std::size_t{1} << 20;

std::vector<std::string> device_names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back("CPU:" + std::to_string(i));
  return out;
}

void print_header() {
  std::cout << troupe::bench::row_columns() << "\n"
            << "#   system=troupe transport=local: MirroredStrategy replicas on logical CPU devices of one "
               "process,\n"
            << "#   each all-reducing (SUM) its own float32 tensor of `bytes` inside strategy.run;\n"
            << "#   median_us = median wall time of strategy.run (= the max over ranks); algbw = bytes / "
               "median;\n"
            << "#   busbw = algbw * 2(ranks-1)/ranks (nccl-tests); limit_GBps = the DRAM floor as an algbw:\n"
            << "#   reading ranks*bytes and writing bytes at the copy bandwidth takes (ranks+1)*bytes/copy_bw,\n"
            << "#   so limit = copy_bw/(ranks+1); ratio = algbw/limit = floor time/median (1.0 = at the floor;\n"
            << "#   below ~8 MiB the inputs stay in the last-level cache, so the ratio may exceed 1, and tiny\n"
            << "#   sizes are bound by messaging, not memory).\n";
}

// Runs every case, taking the DRAM copy bandwidth right next to its runs
// (the bandwidth of a shared machine drifts by 2x within minutes).
void run_all_reduce_cases(const Options& opts, troupe::bench::CopyProbe& probe,
                          std::vector<CaseResult>& results) {
  std::cout << "# cases:\n";
  for (int ranks : opts.ranks) {
    troupe::Runtime rt({.logical_cpu_devices = ranks});
    troupe::MirroredStrategy strategy(rt, device_names(ranks));
    auto fn = [](const Tensor& x) {
      return troupe::get_replica_context().all_reduce(troupe::ReduceOp::SUM, x);
    };
    for (std::size_t bytes : opts.sizes) {
      const auto count = static_cast<int64_t>(bytes / sizeof(float));
      std::vector<float> expected(period, 0.0f);
      for (int j = 0; j < period; ++j)
        for (int r = 0; r < ranks; ++r)
          expected[static_cast<std::size_t>(j)] += input_value(r, j);
      auto inputs = strategy.experimental_distribute_values_from_function(
        [&](const troupe::ValueContext& ctx) {
          const int r = ctx.replica_id_in_sync_group;
          auto t = Tensor::empty(troupe::Shape{count}, troupe::DType::float32,
                                 rt.resolve_device("CPU:" + std::to_string(r)));
          float* p = t.mutable_data<float>();
          for (int64_t i = 0, j = 0; i < count; ++i) {
            p[i] = input_value(r, j);
            if (++j == period)
              j = 0;
          }
          return t;
        });
      const auto budget = budget_for(bytes, opts.quick);
      for (int w = 0; w < budget.warmup; ++w)
        verify_and_poison(strategy.run(fn, inputs), ranks, count, expected);
      const bool probe_each_run = bytes >= probe_every_run_bytes;
      std::vector<double> times;
      std::vector<double> bandwidths;
      if (!probe_each_run)
        for (int p = 0; p < 3; ++p)
          bandwidths.push_back(probe.once());
      double timed = 0;
      int unpoisoned = 0;
      while (static_cast<int>(times.size()) < budget.max_iters &&
             (static_cast<int>(times.size()) < budget.min_iters || timed < budget.seconds)) {
        // Probe before the run: right after one, the scheduler's idle threads
        // still poll for work and would slow the probe (flattering the ratio).
        if (probe_each_run)
          bandwidths.push_back(probe.once());
        const auto t0 = Clock::now();
        auto out = strategy.run(fn, inputs);
        const auto t1 = Clock::now();
        const double s = seconds_between(t0, t1);
        times.push_back(s);
        timed += s;
        if (!verify_and_poison(std::move(out), ranks, count, expected))
          ++unpoisoned;
      }
      if (!probe_each_run)
        for (int p = 0; p < 3; ++p)
          bandwidths.push_back(probe.once());
      const auto summary = troupe::bench::summarize(times);
      // The same runs back to back, inputs in cache, beside the kernel from cache.
      std::vector<double> hot_times;
      if (probe_each_run)
        for (int i = 0; i < (opts.quick ? 10 : 200); ++i) {
          const auto t0 = Clock::now();
          auto out = strategy.run(fn, inputs);
          hot_times.push_back(seconds_between(t0, Clock::now()));
          (void)verify_and_poison(std::move(out), ranks, count, expected);
        }
      const double hot_s = hot_times.empty() ? summary.median : troupe::bench::median(hot_times);
      // Like for like: where each run follows a probe, so does each kernel run.
      const auto local_inputs = strategy.experimental_local_results(inputs);
      const int kernel_iters = opts.quick ? 10 : 200;
      const double hot_kernel_s = plain_kernel_seconds(local_inputs, count, kernel_iters);
      const double kernel_s =
        probe_each_run ? plain_kernel_seconds(local_inputs, count, kernel_iters, [&] { (void)probe.once(); })
                       : hot_kernel_s;
      char detail[400];
      std::snprintf(detail, sizeof detail,
                    "#   ranks=%d %s: iters=%zu median_us=%.1f min_us=%.1f p10_us=%.1f p90_us=%.1f "
                    "max_us=%.1f copy_GBps=%.2f (%zu probes, %.2f..%.2f), plain kernel %.1f us (x%.1f); "
                    "from cache: median_us=%.1f, plain kernel %.1f us (x%.1f); all verified%s",
                    ranks, troupe::bench::human_bytes(bytes).c_str(), summary.count, summary.median * 1e6,
                    summary.min * 1e6, summary.p10 * 1e6, summary.p90 * 1e6, summary.max * 1e6,
                    troupe::bench::median(bandwidths) / 1e9, bandwidths.size(),
                    *std::min_element(bandwidths.begin(), bandwidths.end()) / 1e9,
                    *std::max_element(bandwidths.begin(), bandwidths.end()) / 1e9, kernel_s * 1e6,
                    kernel_s > 0 ? summary.median / kernel_s : 0.0, hot_s * 1e6, hot_kernel_s * 1e6,
                    hot_kernel_s > 0 ? hot_s / hot_kernel_s : 0.0, unpoisoned > 0 ? " (some results still shared after run: not poisoned)" : "");
      std::cout << detail << std::endl;
      results.push_back({ranks, bytes, summary, troupe::bench::median(bandwidths), kernel_s});
    }
  }
}

// -- strategy.run overhead ------------------------------------------------------------

void run_overhead(const Options& opts) {
  const int max_replicas = *std::max_element(opts.overhead_replicas.begin(), opts.overhead_replicas.end());
  troupe::Runtime rt({.logical_cpu_devices = max_replicas});
  std::cout << "# RUN_OVERHEAD: strategy.run of a function that returns its (PerReplica scalar) input,\n"
            << "#   no collective; wall time per call over many calls.\n";
  for (int replicas : opts.overhead_replicas) {
    troupe::MirroredStrategy strategy(rt, device_names(replicas));
    auto inputs = strategy.experimental_distribute_values_from_function(
      [](const troupe::ValueContext& ctx) { return Tensor(static_cast<float>(ctx.replica_id_in_sync_group)); });
    auto fn = [](const Tensor& x) { return x; };
    const int warmup = opts.quick ? 20 : 500;
    const int min_iters = opts.quick ? 100 : 2000;
    const int max_iters = opts.quick ? 1000 : 50000;
    const double seconds = opts.quick ? 0.05 : 1.0;
    for (int w = 0; w < warmup; ++w)
      troupe::bench::do_not_optimize(strategy.run(fn, inputs));
    std::vector<double> times;
    double timed = 0;
    while (static_cast<int>(times.size()) < max_iters &&
           (static_cast<int>(times.size()) < min_iters || timed < seconds)) {
      const auto t0 = Clock::now();
      auto out = strategy.run(fn, inputs);
      const auto t1 = Clock::now();
      const double s = seconds_between(t0, t1);
      times.push_back(s);
      timed += s;
      // Verify: every replica got its own input back.
      if (static_cast<int>(out.size()) != replicas)
        throw VerificationError{"run overhead: strategy.run returned " + std::to_string(out.size()) +
                                " values for " + std::to_string(replicas) + " replicas"};
      for (int r = 0; r < replicas; ++r)
        if (!out.values()[static_cast<std::size_t>(r)].shares_buffer_with(inputs.values()[static_cast<std::size_t>(r)]))
          throw VerificationError{"run overhead: replica " + std::to_string(r) +
                                  " did not return its own input tensor"};
    }
    const auto s = troupe::bench::summarize(times);
    char line[256];
    std::snprintf(line, sizeof line,
                  "RUN_OVERHEAD,replicas=%d,median_us=%.2f,p90_us=%.2f,target_us=20,iters=%zu,min_us=%.2f,"
                  "max_us=%.1f",
                  replicas, s.median * 1e6, s.p90 * 1e6, s.count, s.min * 1e6, s.max * 1e6);
    std::cout << line << std::endl;
  }
}

} // namespace

int main(int argc, char** argv) {
  try {
    const auto opts = parse(argc, argv);
    const auto wall0 = Clock::now();
    std::cout << "# allreduce_local" << (opts.quick ? " --quick (smoke test: not a measurement)" : "")
              << ", hardware threads: " << std::thread::hardware_concurrency() << "\n";
    // The limit: the DRAM copy bandwidth (bytes read + written per second of a
    // 64 MiB memcpy on every hardware thread), probed next to each case's runs.
    std::cout << "# copy bandwidth: memcpy of a prefaulted 64 MiB buffer into another on every hardware\n"
              << "#   thread, each thread its slice, GBps = (bytes read + bytes written) / time; probed before\n"
              << "#   every timed run for cases >= 1 MiB, 3 times before and after smaller cases; each row's\n"
              << "#   limit uses the median of its own probes\n";
    troupe::bench::CopyProbe probe(opts.quick ? std::size_t{16} << 20 : std::size_t{64} << 20);
    std::vector<CaseResult> results;
    run_all_reduce_cases(opts, probe, results);

    print_header();
    for (const auto& c : results) {
      troupe::bench::Row row{"troupe", "local", c.ranks, c.bytes, c.seconds.median,
                             troupe::bench::all_reduce_busbw_factor(c.ranks), c.copy_bw / (c.ranks + 1)};
      std::cout << troupe::bench::format_row(row) << "\n";
    }

    // The target: ratio >= 0.8 for S >= 1 MiB at N = 4 (not judged in a smoke test).
    bool any = false;
    double worst = std::numeric_limits<double>::infinity();
    for (const auto& c : results) {
      if (c.ranks == 4 && c.bytes >= (std::size_t{1} << 20)) {
        any = true;
        const double limit = c.copy_bw / (c.ranks + 1);
        worst = std::min(worst, static_cast<double>(c.bytes) / c.seconds.median / limit);
      }
    }
    if (any && !opts.quick)
      std::printf("TARGET,ranks=4,bytes>=1MiB,ratio>=0.8,worst_ratio=%.3f,%s\n", worst,
                  worst >= 0.8 ? "met" : "missed");
    // Issue 29's: a 1 MiB all-reduce within 2x the plain reduce kernel, 2 and 4 replicas.
    for (const auto& c : results)
      if (c.bytes == (std::size_t{1} << 20) && (c.ranks == 2 || c.ranks == 4) && c.kernel_s > 0 && !opts.quick)
        std::printf("TARGET,ranks=%d,bytes=1MiB,median/plain_kernel<=2,ratio=%.2f (%.1f us / %.1f us),%s\n",
                    c.ranks, c.seconds.median / c.kernel_s, c.seconds.median * 1e6, c.kernel_s * 1e6,
                    c.seconds.median <= 2 * c.kernel_s ? "met" : "missed");
    std::cout.flush();

#if TROUPE_BENCH_GPU
    // Issue 12's GPU rows: the same all-reduce between logical GPUs of the
    // first card, beside that card's copy bandwidth measured here.
    if (troupe::internal::gpu_backend().device_count() > 0) {
      const double copy_bps = troupe::bench::device_copy_bytes_per_second(std::size_t{1} << 30, opts.quick ? 3 : 10);
      std::printf("# GPU rows (GPU 0, logical GPUs): limit = reading N*S and writing S at the card's "
                  "device-to-device copy bandwidth, %.1f GB/s (1 GiB cudaMemcpy, read + written)\n",
                  copy_bps / 1e9);
      std::vector<std::size_t> gpu_sizes{std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20,
                                         std::size_t{64} << 20, std::size_t{256} << 20};
      if (opts.quick)
        gpu_sizes = {std::size_t{1} << 20};
      troupe::bench::print_gpu_all_reduce_rows(gpu_sizes, opts.quick ? 3 : 20, copy_bps);
    }
#endif
    if (opts.overhead)
      run_overhead(opts);
    std::printf("# total %.1f s\n", seconds_between(wall0, Clock::now()));
    return 0;
  } catch (const VerificationError& e) {
    std::cout.flush();
    std::cerr << "allreduce_local: VERIFICATION FAILED: " << e.message << "\n";
    return 1;
  } catch (const troupe::Error& e) {
    std::cout.flush();
    std::cerr << "allreduce_local: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "allreduce_local: " << e.what() << "\n";
    return 2;
  }
}

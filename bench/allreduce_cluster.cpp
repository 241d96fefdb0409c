// Benchmark of MultiWorkerMirroredStrategy's cross-process all-reduce over
// troupe's TCP broker on loopback and over UCX shared memory, against raw TCP
// between the same processes measured in the same run.
//
//   allreduce_cluster [--quick] [--ranks 2,4] [--transports tcp,ucx] [--sizes 4K,64K,1M,16M,64M] [--tls]
//                     [--launcher PATH]
//
// Every ranks value runs once per transport (TROUPE_TRANSPORT), and with
// --tls once more over TCP with TROUPE_TLS=1 (troupe-launch --tls); the driver
// ends with UCX's and TLS's figures beside TCP's, size by size.
//
// Started without TF_CONFIG it is the driver: for each ranks value it runs
// `troupe-launch --workers R -- allreduce_cluster --worker ...` and passes on
// rank 0's lines. Started by the launcher (TF_CONFIG set) it is one worker:
//   1. rank 0 and rank 1 probe raw loopback TCP (stream bandwidth, the limit;
//      4 KiB round trip, the latency reference), the other ranks wait;
//   2. every rank all-reduces (SUM) float32 tensors of each size inside
//      strategy.run, timing each iteration; every result is verified exactly;
//   3. the probe again (the VM's bandwidth drifts; the limit is the mean of both);
//   4. rank 0 gathers every rank's timings and prints the rows.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <troupe/core/config.hpp>
#include <troupe/core/hop_trace.hpp>
#include <troupe/net/link/frame_header.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"
#include "loopback_probe.hpp"

#ifndef TROUPE_LAUNCH_PROGRAM
#define TROUPE_LAUNCH_PROGRAM "troupe-launch"
#endif


namespace {

using troupe::Tensor;
using troupe::bench::Clock;
using troupe::bench::seconds_between;

// -- options ---------------------------------------------------------------------

struct Options {
  bool quick = false;
  bool worker = false;
  bool tls = false; ///< also run every ranks value under TLS and compare
  std::vector<std::string> transports{"tcp", "ucx"}; ///< TROUPE_TRANSPORT of each run
  std::size_t hops_bytes = std::size_t{4} << 10; ///< the all-reduce the hop table follows
  std::vector<int> ranks{2, 4};
  std::vector<std::size_t> sizes{std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{1} << 20,
                                 std::size_t{16} << 20, std::size_t{64} << 20};
  std::string launcher = TROUPE_LAUNCH_PROGRAM;
};

constexpr int timeout_seconds = 600; // of each whole cluster run

Options parse(int argc, char** argv) {
  Options opts;
  CLI::App app("MultiWorkerMirroredStrategy's cross-process all-reduce over loopback TCP. Without "
               "TF_CONFIG: runs troupe-launch --workers R for each R of --ranks and prints rank "
               "0's rows. With TF_CONFIG (--worker, set by the driver): one worker process.",
               "allreduce_cluster");
  app.add_flag("--quick", opts.quick,
               "a smoke test: fewer sizes and iterations (seconds, not a measurement)");
  app.add_flag("--worker", opts.worker, "one worker process (the driver passes it)");
  app.add_flag("--tls", opts.tls,
               "run every ranks value in clear and with TROUPE_TLS=1 (troupe-launch --tls), and "
               "print TLS's cost per size");
  app.add_option("--transports", opts.transports,
                 "TROUPE_TRANSPORT of the runs for each ranks value (default tcp,ucx: troupe's TCP broker and "
                 "UCX shared memory)")
    ->delimiter(',')
    ->check(CLI::IsMember({"tcp", "ucx"}));
  app.add_option("--hops-bytes", opts.hops_bytes,
                 "float32 bytes of the all-reduce whose hand-offs the hop table follows (default 4K)")
    ->transform(CLI::AsSizeValue(false))
    ->check(CLI::Range(std::size_t{4}, std::size_t{1} << 30));
  app.add_option("--ranks", opts.ranks, "worker process counts (default 2,4)")
    ->delimiter(',')
    ->check(CLI::Range(2, 64));
  troupe::bench::add_float32_sizes_option(app, opts.sizes);
  app.add_option("--launcher", opts.launcher, "the troupe-launch to run (default: the built one)")
    ->type_name("PATH");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e)); // prints the help or the error
  }
  if (opts.quick && app.count("--sizes") == 0)
    opts.sizes = {std::size_t{4} << 10, std::size_t{1} << 20};
  return opts;
}

bool has_tf_config() {
  const char* v = std::getenv("TF_CONFIG");
  return v != nullptr && *v != '\0';
}

// -- worker: collectives used for bookkeeping ----------------------------------------

// The sum of `value` over every worker (one replica each): also a barrier.
int64_t sum_across_workers(troupe::Strategy& strategy, int64_t value) {
  auto out = strategy.run(
    [](const Tensor& x) {
      return troupe::get_replica_context().all_reduce(troupe::ReduceOp::SUM, x);
    },
    Tensor::from_vector(std::vector<int64_t>{value}));
  return strategy.experimental_local_results(out).at(0).data<int64_t>()[0];
}

// Every worker's `values` (the same length on each), concatenated in rank order.
std::vector<double> gather_across_workers(troupe::Strategy& strategy,
                                          const std::vector<double>& values) {
  auto out =
    strategy.run([](const Tensor& x) { return troupe::get_replica_context().all_gather(x, 0); },
                 Tensor::from_vector(values));
  return strategy.experimental_local_results(out).at(0).to_vector<double>();
}

int replica_id(troupe::Strategy& strategy) {
  auto out = strategy.run([] {
    return Tensor(static_cast<int64_t>(troupe::get_replica_context().replica_id_in_sync_group()));
  });
  return static_cast<int>(strategy.experimental_local_results(out).at(0).item<int64_t>());
}

// -- worker: the loopback limit ---------------------------------------------------------

troupe::bench::LoopbackOptions probe_options(bool quick) {
  troupe::bench::LoopbackOptions o;
  if (quick) {
    o.stream_bytes = std::size_t{16} << 20;
    o.stream_repetitions = 3;
    o.ping_repetitions = 50;
  }
  return o;
}

// Rank 1 listens, the port reaches rank 0 through an all-reduce (0 elsewhere),
// rank 0 measures; the other ranks wait in the closing barrier.
troupe::bench::LoopbackFigures probe_loopback(troupe::Strategy& strategy, int rank,
                                              const troupe::bench::LoopbackOptions& options) {
  troupe::bench::LoopbackFigures figures;
  if (rank == 1) {
    auto probe = troupe::bench::LoopbackProbe::listen(options);
    (void)sum_across_workers(strategy, probe.port());
    (void)probe.run();
  } else {
    const auto port = sum_across_workers(strategy, 0);
    if (rank == 0)
      figures = troupe::bench::LoopbackProbe::connect(static_cast<int>(port), options).run();
  }
  (void)sum_across_workers(strategy, 0);
  return figures;
}

void print_probe(const char* when, const troupe::bench::LoopbackFigures& f,
                 const troupe::bench::LoopbackOptions& o) {
  char line[512];
  std::snprintf(line, sizeof line,
                "# probe %s: stream %.3f GB/s (runs %.1f..%.1f ms), duplex %.3f GB/s/dir, "
                "%s rtt %.1f us (p10 %.1f, p90 %.1f)",
                when, f.stream_bytes_per_second / 1e9, f.stream_s.min * 1e3, f.stream_s.max * 1e3,
                f.duplex_bytes_per_second / 1e9, troupe::bench::human_bytes(o.ping_bytes).c_str(),
                f.round_trip_s.median * 1e6, f.round_trip_s.p10 * 1e6, f.round_trip_s.p90 * 1e6);
  std::cout << line << std::endl;
}

// -- worker: inputs and verification -----------------------------------------------------

// Rank r's element i is (r+1)*1000 + i%997: it differs per rank and per element,
// and any sum over up to 64 ranks (< 2^24) is exact in float32.
constexpr int period = 997;

float input_value(int rank, int64_t i) {
  return static_cast<float>((rank + 1) * 1000 + i % period);
}

struct VerificationError {
  std::string message;
};

void verify(const Tensor& result, int rank, int ranks, int64_t count,
            const std::vector<float>& expected) {
  auto where = [&] {
    return "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ", "
           + std::to_string(count) + " float32 elements: ";
  };
  if (!result.valid())
    throw VerificationError{where() + "the result is an empty tensor"};
  if (result.dtype() != troupe::DType::float32 || result.num_elements() != count)
    throw VerificationError{where() + "the result has dtype "
                            + std::string(troupe::name(result.dtype())) + " and "
                            + std::to_string(result.num_elements()) + " elements"};
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
  if (bad > 0)
    throw VerificationError{
      where() + std::to_string(bad) + " wrong elements; the first is element "
      + std::to_string(first_bad) + " = " + std::to_string(out[first_bad]) + ", expected "
      + std::to_string(expected[static_cast<std::size_t>(first_bad % period)])};
}

// -- worker: the all-reduce sweep ------------------------------------------------------

struct CaseBudget {
  int warmup;
  int min_iters;
  int max_iters;
  double seconds; // aimed-for time of the timed iterations
};

CaseBudget budget_for(std::size_t bytes, bool quick) {
  if (quick)
    return {1, 3, 3, 0};
  if (bytes <= (std::size_t{64} << 10))
    return {20, 20, 1000, 0.5};
  if (bytes <= (std::size_t{1} << 20))
    return {5, 20, 200, 0.5};
  return {2, 5, 20, 1.0};
}

struct CaseResult {
  std::size_t bytes = 0;
  troupe::bench::Summary max_s; ///< per iteration: the max over ranks
  double max_rank_median_s = 0; ///< the slowest rank's own median
};

// Every rank runs the same number of collectives: the timed iteration count
// comes from the warm-up medians, summed across workers in integer microseconds
// so that every rank derives the same count.
int agreed_iterations(troupe::Strategy& strategy, int ranks, const CaseBudget& budget,
                      const std::vector<double>& warmup_s) {
  if (budget.min_iters == budget.max_iters)
    return budget.min_iters;
  const auto mine = std::max<int64_t>(1, std::llround(troupe::bench::median(warmup_s) * 1e6));
  const int64_t mean_us = std::max<int64_t>(1, sum_across_workers(strategy, mine) / ranks);
  const auto wanted = static_cast<int64_t>(budget.seconds * 1e6) / mean_us;
  return static_cast<int>(std::clamp<int64_t>(wanted, budget.min_iters, budget.max_iters));
}

CaseResult run_case(troupe::Strategy& strategy, int rank, int ranks, std::size_t bytes,
                    bool quick) {
  const auto count = static_cast<int64_t>(bytes / sizeof(float));
  std::vector<float> values(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    values[static_cast<std::size_t>(i)] = input_value(rank, i);
  const Tensor input = Tensor::from_vector(values);
  values = {};
  std::vector<float> expected(period, 0.0f);
  for (int j = 0; j < period; ++j)
    for (int r = 0; r < ranks; ++r)
      expected[static_cast<std::size_t>(j)] += input_value(r, j);

  auto fn = [](const Tensor& x) {
    return troupe::get_replica_context().all_reduce(troupe::ReduceOp::SUM, x);
  };
  // One timed all-reduce, then (untimed) verification; a result that nobody
  // else holds is overwritten with NaN, so a later iteration that hands back a
  // reused buffer without writing it fails verification. A barrier then lines
  // the ranks up again, so that no rank's timing includes waiting for another
  // rank's verification (tens of ms at 64 MiB); what remains is the barrier's
  // release skew, as between back-to-back all-reduces.
  auto once = [&] {
    const auto t0 = Clock::now();
    auto out = strategy.run(fn, input);
    const double s = seconds_between(t0, Clock::now());
    auto local = strategy.experimental_local_results(out);
    out = {};
    if (local.size() != 1)
      throw VerificationError{"strategy.run returned " + std::to_string(local.size())
                              + " local values for one replica per worker"};
    Tensor result = std::move(local[0]);
    local.clear();
    if (result.shares_buffer_with(input))
      throw VerificationError{"the all-reduce result shares the input's buffer"};
    verify(result, rank, ranks, count, expected);
    if (result.use_count() == 1) {
      float* p = result.mutable_data<float>();
      std::fill(p, p + count, std::numeric_limits<float>::quiet_NaN());
    }
    (void)sum_across_workers(strategy, 0);
    return s;
  };

  const auto budget = budget_for(bytes, quick);
  std::vector<double> warmup;
  for (int w = 0; w < budget.warmup; ++w)
    warmup.push_back(once());
  const int iters = agreed_iterations(strategy, ranks, budget, warmup);
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i)
    times.push_back(once());

  // Every rank's timings, then per iteration the slowest rank.
  const auto all = gather_across_workers(strategy, times);
  CaseResult result;
  result.bytes = bytes;
  if (all.size() != static_cast<std::size_t>(ranks) * times.size())
    throw std::runtime_error("all_gather of the timings returned " + std::to_string(all.size())
                             + " values, expected " + std::to_string(ranks * iters));
  std::vector<double> max_s(times.size(), 0.0);
  for (int r = 0; r < ranks; ++r) {
    std::vector<double> own;
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double t = all[static_cast<std::size_t>(r) * times.size() + i];
      max_s[i] = std::max(max_s[i], t);
      own.push_back(t);
    }
    result.max_rank_median_s = std::max(result.max_rank_median_s, troupe::bench::median(own));
  }
  result.max_s = troupe::bench::summarize(max_s);
  return result;
}

// STYLE.md's row, with ratio = busbw / limit: the limit here is a link
// bandwidth, which busbw (the bytes each rank moves per second) is compared to.
// (format_row's ratio is algbw / limit, for limits expressed as an algbw.)
std::string format_cluster_row(int ranks, std::size_t bytes, double median_s, double limit_bps) {
  const double algbw = median_s > 0 ? static_cast<double>(bytes) / median_s : 0;
  const double busbw = algbw * troupe::bench::all_reduce_busbw_factor(ranks);
  char buf[256];
  std::snprintf(buf, sizeof buf, "ROW,troupe,%s,%d,%zu,%.1f,%.3f,%.3f,%.3f,%.3f",
                troupe::knobs().tls                  ? "tcp-loopback-tls"
                : troupe::knobs().transport == "ucx" ? "ucx-shm"
                                                     : "tcp-loopback",
                ranks, bytes, median_s * 1e6,
                algbw / 1e9, busbw / 1e9, limit_bps / 1e9,
                limit_bps > 0 ? busbw / limit_bps : 0);
  return buf;
}

void print_results(int ranks, const std::vector<CaseResult>& results,
                   const troupe::bench::LoopbackFigures& before,
                   const troupe::bench::LoopbackFigures& after,
                   const troupe::bench::LoopbackOptions& o) {
  const double limit = (before.stream_bytes_per_second + after.stream_bytes_per_second) / 2;
  const double rtt = (before.round_trip_s.median + after.round_trip_s.median) / 2;
  std::cout << "# limit_GBps: raw TCP stream rank 0 -> rank 1 over 127.0.0.1, TCP_NODELAY,\n"
            << "#   " << o.socket_buffer_bytes / (1 << 20) << " MiB SO_SNDBUF/SO_RCVBUF, "
            << troupe::bench::human_bytes(o.stream_bytes) << " in "
            << troupe::bench::human_bytes(o.write_bytes) << " writes, median of "
            << o.stream_repetitions << " after a warm-up;\n"
            << "#   mean of the probes before and after the sweep. ratio = busbw / limit.\n"
            << "# latency reference: raw TCP " << troupe::bench::human_bytes(o.ping_bytes)
            << " ping-pong round trip, median of " << o.ping_repetitions << ".\n"
            << "# median_us: median over iterations of the max over ranks of strategy.run.\n"
            << troupe::bench::row_columns() << "\n";
  for (const auto& c : results)
    std::cout << format_cluster_row(ranks, c.bytes, c.max_s.median, limit) << "\n";
  char line[256];
  for (const auto& c : results) {
    if (c.bytes != (std::size_t{4} << 10))
      continue;
    std::snprintf(
      line, sizeof line, "# 4 KiB latency: %.1f us vs raw TCP round trip %.1f us (x%.1f)%s",
      c.max_s.median * 1e6, rtt * 1e6, rtt > 0 ? c.max_s.median / rtt : 0,
      ranks == 2
        ? (c.max_s.median <= 150e-6 ? "; target <= 150 us: met" : "; target <= 150 us: missed")
        : "");
    std::cout << line << "\n";
  }
  bool any = false;
  double worst = std::numeric_limits<double>::infinity();
  for (const auto& c : results) {
    if (c.bytes >= (std::size_t{16} << 20) && c.max_s.median > 0 && limit > 0) {
      any = true;
      const double busbw = static_cast<double>(c.bytes) / c.max_s.median
                           * troupe::bench::all_reduce_busbw_factor(ranks);
      worst = std::min(worst, busbw / limit);
    }
  }
  if (any) {
    std::snprintf(line, sizeof line,
                  "# target busbw >= 0.8 x limit at >= 16 MiB: worst ratio %.3f: %s", worst,
                  worst >= 0.8 ? "met" : "missed");
    std::cout << line << "\n";
  }
  std::cout.flush();
}

// Where the time of an all-reduce of `bytes` goes, on every rank: each hand-off's
// median offset from rank 0's replica issuing it (core/hop_trace.hpp; the
// processes share CLOCK_MONOTONIC), over `iters` runs of one all-reduce
// each, traced apart from the timed sweep.
void print_hops(troupe::MultiWorkerMirroredStrategy& strategy, int rank, std::size_t bytes, int iters) {
  using troupe::internal::Hop;
  const std::size_t count = bytes / sizeof(float);
  const Tensor input = Tensor::full({static_cast<int64_t>(count)}, 1.0, troupe::DType::float32);
  auto fn = [](const Tensor& x) { return troupe::get_replica_context().all_reduce(troupe::ReduceOp::SUM, x); };
  for (int i = 0; i < 20; ++i) // warm-up
    (void)strategy.run(fn, input);
  (void)sum_across_workers(strategy, 0);
  troupe::internal::start_hop_trace(std::size_t{64} * static_cast<std::size_t>(iters));
  for (int i = 0; i < iters; ++i)
    (void)strategy.run(fn, input);
  (void)sum_across_workers(strategy, 0); // every rank's runs are done
  const auto mine = troupe::internal::stop_hop_trace();
  // Every rank's events, 5 numbers each: rank, hop, frame type, run, ns.
  std::vector<double> flat;
  for (const auto& e : mine)
    for (double x : {static_cast<double>(rank), static_cast<double>(e.hop), static_cast<double>(e.frame_type),
                     static_cast<double>(e.run), static_cast<double>(e.ns)})
      flat.push_back(x);
  if (flat.empty())
    flat = {-1, 0, 0, 0, 0}; // all_gather needs a value from every rank
  const auto all = gather_across_workers(strategy, flat);
  if (rank != 0)
    return;
  struct Event {
    int rank, hop, type;
    double ns;
  };
  std::map<uint64_t, std::vector<Event>> by_run;
  for (std::size_t i = 0; i + 4 < all.size(); i += 5)
    if (all[i] >= 0)
      by_run[static_cast<uint64_t>(all[i + 3])].push_back(
        Event{static_cast<int>(all[i]), static_cast<int>(all[i + 1]), static_cast<int>(all[i + 2]), all[i + 4]});
  std::map<std::tuple<int, int, int, int>, std::vector<double>> offsets;
  for (auto& [run, list] : by_run) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.ns < b.ns; });
    auto issued = std::find_if(list.begin(), list.end(), [](const auto& e) {
      return e.rank == 0 && e.hop == static_cast<int>(Hop::replica_issued);
    });
    if (issued == list.end())
      continue;
    std::map<std::tuple<int, int, int>, int> nth;
    for (const auto& e : list)
      offsets[{e.rank, e.hop, e.type, nth[{e.rank, e.hop, e.type}]++}].push_back((e.ns - issued->ns) / 1e3);
  }
  std::vector<std::pair<double, std::string>> rows;
  for (auto& [key, values] : offsets) {
    if (values.size() * 2 < static_cast<std::size_t>(iters))
      continue; // not in most runs
    const auto [r, hop, type, n] = key;
    std::string what = "rank " + std::to_string(r) + ": ";
    what += troupe::internal::hop_name(static_cast<Hop>(hop));
    if (type != 0) {
      what += " (";
      what += troupe::internal::frame_type_name(static_cast<troupe::internal::FrameType>(type));
      what += (n > 0 ? " #" + std::to_string(n + 1) : std::string()) + ")";
    }
    rows.emplace_back(troupe::bench::median(values), what);
  }
  std::sort(rows.begin(), rows.end());
  std::printf("# hops of a %s all-reduce (median us after rank 0's replica issued it, %d runs):\n",
              troupe::bench::human_bytes(bytes).c_str(), iters);
  double previous = 0;
  for (const auto& [at, what] : rows) {
    std::printf("#   %8.1f  (+%6.1f)  %s\n", at, at - previous, what.c_str());
    previous = at;
  }
  std::fflush(stdout);
}

int run_worker(const Options& opts) {
  troupe::Runtime rt(troupe::ClusterResolver::from_env(), {.logical_cpu_devices = 1});
  troupe::MultiWorkerMirroredStrategy strategy(rt);
  const int ranks = strategy.num_replicas_in_sync();
  const int rank = replica_id(strategy);
  if (ranks < 2)
    throw std::invalid_argument("the cluster has " + std::to_string(ranks)
                                + " replica; start at least 2 workers (troupe-launch --workers 2)");
  const bool chief = rank == 0;
  const auto wall0 = Clock::now();
  const auto& knobs = troupe::knobs();
  if (chief)
    std::cout << "# allreduce_cluster"
              << (opts.quick ? " --quick (smoke test: not a measurement)" : "") << ": " << ranks
              << " processes x 1 replica, " << std::thread::hardware_concurrency()
              << " hardware threads\n"
              << "# cross-worker: direct exchange while (workers - 1) x pack <= "
              << troupe::bench::human_bytes(knobs.direct_exchange_max_bytes) << ", halving-doubling <= "
              << troupe::bench::human_bytes(knobs.halving_doubling_max_bytes) << ", else ring in "
              << troupe::bench::human_bytes(knobs.ring_chunk_bytes) << " frames\n";

  const auto probe_opts = probe_options(opts.quick);
  const auto before = probe_loopback(strategy, rank, probe_opts);
  if (chief)
    print_probe("before", before, probe_opts);

  // What a step costs without any collective (the edge, the replica's fiber,
  // the wake-ups): the part of the small-message latency that is not the wire.
  {
    std::vector<double> empty;
    for (int i = 0; i < (opts.quick ? 20 : 500); ++i) {
      const auto t0 = Clock::now();
      strategy.run([] {});
      empty.push_back(seconds_between(t0, Clock::now()));
    }
    if (chief)
      std::printf("# strategy.run without a collective (rank 0): median %.1f us\n",
                  troupe::bench::median(empty) * 1e6);
    (void)sum_across_workers(strategy, 0);
  }

  std::vector<CaseResult> results;
  for (std::size_t bytes : opts.sizes) {
    results.push_back(run_case(strategy, rank, ranks, bytes, opts.quick));
    if (chief) {
      const auto& c = results.back();
      char line[256];
      std::snprintf(line, sizeof line,
                    "#   %s: %zu iters, median %.1f us (p10 %.1f, p90 %.1f, max %.1f), "
                    "slowest rank's median %.1f us, all verified",
                    troupe::bench::human_bytes(bytes).c_str(), c.max_s.count, c.max_s.median * 1e6,
                    c.max_s.p10 * 1e6, c.max_s.p90 * 1e6, c.max_s.max * 1e6,
                    c.max_rank_median_s * 1e6);
      std::cout << line << std::endl;
    }
  }

  // Large ones take longer and have many more hops: fewer runs do.
  print_hops(strategy, rank, opts.hops_bytes, opts.quick || opts.hops_bytes > (std::size_t{1} << 20) ? 20 : 300);

  const auto after = probe_loopback(strategy, rank, probe_opts);
  if (chief) {
    print_probe("after", after, probe_opts);
    print_results(ranks, results, before, after, probe_opts);
    std::printf("# ranks=%d: %.1f s\n", ranks, seconds_between(wall0, Clock::now()));
    std::fflush(stdout);
  }
  return 0;
}

// -- driver ---------------------------------------------------------------------------

std::string self_path(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

std::string join_sizes(const std::vector<std::size_t>& sizes) {
  std::string out;
  for (auto s : sizes)
    out += (out.empty() ? "" : ",") + std::to_string(s);
  return out;
}

// Runs one cluster of `ranks` workers; forwards rank 0's stdout lines without
// their "[worker:0] " prefix and drops the other ranks' stdout (their stderr,
// where errors go, passes through unchanged). Returns the launcher's exit status.
// `medians` gets each ROW's median (us) by size.
int launch(const Options& opts, int ranks, const std::string& transport, bool tls, const std::string& self,
           std::map<std::size_t, double>& medians) {
  ::setenv("TROUPE_TRANSPORT", transport.c_str(), 1); // the launcher and its workers inherit it
  std::vector<std::string> args{opts.launcher, "--workers", std::to_string(ranks), "--timeout-seconds",
                                std::to_string(timeout_seconds)};
  if (tls)
    args.emplace_back("--tls");
  for (std::string arg : {std::string("--"), self, std::string("--worker"), std::string("--sizes")})
    args.push_back(arg);
  args.push_back(join_sizes(opts.sizes));
  args.emplace_back("--hops-bytes");
  args.push_back(std::to_string(opts.hops_bytes));
  if (opts.quick)
    args.emplace_back("--quick");
  const auto child = troupe::bench::spawn_piped(args, false, "build the troupe-launch target or pass --launcher PATH");
  const pid_t pid = child.pid;
  FILE* in = ::fdopen(child.out_fd, "r");
  if (in == nullptr) {
    ::close(child.out_fd);
    throw std::runtime_error(std::string("fdopen: ") + std::strerror(errno));
  }
  const std::string chief = "[worker:0] ";
  char* line = nullptr;
  std::size_t cap = 0;
  for (ssize_t n; (n = ::getline(&line, &cap, in)) >= 0;) {
    const std::string_view text(line, static_cast<std::size_t>(n));
    if (text.starts_with(chief + "ROW,")) {
      // ROW,troupe,transport,ranks,bytes,median_us,...
      std::istringstream fields{std::string(text.substr(chief.size()))};
      std::string field;
      std::vector<std::string> row;
      while (std::getline(fields, field, ','))
        row.push_back(field);
      if (row.size() > 5)
        medians[std::stoull(row[4])] = std::stod(row[5]);
    }
    if (text.starts_with(chief))
      std::cout << text.substr(chief.size());
    else if (!text.starts_with("["))
      std::cout << text; // the launcher's own lines
    std::cout.flush();
  }
  std::free(line);
  std::fclose(in);
  return troupe::bench::exit_code(troupe::bench::wait_for_child(pid));
}

int run_driver(const Options& opts, const char* argv0) {
  const auto wall0 = Clock::now();
  const auto self = self_path(argv0);
  std::cout << "# allreduce_cluster: MultiWorkerMirroredStrategy all_reduce (SUM, float32) across\n"
            << "#   processes on 127.0.0.1, each started by " << opts.launcher << "\n";
  std::cout.flush();
  std::vector<std::string> costs;
  for (int ranks : opts.ranks) {
    // Each run's medians by size: the transports in clear, then TCP under TLS.
    std::vector<std::pair<std::string, bool>> runs;
    for (const auto& transport : opts.transports)
      runs.emplace_back(transport, false);
    if (opts.tls)
      runs.emplace_back("tcp", true);
    std::map<std::string, std::map<std::size_t, double>> medians;
    for (const auto& [transport, tls] : runs) {
      const std::string name = tls ? "tcp-tls" : transport;
      std::cout << "# --- " << ranks << " workers, TROUPE_TRANSPORT=" << transport
                << (tls ? ", TLS (TROUPE_TLS=1)" : "") << "\n";
      std::cout.flush();
      const int status = launch(opts, ranks, transport, tls, self, medians[name]);
      if (status != 0) {
        std::cerr << "allreduce_cluster: the " << ranks << "-worker run over " << name
                  << " failed: troupe-launch exited with " << status
                  << (status == 124 ? " (the " + std::to_string(timeout_seconds) + " s timeout)" : "")
                  << "; its messages above name the failed task\n";
        return 1;
      }
    }
    // Each other run against TCP in clear, size by size.
    for (const auto& [name, label] : {std::pair<std::string, std::string>{"ucx", "UCX shared memory vs TCP"},
                                      std::pair<std::string, std::string>{"tcp-tls", "TLS cost"}}) {
      for (const auto& [bytes, clear_us] : medians["tcp"]) {
        auto other = medians[name].find(bytes);
        if (other == medians[name].end() || clear_us <= 0)
          continue;
        char line[200];
        std::snprintf(line, sizeof line, "# %s, %d workers, %s: %.1f us over TCP, %.1f us over %s (x%.2f)",
                      label.c_str(), ranks, troupe::bench::human_bytes(bytes).c_str(), clear_us, other->second,
                      name.c_str(), other->second / clear_us);
        costs.push_back(line);
      }
    }
  }
  for (const auto& line : costs)
    std::cout << line << "\n";
  std::printf("# total %.1f s\n", seconds_between(wall0, Clock::now()));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string who = "allreduce_cluster";
  try {
    const auto opts = parse(argc, argv);
    if (opts.worker && !has_tf_config())
      throw std::invalid_argument(
        "--worker needs TF_CONFIG: start the benchmark without --worker and it "
        "runs troupe-launch itself");
    if (!has_tf_config())
      return run_driver(opts, argv[0]);
    if (const char* task = std::getenv("TROUPE_TASK_NAME"))
      who += std::string(" (") + task + ")";
    return run_worker(opts);
  } catch (const VerificationError& e) {
    std::cout.flush();
    std::cerr << who << ": VERIFICATION FAILED: " << e.message << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << who << ": " << e.what() << "\n";
    return 2;
  }
}

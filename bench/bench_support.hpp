#pragma once

// Shared helpers of the benchmarks under bench/: statistics, the memory copy
// bandwidth probe that every limit is derived from, and the machine-readable
// ROW lines of STYLE.md ("Benchmarks").

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace troupe::bench {

using Clock = std::chrono::steady_clock;

/// Seconds elapsed between two time points.
[[nodiscard]] inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// The median of `samples` (the mean of the middle two for an even count); 0 when empty.
[[nodiscard]] double median(std::vector<double> samples);

/// The nearest-rank percentile `p` in [0, 100] of `samples`; 0 when empty.
[[nodiscard]] double percentile(std::vector<double> samples, double p);

/// Median, spread and count of a set of timings, in the samples' unit.
struct Summary {
  std::size_t count = 0;
  double min = 0, p10 = 0, median = 0, p90 = 0, max = 0;
};
[[nodiscard]] Summary summarize(const std::vector<double>& samples);

/// The result of the memory copy bandwidth probe.
struct CopyBandwidth {
  double bytes_per_second = 0; ///< (bytes read + bytes written) / median time
  double median_s = 0;         ///< median time of one copy of the whole buffer
  double min_s = 0;
  double max_s = 0;
  std::size_t buffer_bytes = 0;
  int threads = 0;
  int repetitions = 0;
};

/// Copies a prefaulted buffer of `bytes` into another prefaulted buffer with
/// `threads` threads (0 = every hardware thread), each copying its own slice
/// with memcpy, `repetitions` times after one warm-up copy. The bandwidth counts
/// the bytes read plus the bytes written per second of the median repetition.
[[nodiscard]] CopyBandwidth measure_copy_bandwidth(std::size_t bytes = std::size_t{256} << 20,
                                                   int repetitions = 7, int threads = 0);

/// A copy-bandwidth probe that keeps its prefaulted buffers, so it can be
/// taken right next to each measurement: on shared machines the memory
/// bandwidth drifts by 2x within minutes, and a limit measured at another
/// moment misstates the ratio in either direction.
class CopyProbe {
public:
  /// Buffers of `bytes` (choose more than the last-level cache), copied by `threads` threads (0 = all).
  explicit CopyProbe(std::size_t bytes = std::size_t{64} << 20, int threads = 0);
  ~CopyProbe();
  CopyProbe(const CopyProbe&) = delete;
  CopyProbe& operator=(const CopyProbe&) = delete;

  /// Copies the buffer once; returns (bytes read + bytes written) per second.
  [[nodiscard]] double once();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// "CopyBandwidth,GBps=...,buffer_MiB=256,threads=2,reps=7,median_ms=...,min_ms=...,max_ms=..."
[[nodiscard]] std::string describe(const CopyBandwidth& bw, const std::string& label = "COPY_BW");

/// One case of a benchmark in STYLE.md's row format.
struct Row {
  std::string system;    ///< "troupe", or the baseline's name
  std::string transport; ///< "local", "tcp", ...
  int ranks = 0;
  std::size_t bytes = 0;    ///< bytes per rank (the tensor size)
  double median_s = 0;      ///< median of the max-over-ranks time
  double busbw_factor = 1;  ///< busbw / algbw, e.g. all_reduce_busbw_factor(ranks)
  double limit_bytes_per_second = 0; ///< the floor, expressed as an algbw
};

/// nccl-tests' bus bandwidth factor of an all-reduce: 2(n-1)/n.
[[nodiscard]] double all_reduce_busbw_factor(int ranks);

/// The columns line that precedes the rows (starts with '#').
[[nodiscard]] std::string row_columns();

/// "ROW,system,transport,ranks,bytes,median_us,algbw_GBps,busbw_GBps,limit_GBps,ratio"
/// with algbw = bytes / median, busbw = algbw * busbw_factor, ratio = algbw / limit.
[[nodiscard]] std::string format_row(const Row& row);

/// Keeps the compiler from discarding a computed value.
template <class T>
inline void do_not_optimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

/// "4 KiB", "64 MiB": a byte count for humans.
[[nodiscard]] std::string human_bytes(std::size_t bytes);

/// Adds the all-reduce benchmarks' --sizes option to `app`: a comma-separated
/// list of float32 buffer sizes ("4K,1M"), each a positive multiple of 4 bytes.
void add_float32_sizes_option(CLI::App& app, std::vector<std::size_t>& sizes);

/// The CPU's model name from /proc/cpuinfo ("unknown CPU" when absent).
[[nodiscard]] std::string cpu_model();

/// "load 3.10 2.90 2.70": other work on a shared machine slows every hand-off
/// between threads, so each bench prints it beside its figures.
[[nodiscard]] std::string load_average();

/// A child process whose standard output (and, when asked, standard error)
/// this process reads from `out_fd`.
struct PipedChild {
  int pid = -1;
  int out_fd = -1;
};

/// Starts `args[0]` with `args` (posix_spawn, this process's environment),
/// its standard output (and with `merge_stderr` its standard error) into a
/// pipe. Throws std::runtime_error naming the program and `fix` when it
/// cannot start.
[[nodiscard]] PipedChild spawn_piped(std::vector<std::string> args, bool merge_stderr, const std::string& fix);

/// Waits for this process's child `pid` (killed first with SIGKILL when
/// `kill_first`) and returns waitpid's status. Throws std::runtime_error when
/// waitpid fails.
int wait_for_child(int pid, bool kill_first = false);

/// The exit code a shell would report for a wait `status`: the child's exit
/// status, or 128 + the signal that ended it.
[[nodiscard]] int exit_code(int status);

/// "exit status 1", "signal 9".
[[nodiscard]] std::string describe_status(int status);

} // namespace troupe::bench

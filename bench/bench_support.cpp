#include "bench_support.hpp"

#include <algorithm>
#include <barrier>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace troupe::bench {

double median(std::vector<double> samples) {
  if (samples.empty())
    return 0;
  const auto mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1)
    return upper;
  const double lower = *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

double percentile(std::vector<double> samples, double p) {
  if (samples.empty())
    return 0;
  std::sort(samples.begin(), samples.end());
  // Nearest rank: the smallest sample with at least p% of the samples at or below it.
  const double rank = std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(samples.size()));
  const auto index = static_cast<std::size_t>(std::max(rank, 1.0)) - 1;
  return samples[std::min(index, samples.size() - 1)];
}

Summary summarize(const std::vector<double>& samples) {
  Summary s;
  s.count = samples.size();
  if (samples.empty())
    return s;
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  s.p10 = percentile(samples, 10);
  s.median = median(samples);
  s.p90 = percentile(samples, 90);
  return s;
}

namespace {

struct FreeDeleter {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, FreeDeleter>;

Buffer allocate(std::size_t bytes) {
  // Page-aligned, as the tensors' large buffers effectively are; no huge-page
  // advice, so that the probe sees the same page size as the tensors.
  constexpr std::size_t page = 4096;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(page, (bytes + page - 1) / page * page));
  if (p == nullptr)
    throw std::bad_alloc{};
  return Buffer(p);
}

} // namespace

CopyBandwidth measure_copy_bandwidth(std::size_t bytes, int repetitions, int threads) {
  if (threads <= 0)
    threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  repetitions = std::max(repetitions, 1);
  auto src = allocate(bytes);
  auto dst = allocate(bytes);
  // Prefault both buffers (and give the source non-zero contents).
  std::memset(src.get(), 0x5a, bytes);
  std::memset(dst.get(), 0, bytes);

  // Each thread copies one page-aligned slice; the threads stay up across
  // repetitions and start together, so thread creation is not timed.
  constexpr std::size_t page = 4096;
  const std::size_t pages = (bytes + page - 1) / page;
  auto slice = [&](int t) {
    const std::size_t first = pages * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
    const std::size_t last = pages * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
    const std::size_t begin = std::min(first * page, bytes);
    const std::size_t end = std::min(last * page, bytes);
    return std::pair{begin, end};
  };
  std::barrier start(threads);
  std::barrier done(threads);
  const int rounds = repetitions + 1; // the first round is a warm-up
  auto work = [&](int t) {
    const auto [begin, end] = slice(t);
    for (int r = 0; r < rounds; ++r) {
      start.arrive_and_wait();
      std::memcpy(dst.get() + begin, src.get() + begin, end - begin);
      done.arrive_and_wait();
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t)
    workers.emplace_back(work, t);
  std::vector<double> times;
  const auto [begin0, end0] = slice(0);
  for (int r = 0; r < rounds; ++r) {
    start.arrive_and_wait();
    const auto t0 = Clock::now();
    std::memcpy(dst.get() + begin0, src.get() + begin0, end0 - begin0);
    done.arrive_and_wait();
    const auto t1 = Clock::now();
    if (r > 0)
      times.push_back(seconds_between(t0, t1));
  }
  for (auto& w : workers)
    w.join();
  if (std::memcmp(src.get(), dst.get(), bytes) != 0)
    throw std::runtime_error("copy bandwidth probe: the copy differs from its source");

  CopyBandwidth bw;
  const auto s = summarize(times);
  bw.median_s = s.median;
  bw.min_s = s.min;
  bw.max_s = s.max;
  bw.buffer_bytes = bytes;
  bw.threads = threads;
  bw.repetitions = repetitions;
  bw.bytes_per_second = s.median > 0 ? 2.0 * static_cast<double>(bytes) / s.median : 0;
  return bw;
}

std::string describe(const CopyBandwidth& bw, const std::string& label) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s,GBps=%.2f,buffer_MiB=%zu,threads=%d,reps=%d,median_ms=%.2f,min_ms=%.2f,max_ms=%.2f",
                label.c_str(), bw.bytes_per_second / 1e9, bw.buffer_bytes >> 20, bw.threads,
                bw.repetitions, bw.median_s * 1e3, bw.min_s * 1e3, bw.max_s * 1e3);
  return buf;
}

double all_reduce_busbw_factor(int ranks) {
  return ranks > 0 ? 2.0 * (ranks - 1) / ranks : 0;
}

std::string row_columns() {
  return "# ROW,system,transport,ranks,bytes,median_us,algbw_GBps,busbw_GBps,limit_GBps,ratio";
}

std::string format_row(const Row& row) {
  const double algbw = row.median_s > 0 ? static_cast<double>(row.bytes) / row.median_s : 0;
  const double busbw = algbw * row.busbw_factor;
  const double limit = row.limit_bytes_per_second;
  const double ratio = limit > 0 ? algbw / limit : 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "ROW,%s,%s,%d,%zu,%.1f,%.3f,%.3f,%.3f,%.3f", row.system.c_str(),
                row.transport.c_str(), row.ranks, row.bytes, row.median_s * 1e6, algbw / 1e9,
                busbw / 1e9, limit / 1e9, ratio);
  return buf;
}

std::string human_bytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

void add_float32_sizes_option(CLI::App& app, std::vector<std::size_t>& sizes) {
  // AsSizeValue turns "4K" into a byte count as text; the check reads it back.
  const auto check = [](const std::string& bytes) -> std::string {
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(bytes.data(), bytes.data() + bytes.size(), value);
    if (ec != std::errc{} || end != bytes.data() + bytes.size() || value == 0 || value % sizeof(float) != 0)
      return bytes + " bytes is not a positive multiple of 4 bytes (one float32)";
    return {};
  };
  app.add_option("--sizes", sizes, "float32 buffer sizes (default 4K,64K,1M,16M,64M; 4K,1M with --quick)")
    ->delimiter(',')
    ->transform(CLI::AsSizeValue(false))
    ->check(CLI::Validator(check, "FLOAT32_BYTES"));
}

// -- CopyProbe ----------------------------------------------------------------------

struct CopyProbe::Impl {
  std::size_t bytes;
  int threads;
  Buffer src;
  Buffer dst;
};

CopyProbe::CopyProbe(std::size_t bytes, int threads)
  : impl_(std::make_unique<Impl>(Impl{bytes,
                                      threads > 0 ? threads
                                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
                                      allocate(bytes), allocate(bytes)})) {
  std::memset(impl_->src.get(), 0x5a, bytes);
  std::memset(impl_->dst.get(), 0, bytes);
}

CopyProbe::~CopyProbe() = default;

double CopyProbe::once() {
  const auto n = static_cast<std::size_t>(impl_->threads);
  const std::size_t slice = (impl_->bytes / n + 4095) / 4096 * 4096;
  auto copy = [&](std::size_t t) {
    const std::size_t begin = std::min(t * slice, impl_->bytes);
    const std::size_t end = std::min(begin + slice, impl_->bytes);
    std::memcpy(impl_->dst.get() + begin, impl_->src.get() + begin, end - begin);
  };
  // Thread start-up (~0.1 ms) is small next to copying a buffer larger than the cache.
  const auto t0 = Clock::now();
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < n; ++t)
    helpers.emplace_back(copy, t);
  copy(0);
  for (auto& h : helpers)
    h.join();
  const double s = seconds_between(t0, Clock::now());
  return s > 0 ? 2.0 * static_cast<double>(impl_->bytes) / s : 0;
}

PipedChild spawn_piped(std::vector<std::string> args, bool merge_stderr, const std::string& fix) {
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  if (merge_stderr)
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args.front().c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::runtime_error("cannot start " + args.front() + ": " + std::strerror(rc) + " (" + fix + ")");
  }
  return {pid, fds[0]};
}

int wait_for_child(int pid, bool kill_first) {
  if (kill_first)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  return status;
}

int exit_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string describe_status(int status) {
  if (WIFEXITED(status))
    return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("model name")) {
      const auto colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown CPU";
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  if (!(in >> one >> five >> fifteen))
    return "load unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "load %.2f %.2f %.2f", one, five, fifteen);
  return buf;
}

} // namespace troupe::bench

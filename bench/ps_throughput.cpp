// Benchmark of ParameterServerStrategy + ClusterCoordinator: functions
// scheduled per second and the push/pull bandwidth of a sharded variable,
// beside TensorFlow's figures for the same workload taken in the same run
// (bench/tf_ps_throughput.py, run as a child process) and beside the loopback
// TCP bandwidth measured in the same run (bench/loopback_probe).
//
//   ps_throughput [--quick] [--workers 1,2,4] [--calls 200] [--var-calls 20]
//                 [--var-mib 16] [--repeats 7] [--tf auto|on|off] [--tf-python PATH]
//                 [--cluster in-process|processes]
//
// Figures, for each worker count (1 ps), each the median over --repeats timed
// rounds after one untimed warm-up round, as tf_ps_throughput.py takes them:
//   trivial            a function returning a constant: schedule + fetch one at a time
//   trivial_pipelined  schedule --calls, join, fetch every result
//   var                a function that reads a float32 variable of --var-mib MiB on
//                      the ps and assign_adds a delta computed from what it read
//                      (bytes per call = read + update = 2 x the variable)
//   var_pipelined      the same, scheduled --var-calls at a time, joined, fetched
// Every result is verified: each trivial function returns 1; each variable
// function's read, and the variable after each round, count the committed calls.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <troupe/core/config.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"
#include "loopback_probe.hpp"

#ifndef TROUPE_BENCH_SOURCE_DIR
#define TROUPE_BENCH_SOURCE_DIR "bench"
#endif


namespace {

using troupe::Tensor;
using troupe::bench::Clock;
using troupe::bench::seconds_between;

// -- options ---------------------------------------------------------------------

struct Options {
  bool quick = false;
  std::string cluster = "in-process";
  std::vector<int> workers{1, 2, 4};
  int calls = 200;
  int var_calls = 20;
  int var_mib = 16;
  int repeats = 7;
  std::string tf = "auto";
  std::string tf_python = TROUPE_BENCH_SOURCE_DIR "/.venv/bin/python";
  std::string tf_script = TROUPE_BENCH_SOURCE_DIR "/tf_ps_throughput.py";
  int tf_timeout_seconds = 600;
};

Options parse(int argc, char** argv) {
  Options opts;
  CLI::App app(
    "ParameterServerStrategy + ClusterCoordinator: functions scheduled per second and the "
    "push/pull bandwidth of a sharded variable, beside TensorFlow's figures (same run) and "
    "the loopback TCP bandwidth (same run).",
    "ps_throughput");
  app.add_flag("--quick", opts.quick,
               "a smoke test: 1 and 2 workers, few calls, a 4 MiB variable, no TensorFlow unless "
               "--tf on (seconds, not a measurement)");
  app
    .add_option(
      "--cluster", opts.cluster,
      "in-process (LocalCluster: every task a set of actors in this process) or processes "
      "(not yet available)")
    ->check(CLI::IsMember({"in-process", "processes"}));
  app.add_option("--workers", opts.workers, "worker counts, 1 ps each (default 1,2,4)")
    ->delimiter(',')
    ->check(CLI::Range(1, 64));
  app.add_option("--calls", opts.calls, "trivial functions per timed round (default 200)")
    ->check(CLI::Range(1, 1000000));
  app.add_option("--var-calls", opts.var_calls, "variable functions per timed round (default 20)")
    ->check(CLI::Range(1, 100000));
  app.add_option("--var-mib", opts.var_mib, "the variable's size in MiB (default 16)")
    ->check(CLI::Range(1, 1024));
  app
    .add_option("--repeats", opts.repeats,
                "timed rounds per figure, for troupe and TensorFlow (default 7)")
    ->check(CLI::Range(1, 1000));
  app
    .add_option("--tf", opts.tf,
                "run TensorFlow's figures: auto (when --tf-python exists; not with --quick), on "
                "(required), off")
    ->check(CLI::IsMember({"auto", "on", "off"}));
  app
    .add_option("--tf-python", opts.tf_python, "the Python with TensorFlow (default: bench/.venv)")
    ->type_name("PATH");
  app
    .add_option("--tf-script", opts.tf_script,
                "TensorFlow's side (default: bench/tf_ps_throughput.py)")
    ->type_name("PATH");
  app
    .add_option("--tf-timeout", opts.tf_timeout_seconds,
                "seconds one TensorFlow run may take (default 600)")
    ->check(CLI::Range(10, 7200));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e)); // prints the help or the error
  }
  if (opts.quick) {
    if (app.count("--workers") == 0)
      opts.workers = {1, 2};
    if (app.count("--calls") == 0)
      opts.calls = 20;
    if (app.count("--var-calls") == 0)
      opts.var_calls = 3;
    if (app.count("--var-mib") == 0)
      opts.var_mib = 4;
    if (app.count("--repeats") == 0)
      opts.repeats = 2;
  }
  // The variable counts the calls in float32, exact below 2^24.
  const int64_t var_calls_total = int64_t{opts.var_calls} * (opts.repeats + 1) * 2;
  if (var_calls_total >= (int64_t{1} << 24)) {
    std::cerr
      << "ps_throughput: --var-calls " << opts.var_calls << " x (--repeats " << opts.repeats
      << " + 1) x 2 figures = " << var_calls_total
      << " variable functions; the variable counts them exactly in float32 only below 16777216: "
         "lower --var-calls or --repeats\n";
    std::exit(2);
  }
  return opts;
}

// -- the machine and the command line --------------------------------------------------

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

// "load 3.10 2.90 2.70": other work on a shared machine slows every hand-off between threads.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  if (!(in >> one >> five >> fifteen))
    return "load unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "load %.2f %.2f %.2f", one, five, fifteen);
  return buf;
}

std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_of(" \t'\"$\\") == std::string::npos;
    out += (i ? " " : "") + (plain ? arg : "'" + arg + "'");
  }
  return out;
}

// TensorFlow's version from the venv's installed distribution (tensorflow[_cpu]-X.dist-info),
// without paying the seconds of `import tensorflow`.
std::string tensorflow_version(const std::string& python) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto venv = fs::path(python).parent_path().parent_path() / "lib";
  for (const auto& lib : fs::directory_iterator(venv, ec)) {
    const auto site = lib.path() / "site-packages";
    for (const auto& entry : fs::directory_iterator(site, ec)) {
      const auto name = entry.path().filename().string();
      const auto dash = name.find('-');
      if (dash == std::string::npos || !name.ends_with(".dist-info"))
        continue;
      const auto project = name.substr(0, dash);
      if (project == "tensorflow" || project == "tensorflow_cpu" || project == "tensorflow_gpu")
        return name.substr(dash + 1, name.size() - dash - 1 - 10);
    }
  }
  return "unknown version";
}

// -- TensorFlow's figures ----------------------------------------------------------------

// TF_ROW figures of one tf_ps_throughput.py run, by name.
using TfFigures = std::map<std::string, double>;

// The last lines of a child's output, for an error message.
class OutputTail {
public:
  void add(std::string line) {
    lines_.push_back(std::move(line));
    if (lines_.size() > max_lines)
      lines_.erase(lines_.begin());
  }
  [[nodiscard]] std::string text() const {
    std::string out;
    for (const auto& l : lines_)
      out += "\n    " + l;
    return out;
  }

private:
  static constexpr std::size_t max_lines = 20;
  std::vector<std::string> lines_;
};

// Parses "TF_ROW,<figure>,<cluster>,<workers>,<ps>,<value>" into `figures`;
// false for any other line.
bool parse_tf_row(const std::string& line, int workers, int ps, TfFigures& figures) {
  if (!line.starts_with("TF_ROW,"))
    return false;
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');)
    fields.push_back(f);
  if (fields.size() != 6)
    throw std::runtime_error("tf_ps_throughput.py printed a TF_ROW with "
                             + std::to_string(fields.size()) + " fields, expected 6: " + line);
  if (fields[3] != std::to_string(workers) || fields[4] != std::to_string(ps))
    throw std::runtime_error("tf_ps_throughput.py answered for " + fields[3] + " workers, "
                             + fields[4] + " ps; asked for " + std::to_string(workers) + ", "
                             + std::to_string(ps) + ": " + line);
  char* end = nullptr;
  const double value = std::strtod(fields[5].c_str(), &end);
  if (end == fields[5].c_str() || *end != '\0' || !std::isfinite(value))
    throw std::runtime_error("tf_ps_throughput.py printed a value that is not a number: " + line);
  figures[fields[1]] = value;
  return true;
}

// Runs tf_ps_throughput.py for one cluster as a child process (stdout and
// stderr into one pipe), within opts.tf_timeout_seconds; passes its '#' line
// through and returns its figures. Throws, with the child's last lines, when it
// cannot start, fails, runs out of time or prints no figures.
TfFigures run_tensorflow(const Options& opts, int workers, int ps) {
  std::vector<std::string> args{opts.tf_python, opts.tf_script,
                                "--cluster",    "in-process",
                                "--workers",    std::to_string(workers),
                                "--ps",         std::to_string(ps),
                                "--calls",      std::to_string(opts.calls),
                                "--var-calls",  std::to_string(opts.var_calls),
                                "--var-mib",    std::to_string(opts.var_mib),
                                "--repeats",    std::to_string(opts.repeats)};
  const auto child = troupe::bench::spawn_piped(args, true, "pass --tf-python PATH, or --tf off");
  const pid_t pid = child.pid;

  // Read lines until EOF or the deadline; a line longer than 64 KiB is cut
  // there (the child's output is not trusted to be short).
  constexpr std::size_t max_line = std::size_t{64} << 10;
  const auto deadline = Clock::now() + std::chrono::seconds(opts.tf_timeout_seconds);
  TfFigures figures;
  OutputTail tail;
  std::string line;
  std::string error;
  auto take_line = [&] {
    if (line.starts_with("# "))
      std::cout << "#   tf: " << line.substr(2) << std::endl;
    if (error.empty()) {
      try {
        if (!parse_tf_row(line, workers, ps, figures))
          tail.add(line);
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    line.clear();
  };
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{child.out_fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR)
      break;
    if (ready <= 0)
      continue;
    const ssize_t n = ::read(child.out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n')
        take_line();
      else if (line.size() < max_line)
        line.push_back(buf[i]);
    }
  }
  if (!line.empty())
    take_line();
  ::close(child.out_fd);
  if (timed_out)
    ::kill(pid, SIGKILL); // our own child, by its pid
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  const std::string what = opts.tf_script + " --workers " + std::to_string(workers);
  if (timed_out)
    throw std::runtime_error(what + " took more than --tf-timeout "
                             + std::to_string(opts.tf_timeout_seconds)
                             + " s and was killed; its last lines:" + tail.text());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(what + " failed ("
                             + (WIFEXITED(status)
                                  ? "exit status " + std::to_string(WEXITSTATUS(status))
                                  : "signal " + std::to_string(WTERMSIG(status)))
                             + "); its last lines:" + tail.text());
  if (!error.empty())
    throw std::runtime_error(error);
  for (const char* name : {"trivial_per_s", "trivial_pipelined_per_s", "var_per_s", "var_gb_per_s",
                           "var_pipelined_per_s", "var_pipelined_gb_per_s"})
    if (!figures.contains(name))
      throw std::runtime_error(what + " printed no TF_ROW for " + name
                               + "; its last lines:" + tail.text());
  return figures;
}

// -- troupe's figures ----------------------------------------------------------------------

struct VerificationError {
  std::string message;
};

// One figure: the median round time of `calls` functions, and the rounds;
// for the one-at-a-time figures also each call's schedule-to-fetch time.
struct Measured {
  int calls = 0;
  troupe::bench::Summary round_s;
  troupe::bench::Summary call_s;
  [[nodiscard]] double per_second() const {
    return round_s.median > 0 ? calls / round_s.median : 0;
  }
  [[nodiscard]] double per_call_s() const { return calls > 0 ? round_s.median / calls : 0; }
};

// One warm-up round of max(1, calls/4) (as tf_ps_throughput.py), then
// `repeats` timed rounds. A round may record its calls' times in `call_times`.
Measured measure(const std::function<void(int)>& round, int calls, int repeats,
                 std::vector<double>* call_times = nullptr) {
  round(std::max(1, calls / 4));
  if (call_times)
    call_times->clear();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    round(calls);
    times.push_back(seconds_between(t0, Clock::now()));
  }
  Measured m{calls, troupe::bench::summarize(times), {}};
  if (call_times)
    m.call_s = troupe::bench::summarize(*call_times);
  return m;
}

struct ClusterFigures {
  int workers = 0;
  Measured trivial, trivial_pipelined, var, var_pipelined;
  std::size_t var_bytes_per_call = 0;
};

// Runs the four figures on a LocalCluster of `workers` workers and 1 ps.
ClusterFigures measure_troupe(const Options& opts, int workers) {
  troupe::Runtime rt(troupe::LocalCluster{.workers = workers, .ps = 1, .devices_per_worker = 1});
  troupe::ParameterServerStrategy strategy(rt);
  troupe::ClusterCoordinator coordinator(strategy);
  const int64_t elements = int64_t{opts.var_mib} * 1024 * 1024 / 4;
  troupe::ShardedVariable var{nullptr};
  {
    auto scope = strategy.scope();
    var =
      strategy.create_variable(Tensor::zeros({elements}, troupe::DType::float32), {.name = "v"});
  }

  auto trivial = troupe::remote_function("ps_throughput_trivial", [] { return int64_t{1}; });
  // Read on the ps, delta computed on the worker from what was read (the same
  // two element-wise ops as TensorFlow's value * 0.5 + 1.0, but the variable
  // counts the calls exactly: every element = committed calls so far), update
  // on the ps; return one element, not the variable.
  auto read_update = troupe::remote_function("ps_throughput_read_update", [&var] {
    const Tensor value = var.read_value();
    var.assign_add(value * 0.0f + 1.0f);
    return value.data<float>()[0];
  });

  auto check_trivial = [](int64_t got) {
    if (got != 1)
      throw VerificationError{"the trivial function returned " + std::to_string(got)
                              + ", expected 1"};
  };
  int64_t committed = 0; // var calls committed so far = every element of the variable
  auto check_variable = [&] {
    const Tensor value = var.read_value();
    const float* p = value.data<float>();
    for (int64_t i = 0; i < elements; ++i)
      if (p[i] != static_cast<float>(committed))
        throw VerificationError{"after " + std::to_string(committed)
                                + " variable functions, element " + std::to_string(i)
                                + " of the variable is " + std::to_string(p[i])};
  };

  ClusterFigures out;
  out.workers = workers;
  out.var_bytes_per_call = 2 * static_cast<std::size_t>(elements) * sizeof(float);
  std::vector<double> call_times;
  call_times.reserve(static_cast<std::size_t>(opts.repeats) * static_cast<std::size_t>(opts.calls));
  out.trivial = measure(
    [&](int calls) {
      for (int i = 0; i < calls; ++i) {
        const auto t0 = Clock::now();
        check_trivial(coordinator.schedule(trivial).fetch());
        call_times.push_back(seconds_between(t0, Clock::now()));
      }
    },
    opts.calls, opts.repeats, &call_times);
  out.trivial_pipelined = measure(
    [&](int calls) {
      std::vector<troupe::RemoteValue<int64_t>> results;
      results.reserve(static_cast<std::size_t>(calls));
      for (int i = 0; i < calls; ++i)
        results.push_back(coordinator.schedule(trivial));
      coordinator.join();
      for (auto& r : results)
        check_trivial(r.fetch());
    },
    opts.calls, opts.repeats);
  // Inside the timed rounds each call's check is one comparison; the whole
  // variable is checked between the figures.
  out.var = measure(
    [&](int calls) {
      for (int i = 0; i < calls; ++i) {
        const auto t0 = Clock::now();
        const float seen = coordinator.schedule(read_update).fetch();
        call_times.push_back(seconds_between(t0, Clock::now()));
        if (seen != static_cast<float>(committed))
          throw VerificationError{"a variable function read " + std::to_string(seen) + " after "
                                  + std::to_string(committed) + " committed calls"};
        ++committed;
      }
    },
    opts.var_calls, opts.repeats, &call_times);
  check_variable();
  out.var_pipelined = measure(
    [&](int calls) {
      std::vector<troupe::RemoteValue<float>> results;
      results.reserve(static_cast<std::size_t>(calls));
      for (int i = 0; i < calls; ++i)
        results.push_back(coordinator.schedule(read_update));
      coordinator.join();
      // Functions on other workers may commit in any order: each read counts
      // some of this round's commits, never more than all of them.
      for (auto& r : results) {
        const float seen = r.fetch();
        if (seen < static_cast<float>(committed) || seen >= static_cast<float>(committed + calls))
          throw VerificationError{"a pipelined variable function read " + std::to_string(seen)
                                  + "; this round started at " + std::to_string(committed)
                                  + " and ran " + std::to_string(calls)};
      }
      committed += calls;
    },
    opts.var_calls, opts.repeats);
  check_variable();
  return out;
}

// -- the loopback limit ------------------------------------------------------------------

// Raw TCP over 127.0.0.1 between two threads of this process (the same kernel
// path as between two processes).
troupe::bench::LoopbackFigures probe_loopback(bool quick) {
  troupe::bench::LoopbackOptions options;
  if (quick) {
    options.stream_bytes = std::size_t{16} << 20;
    options.stream_repetitions = 3;
    options.ping_repetitions = 50;
  }
  auto server = troupe::bench::LoopbackProbe::listen(options);
  std::exception_ptr server_error;
  std::thread serving([&] {
    try {
      (void)server.run();
    } catch (...) {
      server_error = std::current_exception();
    }
  });
  troupe::bench::LoopbackFigures figures;
  std::exception_ptr client_error;
  try {
    figures = troupe::bench::LoopbackProbe::connect(server.port(), options).run();
  } catch (...) {
    client_error = std::current_exception();
  }
  serving.join();
  if (client_error)
    std::rethrow_exception(client_error);
  if (server_error)
    std::rethrow_exception(server_error);
  return figures;
}

// -- output ----------------------------------------------------------------------------------

std::string columns() {
  return "# "
         "PS_ROW,system,cluster,workers,ps,figure,value,unit,median_us_per_call,tf_value,troupe_"
         "over_tf,"
         "loopback_GBps,over_loopback";
}

std::string format_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// One PS_ROW; `tf` and `loopback` are absent where they do not apply or were not measured ("-").
std::string ps_row(int workers, const std::string& figure, double value, const char* unit,
                   double per_call_s, std::optional<double> tf,
                   std::optional<double> loopback_bytes_per_second) {
  std::string row = "PS_ROW,troupe,in-process," + std::to_string(workers) + ",1," + figure + ","
                    + format_value(value) + "," + unit + "," + format_value(per_call_s * 1e6) + ",";
  row +=
    tf ? format_value(*tf) + "," + format_value(*tf > 0 ? value / *tf : 0) : std::string("-,-");
  row += ",";
  row += loopback_bytes_per_second ? format_value(*loopback_bytes_per_second / 1e9) + ","
                                       + format_value(value / (*loopback_bytes_per_second / 1e9))
                                   : std::string("-,-");
  return row;
}

std::optional<double> tf_figure(const std::optional<TfFigures>& tf, const char* name) {
  if (!tf)
    return std::nullopt;
  return tf->at(name);
}

void print_detail(const char* figure, const Measured& m) {
  char line[384];
  int n = std::snprintf(
    line, sizeof line,
    "#   %-18s %d calls/round, %zu rounds: round median %.2f ms (min %.2f, max %.2f) = %.1f "
    "us/call",
    figure, m.calls, m.round_s.count, m.round_s.median * 1e3, m.round_s.min * 1e3,
    m.round_s.max * 1e3, m.per_call_s() * 1e6);
  if (m.call_s.count > 0 && n > 0 && static_cast<std::size_t>(n) < sizeof line)
    std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n),
                  "; each call p10 %.1f, median %.1f, p90 %.1f, max %.1f us", m.call_s.p10 * 1e6,
                  m.call_s.median * 1e6, m.call_s.p90 * 1e6, m.call_s.max * 1e6);
  std::cout << line << std::endl;
}

struct Target {
  std::string what;
  double ratio;
  double wanted;
};

int run(const Options& opts, int argc, char** argv) {
  const auto wall0 = Clock::now();
  const bool tf_present = std::filesystem::exists(opts.tf_python);
  const bool run_tf = opts.tf == "on" || (opts.tf == "auto" && tf_present && !opts.quick);
  if (opts.tf == "on" && !tf_present)
    throw std::invalid_argument("--tf on: " + opts.tf_python
                                + " does not exist (create bench/.venv with TensorFlow, pass "
                                  "--tf-python PATH, or --tf off)");
  const std::string tf_name =
    run_tf ? "TensorFlow " + tensorflow_version(opts.tf_python) : "TensorFlow not run";

  std::cout
    << "# ps_throughput: " << cpu_model() << ", " << std::thread::hardware_concurrency()
    << " hardware threads, " << load_average() << "; " << tf_name
    << "; command: " << command_line(argc, argv) << "\n"
    << "# cluster in-process: troupe's LocalCluster runs the coordinator, workers and ps as actors "
       "of\n"
    << "#   this process, so the variable's bytes do NOT cross TCP (they are copied in memory);\n"
    << "#   TensorFlow's in-process cluster runs its servers in one Python process but talks gRPC\n"
    << "#   over localhost TCP. The cross-process figure comes with --cluster processes (not yet\n"
    << "#   available). The loopback limit is raw TCP over 127.0.0.1 measured in this run.\n"
    << "# scheduler: " << troupe::knobs().idle_polls
    << " idle polls before a CAF thread sleeps (TROUPE_IDLE_POLLS); on a loaded machine the\n"
    << "#   one-at-a-time figures depend on it (a polling thread holds its core while the thread\n"
    << "#   it waits for is queued): compare 'each call' medians with the load above\n"
    << "# figures: median of " << opts.repeats << " timed rounds after a warm-up round; "
    << opts.calls << " trivial / " << opts.var_calls << " x " << opts.var_mib
    << " MiB variable functions per round; every result verified\n";
  if (opts.quick)
    std::cout << "# --quick: a smoke test, not a measurement\n";
  if (!run_tf)
    std::cout << "# note: TensorFlow's figures are not run ("
              << (opts.tf == "off" ? "--tf off"
                  : opts.quick     ? "--quick; pass --tf on to run them"
                                   : opts.tf_python
                                   + " is missing: create bench/.venv with TensorFlow or "
                                     "pass --tf-python PATH")
              << "); tf_value and troupe_over_tf are '-'\n";
  std::cout.flush();

  troupe::bench::CopyProbe copy(std::size_t{64} << 20);
  const double copy_before = copy.once();
  const auto loop_before = probe_loopback(opts.quick);
  std::printf("# loopback before: stream %.3f GB/s, duplex %.3f GB/s/dir, 4 KiB rtt %.1f us; "
              "memcpy %.2f GB/s "
              "(read+write)\n",
              loop_before.stream_bytes_per_second / 1e9, loop_before.duplex_bytes_per_second / 1e9,
              loop_before.round_trip_s.median * 1e6, copy_before / 1e9);
  std::fflush(stdout);

  std::vector<ClusterFigures> troupe_figures;
  std::vector<std::optional<TfFigures>> tf_figures;
  for (int workers : opts.workers) {
    std::cout << "# --- " << workers << " worker" << (workers > 1 ? "s" : "") << ", 1 ps"
              << std::endl;
    const auto t0 = Clock::now();
    auto figures = measure_troupe(opts, workers);
    std::printf("#   troupe (%.1f s):\n", seconds_between(t0, Clock::now()));
    print_detail("trivial", figures.trivial);
    print_detail("trivial_pipelined", figures.trivial_pipelined);
    print_detail("var", figures.var);
    print_detail("var_pipelined", figures.var_pipelined);
    std::fflush(stdout);
    troupe_figures.push_back(figures);
    if (run_tf) {
      const auto t1 = Clock::now();
      tf_figures.push_back(run_tensorflow(opts, workers, 1));
      std::printf("#   tensorflow (%.1f s, Python start and tracing included)\n",
                  seconds_between(t1, Clock::now()));
    } else {
      tf_figures.emplace_back();
    }
  }

  const double copy_after = copy.once();
  const auto loop_after = probe_loopback(opts.quick);
  std::printf("# loopback after: stream %.3f GB/s, duplex %.3f GB/s/dir, 4 KiB rtt %.1f us; memcpy "
              "%.2f GB/s\n",
              loop_after.stream_bytes_per_second / 1e9, loop_after.duplex_bytes_per_second / 1e9,
              loop_after.round_trip_s.median * 1e6, copy_after / 1e9);
  // The VM's bandwidth drifts: the limit is the mean of both probes.
  const double loopback =
    (loop_before.stream_bytes_per_second + loop_after.stream_bytes_per_second) / 2;

  std::cout
    << columns() << "\n"
    << "#   value in unit (functions/s or GB/s, bytes = read + update = 2 x the variable);\n"
    << "#   tf_value = TensorFlow's same figure in this run, troupe_over_tf = value / tf_value;\n"
    << "#   loopback_GBps = raw TCP over 127.0.0.1 (one direction, mean of the probes before and\n"
    << "#   after); over_loopback = value / loopback (the bytes did not cross TCP, see above)\n";
  std::vector<Target> targets;
  for (std::size_t i = 0; i < troupe_figures.size(); ++i) {
    const auto& f = troupe_figures[i];
    const auto& tf = tf_figures[i];
    const double bytes = static_cast<double>(f.var_bytes_per_call);
    const int w = f.workers;
    std::cout << ps_row(w, "trivial_per_s", f.trivial.per_second(), "fn/s", f.trivial.per_call_s(),
                        tf_figure(tf, "trivial_per_s"), std::nullopt)
              << "\n"
              << ps_row(w, "trivial_pipelined_per_s", f.trivial_pipelined.per_second(), "fn/s",
                        f.trivial_pipelined.per_call_s(), tf_figure(tf, "trivial_pipelined_per_s"),
                        std::nullopt)
              << "\n"
              << ps_row(w, "var_per_s", f.var.per_second(), "fn/s", f.var.per_call_s(),
                        tf_figure(tf, "var_per_s"), std::nullopt)
              << "\n"
              << ps_row(w, "var_gb_per_s", f.var.per_second() * bytes / 1e9, "GB/s",
                        f.var.per_call_s(), tf_figure(tf, "var_gb_per_s"), loopback)
              << "\n"
              << ps_row(w, "var_pipelined_per_s", f.var_pipelined.per_second(), "fn/s",
                        f.var_pipelined.per_call_s(), tf_figure(tf, "var_pipelined_per_s"),
                        std::nullopt)
              << "\n"
              << ps_row(w, "var_pipelined_gb_per_s", f.var_pipelined.per_second() * bytes / 1e9,
                        "GB/s", f.var_pipelined.per_call_s(),
                        tf_figure(tf, "var_pipelined_gb_per_s"), loopback)
              << "\n";
    if (tf) {
      const std::string at = ",workers=" + std::to_string(w);
      targets.push_back(
        {"trivial_per_s>=10x_tf" + at, f.trivial.per_second() / tf->at("trivial_per_s"), 10});
      targets.push_back({"trivial_pipelined_per_s>=10x_tf" + at,
                         f.trivial_pipelined.per_second() / tf->at("trivial_pipelined_per_s"), 10});
      targets.push_back(
        {"var_gb_per_s>=tf" + at, f.var.per_second() * bytes / 1e9 / tf->at("var_gb_per_s"), 1});
    }
    targets.push_back({"var_gb_per_s>=0.5_loopback,workers=" + std::to_string(w),
                       f.var.per_second() * bytes / loopback, 0.5});
  }

  // The same variable figures in STYLE.md's ROW format (bytes = per call,
  // median_us = per call, limit = loopback TCP).
  std::cout << troupe::bench::row_columns() << "\n";
  for (std::size_t i = 0; i < troupe_figures.size(); ++i) {
    const auto& f = troupe_figures[i];
    for (const auto* m : {&f.var, &f.var_pipelined}) {
      troupe::bench::Row row{"troupe",        m == &f.var ? "in-process" : "in-process-pipelined",
                             f.workers,       f.var_bytes_per_call,
                             m->per_call_s(), 1,
                             loopback};
      std::cout << troupe::bench::format_row(row) << "\n";
    }
    if (const auto& tf = tf_figures[i]) {
      for (const char* name : {"var_per_s", "var_pipelined_per_s"}) {
        troupe::bench::Row row{"tensorflow",
                               name == std::string("var_per_s") ? "grpc-in-process"
                                                                : "grpc-in-process-pipelined",
                               f.workers,
                               f.var_bytes_per_call,
                               1 / tf->at(name),
                               1,
                               loopback};
        std::cout << troupe::bench::format_row(row) << "\n";
      }
    }
  }

  if (!opts.quick)
    for (const auto& t : targets) {
      std::printf("TARGET,%s,ratio=%.3f,%s\n", t.what.c_str(), t.ratio,
                  t.ratio >= t.wanted ? "met" : "missed");
    }
  std::printf("# total %.1f s, %s\n", seconds_between(wall0, Clock::now()), load_average().c_str());
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    const auto opts = parse(argc, argv);
    if (opts.cluster == "processes") {
      // TODO(issue 15): the cross-process figures — a chief driving worker and
      // ps processes started by troupe-launch (rt.serve() runs them).
      std::cerr
        << "ps_throughput: --cluster processes is not yet available: this bench measures a "
           "LocalCluster only so far; use --cluster in-process\n";
      return 2;
    }
    return run(opts, argc, argv);
  } catch (const VerificationError& e) {
    std::cout.flush();
    std::cerr << "ps_throughput: VERIFICATION FAILED: " << e.message << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "ps_throughput: " << e.what() << "\n";
    return 2;
  }
}

// Benchmark of ParameterServerStrategy + ClusterCoordinator: functions
// scheduled per second and the push/pull bandwidth of a sharded variable,
// beside TensorFlow's figures for the same workload taken in the same run
// (bench/tf_ps_throughput.py, run as a child process) and beside the loopback
// TCP bandwidth measured in the same run (bench/loopback_probe).
//
//   ps_throughput [--quick] [--workers 1,2,4] [--calls 200] [--var-calls 20]
//                 [--var-mib 16] [--repeats 7] [--tf auto|on|off] [--tf-python PATH]
//                 [--cluster in-process|processes] [--launcher PATH]
//
// --cluster in-process: a LocalCluster, the coordinator, workers and ps as
//   actors of this process (the variable's bytes are copied in memory, not sent
//   over TCP); TensorFlow's side: tf_ps_throughput.py --cluster in-process, its
//   servers in one Python process talking gRPC over localhost TCP.
// --cluster processes: for each worker count W this program (the driver, started
//   without TF_CONFIG) runs `troupe-launch --workers W --ps 1 -- ps_throughput
//   <the same figures' options> --role task`. The launcher adds the chief: it
//   times the figures and prints them as PS_MEASURED lines, which the driver
//   reads; the W worker and the ps processes serve it (rt.serve()), so every
//   variable function's read and update cross loopback TCP. TensorFlow's side:
//   tf_ps_throughput.py --cluster processes, one Python process per worker and
//   ps server, the coordinator in the script's own process.
// Either way the driver probes loopback TCP before and after, runs TensorFlow
// and prints the rows.
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
#include <charconv>
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
#include <set>
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
#ifndef TROUPE_LAUNCH_PROGRAM
#define TROUPE_LAUNCH_PROGRAM "troupe-launch"
#endif


namespace {

using troupe::Tensor;
using troupe::bench::Clock;
using troupe::bench::cpu_model;
using troupe::bench::describe_status;
using troupe::bench::load_average;
using troupe::bench::seconds_between;
using troupe::bench::wait_for_child;

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
  std::string launcher = TROUPE_LAUNCH_PROGRAM;
  int cluster_timeout_seconds = 900;
  bool task = false; // --role task: one process of a cluster started by troupe-launch
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
      "(troupe-launch starts a chief, the workers and 1 ps as processes on 127.0.0.1)")
    ->check(CLI::IsMember({"in-process", "processes"}));
  app
    .add_option("--launcher", opts.launcher,
                "with --cluster processes: the troupe-launch to run (default: the built one)")
    ->type_name("PATH");
  app
    .add_option("--cluster-timeout", opts.cluster_timeout_seconds,
                "with --cluster processes: seconds one cluster may take (default 900)")
    ->check(CLI::Range(10, 7200));
  std::string role;
  app
    .add_option("--role", role,
                "driver (runs troupe-launch itself) or task (one process of a --cluster processes "
                "cluster, TF_CONFIG set by troupe-launch; the chief measures on the cluster's "
                "workers and --workers and --tf do not apply); default: task when TF_CONFIG is "
                "set and --cluster processes, else driver")
    ->check(CLI::IsMember({"driver", "task"}));
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
  const char* tf_config = std::getenv("TF_CONFIG");
  const bool has_tf_config = tf_config != nullptr && *tf_config != '\0';
  opts.task = role.empty() ? has_tf_config && opts.cluster == "processes" : role == "task";
  if (opts.task && (opts.cluster != "processes" || !has_tf_config)) {
    std::cerr << "ps_throughput: --role task is one process of the cluster that ps_throughput "
                 "--cluster processes starts with troupe-launch, but here "
              << (opts.cluster != "processes" ? "--cluster is in-process" : "TF_CONFIG is not set")
              << ": run ps_throughput --cluster processes without --role and it starts "
                 "troupe-launch itself\n";
    std::exit(2);
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

// -- the command line ------------------------------------------------------------------

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
// false for any other line. Throws when it answers another cluster than asked.
bool parse_tf_row(const std::string& line, const std::string& cluster, int workers, int ps,
                  TfFigures& figures) {
  if (!line.starts_with("TF_ROW,"))
    return false;
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');)
    fields.push_back(f);
  if (fields.size() != 6)
    throw std::runtime_error("tf_ps_throughput.py printed a TF_ROW with "
                             + std::to_string(fields.size()) + " fields, expected 6: " + line);
  if (fields[2] != cluster)
    throw std::runtime_error("tf_ps_throughput.py answered for a " + fields[2]
                             + " cluster; asked for " + cluster + ": " + line);
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

// -- child processes ---------------------------------------------------------------------

// Reads `fd` line by line until EOF or `deadline`, calling `on_line` for each
// line without its newline; a line longer than 64 KiB is cut there (a child's
// output is not trusted to be short). Closes `fd`. False when the deadline
// came first.
bool read_lines(int fd, Clock::time_point deadline,
                const std::function<void(const std::string&)>& on_line) {
  constexpr std::size_t max_line = std::size_t{64} << 10;
  std::string line;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR)
      break;
    if (ready <= 0)
      continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        on_line(line);
        line.clear();
      } else if (line.size() < max_line) {
        line.push_back(buf[i]);
      }
    }
  }
  if (!line.empty())
    on_line(line);
  ::close(fd);
  return !timed_out;
}

bool exited_zero(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Runs tf_ps_throughput.py for one cluster of the kind --cluster names as a
// child process (stdout and stderr into one pipe), within
// opts.tf_timeout_seconds; passes its '#' line through and returns its
// figures. Throws, with the child's last lines, when it cannot start, fails,
// runs out of time or prints no figures.
TfFigures run_tensorflow(const Options& opts, int workers, int ps) {
  std::vector<std::string> args{opts.tf_python, opts.tf_script,
                                "--cluster",    opts.cluster,
                                "--workers",    std::to_string(workers),
                                "--ps",         std::to_string(ps),
                                "--calls",      std::to_string(opts.calls),
                                "--var-calls",  std::to_string(opts.var_calls),
                                "--var-mib",    std::to_string(opts.var_mib),
                                "--repeats",    std::to_string(opts.repeats)};
  const auto child = troupe::bench::spawn_piped(args, true, "pass --tf-python PATH, or --tf off");

  TfFigures figures;
  OutputTail tail;
  std::string error;
  const bool in_time = read_lines(
    child.out_fd, Clock::now() + std::chrono::seconds(opts.tf_timeout_seconds),
    [&](const std::string& line) {
      if (line.starts_with("# "))
        std::cout << "#   tf: " << line.substr(2) << std::endl;
      if (!error.empty())
        return;
      try {
        if (!parse_tf_row(line, opts.cluster, workers, ps, figures))
          tail.add(line);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
  const int status = wait_for_child(child.pid, !in_time);
  const std::string what = opts.tf_script + " --workers " + std::to_string(workers);
  if (!in_time)
    throw std::runtime_error(what + " took more than --tf-timeout "
                             + std::to_string(opts.tf_timeout_seconds)
                             + " s and was killed; its last lines:" + tail.text());
  if (!exited_zero(status))
    throw std::runtime_error(what + " failed (" + describe_status(status)
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

// Builds the strategy, the variable and the two functions on `rt`, then times
// the four figures on the coordinator. Across processes every task builds
// them, in this order (a worker finds a function by its name, the chief
// creates the variable's shard on the ps); a worker or ps task then serves the
// chief instead of measuring: nullopt, with rt.serve()'s status in
// `serve_status`.
std::optional<ClusterFigures> measure_troupe(troupe::Runtime& rt, const Options& opts,
                                             int& serve_status) {
  const int workers = rt.num_tasks("worker");
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
  if (rt.task_type() == "worker" || rt.task_type() == "ps") {
    serve_status = rt.serve();
    return std::nullopt;
  }

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

// The four figures on a LocalCluster of `workers` workers and 1 ps.
ClusterFigures measure_in_process(const Options& opts, int workers) {
  troupe::Runtime rt(troupe::LocalCluster{.workers = workers, .ps = 1, .devices_per_worker = 1});
  int serve_status = 0;
  return *measure_troupe(rt, opts, serve_status); // this process is the coordinator
}

// -- across processes: the chief's figures, from the chief to the driver --------------------

// "PS_MEASURED,<workers>,<var bytes per call>,<figure>,<calls>,<round summary>,<call summary>",
// each summary "count,min,p10,median,p90,max" in seconds, printed exactly (%.17g).
constexpr const char* measured_tag = "PS_MEASURED";
constexpr std::size_t measured_fields = 17;

std::string format_summary(const troupe::bench::Summary& s) {
  char buf[192];
  std::snprintf(buf, sizeof buf, "%zu,%.17g,%.17g,%.17g,%.17g,%.17g", s.count, s.min, s.p10,
                s.median, s.p90, s.max);
  return buf;
}

std::vector<std::string> measured_lines(const ClusterFigures& f) {
  std::vector<std::string> lines;
  const std::pair<const char*, const Measured*> figures[] = {
    {"trivial", &f.trivial},
    {"trivial_pipelined", &f.trivial_pipelined},
    {"var", &f.var},
    {"var_pipelined", &f.var_pipelined}};
  for (const auto& [name, m] : figures)
    lines.push_back(std::string(measured_tag) + "," + std::to_string(f.workers) + ","
                    + std::to_string(f.var_bytes_per_call) + "," + name + ","
                    + std::to_string(m->calls) + "," + format_summary(m->round_s) + ","
                    + format_summary(m->call_s));
  return lines;
}

// A whole non-negative number of at most `max`, or throws naming the line.
uint64_t parse_count(const std::string& text, uint64_t max, const std::string& line) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value > max)
    throw std::runtime_error("the chief printed a PS_MEASURED line with the count '" + text
                             + "' (at most " + std::to_string(max) + "): " + line);
  return value;
}

// Seconds: finite and non-negative, or throws naming the line.
double parse_seconds(const std::string& text, const std::string& line) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0)
    throw std::runtime_error("the chief printed a PS_MEASURED line with the time '" + text
                             + "': " + line);
  return value;
}

// Parses a PS_MEASURED line of a `workers`-worker cluster into `figures`
// (adding the figure's name to `seen`); false for any other line.
bool parse_measured_line(const std::string& line, int workers, ClusterFigures& figures,
                         std::set<std::string>& seen) {
  if (!line.starts_with(std::string(measured_tag) + ","))
    return false;
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',') && fields.size() <= measured_fields;)
    fields.push_back(f);
  if (fields.size() != measured_fields)
    throw std::runtime_error("the chief printed a PS_MEASURED line with other than "
                             + std::to_string(measured_fields) + " fields: " + line);
  if (fields[1] != std::to_string(workers))
    throw std::runtime_error("the chief measured " + fields[1] + " workers; the cluster has "
                             + std::to_string(workers) + ": " + line);
  Measured* m = fields[3] == "trivial"             ? &figures.trivial
                : fields[3] == "trivial_pipelined" ? &figures.trivial_pipelined
                : fields[3] == "var"               ? &figures.var
                : fields[3] == "var_pipelined"     ? &figures.var_pipelined
                                                   : nullptr;
  if (m == nullptr)
    throw std::runtime_error("the chief printed a PS_MEASURED line for an unknown figure: " + line);
  figures.workers = workers;
  figures.var_bytes_per_call = parse_count(fields[2], uint64_t{1} << 40, line);
  m->calls = static_cast<int>(parse_count(fields[4], 1000000, line));
  auto summary = [&](std::size_t first) {
    troupe::bench::Summary s;
    s.count = parse_count(fields[first], uint64_t{1} << 32, line);
    s.min = parse_seconds(fields[first + 1], line);
    s.p10 = parse_seconds(fields[first + 2], line);
    s.median = parse_seconds(fields[first + 3], line);
    s.p90 = parse_seconds(fields[first + 4], line);
    s.max = parse_seconds(fields[first + 5], line);
    return s;
  };
  m->round_s = summary(5);
  m->call_s = summary(11);
  seen.insert(fields[3]);
  return true;
}

// One process of a --cluster processes cluster (TF_CONFIG from troupe-launch):
// the chief measures and prints PS_MEASURED lines; a worker or ps task serves it.
int run_task(const Options& opts) {
  troupe::Runtime rt(troupe::ClusterResolver::from_env(), {.logical_cpu_devices = 1});
  if (rt.num_tasks("chief") != 1 || rt.num_tasks("ps") != 1)
    throw std::invalid_argument(
      "TF_CONFIG describes a cluster with " + std::to_string(rt.num_tasks("chief")) + " chief and "
      + std::to_string(rt.num_tasks("ps"))
      + " ps tasks; this bench measures 1 chief and 1 ps: start it as troupe-launch --workers W "
        "--ps 1 -- ps_throughput --cluster processes --role task (or run ps_throughput "
        "--cluster processes, which does that)");
  int serve_status = 0;
  const auto figures = measure_troupe(rt, opts, serve_status);
  if (!figures)
    return serve_status;
  for (const auto& line : measured_lines(*figures))
    std::cout << line << "\n";
  std::cout.flush();
  return 0;
}

// -- across processes: the driver ---------------------------------------------------------

// A cluster run that failed: the launcher's status, reported with exit status 1.
struct ClusterRunError {
  std::string message;
};

std::string self_path(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

// Fails before any measurement when --launcher cannot be run.
void check_launcher(const Options& opts) {
  if (::access(opts.launcher.c_str(), X_OK) != 0)
    throw std::invalid_argument("--launcher " + opts.launcher + ": " + std::strerror(errno)
                                + " (build the troupe-launch target or pass --launcher PATH)");
}

// Runs `troupe-launch --workers W --ps 1 -- <this program> ... --role task`
// and returns the chief's figures. Passes the chief's other lines (and the
// other tasks') through as '#' lines; the tasks' stderr passes through as the
// launcher prefixes it. Throws ClusterRunError with the launcher's status when
// the cluster fails.
ClusterFigures measure_in_processes(const Options& opts, int workers, const std::string& self) {
  std::vector<std::string> args{opts.launcher,
                                "--workers",
                                std::to_string(workers),
                                "--ps",
                                "1",
                                "--timeout-seconds",
                                std::to_string(opts.cluster_timeout_seconds),
                                "--",
                                self,
                                "--cluster",
                                "processes",
                                "--role",
                                "task",
                                "--calls",
                                std::to_string(opts.calls),
                                "--var-calls",
                                std::to_string(opts.var_calls),
                                "--var-mib",
                                std::to_string(opts.var_mib),
                                "--repeats",
                                std::to_string(opts.repeats)};
  const auto child = troupe::bench::spawn_piped(
    args, false, "build the troupe-launch target or pass --launcher PATH");

  const std::string chief = "[chief:0] ";
  ClusterFigures figures;
  std::set<std::string> seen;
  std::string error;
  // The launcher ends the cluster at its own --timeout-seconds; this deadline
  // only guards against a launcher that does not.
  const bool in_time = read_lines(
    child.out_fd, Clock::now() + std::chrono::seconds(opts.cluster_timeout_seconds + 60),
    [&](const std::string& line) {
      std::string text = line.starts_with(chief) ? line.substr(chief.size()) : line;
      if (line.starts_with(chief) && error.empty()) {
        try {
          if (parse_measured_line(text, workers, figures, seen))
            return;
        } catch (const std::exception& e) {
          error = e.what();
        }
      }
      std::cout << (text.starts_with("#") ? "" : "#   ") << text << std::endl;
    });
  const int status = wait_for_child(child.pid, !in_time);
  const std::string what = "the " + std::to_string(workers) + "-worker cluster";
  if (!in_time)
    throw ClusterRunError{what + ": " + opts.launcher + " ran past --cluster-timeout "
                          + std::to_string(opts.cluster_timeout_seconds)
                          + " s + 60 s and was killed"};
  if (!exited_zero(status))
    throw ClusterRunError{
      what + " failed: " + opts.launcher + " ended with " + describe_status(status)
      + (WIFEXITED(status) && WEXITSTATUS(status) == 124
           ? " (--cluster-timeout " + std::to_string(opts.cluster_timeout_seconds) + " s ran out)"
           : " (for a parameter-server cluster troupe-launch exits with the chief's status; "
             "its lines above name the failed task)")};
  if (!error.empty())
    throw std::runtime_error(what + ": " + error);
  if (seen.size() != 4)
    throw std::runtime_error(what + ": the chief exited 0 after PS_MEASURED lines for "
                             + std::to_string(seen.size()) + " of the 4 figures");
  return figures;
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
std::string ps_row(const std::string& cluster, int workers, const std::string& figure,
                   double value, const char* unit, double per_call_s, std::optional<double> tf,
                   std::optional<double> loopback_bytes_per_second) {
  std::string row = "PS_ROW,troupe," + cluster + "," + std::to_string(workers) + ",1," + figure
                    + "," + format_value(value) + "," + unit + ","
                    + format_value(per_call_s * 1e6) + ",";
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

// What --cluster measures, for the header.
std::string cluster_note(const Options& opts) {
  if (opts.cluster == "processes")
    return "# cluster processes: " + opts.launcher
           + " starts a chief (the coordinator, which times\n"
             "#   the figures), the workers and 1 ps as processes on 127.0.0.1: each variable\n"
             "#   function's read (ps -> worker) and update (worker -> ps) cross loopback TCP.\n"
             "#   TensorFlow's side: tf_ps_throughput.py --cluster processes, one Python process\n"
             "#   per worker and ps server (gRPC over localhost TCP), its coordinator in the\n"
             "#   script's process.\n";
  return "# cluster in-process: troupe's LocalCluster runs the coordinator, workers and ps as\n"
         "#   actors of this process, so the variable's bytes do NOT cross TCP (they are copied\n"
         "#   in memory); TensorFlow's in-process cluster runs its servers in one Python process\n"
         "#   but talks gRPC over localhost TCP. The cross-process figures come with --cluster\n"
         "#   processes.\n";
}

struct Target {
  std::string what;
  double ratio;
  double wanted;
};

int run(const Options& opts, int argc, char** argv) {
  const auto wall0 = Clock::now();
  const bool processes = opts.cluster == "processes";
  const std::string self = self_path(argv[0]);
  if (processes)
    check_launcher(opts);
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
    << cluster_note(opts)
    << "#   The loopback limit is raw TCP over 127.0.0.1 between two threads of this process (the\n"
    << "#   same kernel path as between processes), measured in this run.\n"
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
    auto figures = processes ? measure_in_processes(opts, workers, self)
                             : measure_in_process(opts, workers);
    std::printf("#   troupe (%.1f s%s):\n", seconds_between(t0, Clock::now()),
                processes ? ", the processes' start included" : "");
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
    << "#   after); over_loopback = value / loopback"
    << (processes ? "\n" : " (the bytes did not cross TCP, see above)\n");
  std::vector<Target> targets;
  for (std::size_t i = 0; i < troupe_figures.size(); ++i) {
    const auto& f = troupe_figures[i];
    const auto& tf = tf_figures[i];
    const double bytes = static_cast<double>(f.var_bytes_per_call);
    const int w = f.workers;
    // A figure's row: TensorFlow's same figure beside it, and for GB/s the loopback limit.
    auto row = [&](const char* figure, double value, const char* unit, const Measured& m,
                   bool against_loopback) {
      std::cout << ps_row(opts.cluster, w, figure, value, unit, m.per_call_s(),
                          tf_figure(tf, figure),
                          against_loopback ? std::optional<double>(loopback) : std::nullopt)
                << "\n";
    };
    row("trivial_per_s", f.trivial.per_second(), "fn/s", f.trivial, false);
    row("trivial_pipelined_per_s", f.trivial_pipelined.per_second(), "fn/s", f.trivial_pipelined,
        false);
    row("var_per_s", f.var.per_second(), "fn/s", f.var, false);
    row("var_gb_per_s", f.var.per_second() * bytes / 1e9, "GB/s", f.var, true);
    row("var_pipelined_per_s", f.var_pipelined.per_second(), "fn/s", f.var_pipelined, false);
    row("var_pipelined_gb_per_s", f.var_pipelined.per_second() * bytes / 1e9, "GB/s",
        f.var_pipelined, true);
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
  // median_us = per call, limit = loopback TCP); transport in-process (memory
  // copies) or tcp-processes, TensorFlow's grpc-<cluster>.
  const std::string transport = processes ? "tcp-processes" : "in-process";
  std::cout << troupe::bench::row_columns() << "\n";
  for (std::size_t i = 0; i < troupe_figures.size(); ++i) {
    const auto& f = troupe_figures[i];
    for (const auto* m : {&f.var, &f.var_pipelined}) {
      troupe::bench::Row row{"troupe",        m == &f.var ? transport : transport + "-pipelined",
                             f.workers,       f.var_bytes_per_call,
                             m->per_call_s(), 1,
                             loopback};
      std::cout << troupe::bench::format_row(row) << "\n";
    }
    if (const auto& tf = tf_figures[i]) {
      for (const char* name : {"var_per_s", "var_pipelined_per_s"}) {
        troupe::bench::Row row{"tensorflow",
                               "grpc-" + opts.cluster
                                 + (name == std::string("var_per_s") ? "" : "-pipelined"),
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
  std::string who = "ps_throughput";
  try {
    const auto opts = parse(argc, argv);
    if (opts.task) {
      if (const char* task = std::getenv("TROUPE_TASK_NAME"))
        who += std::string(" (") + task + ")";
      return run_task(opts);
    }
    return run(opts, argc, argv);
  } catch (const VerificationError& e) {
    std::cout.flush();
    std::cerr << who << ": VERIFICATION FAILED: " << e.message << "\n";
    return 1;
  } catch (const ClusterRunError& e) {
    std::cout.flush();
    std::cerr << who << ": " << e.message << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << who << ": " << e.what() << "\n";
    return 2;
  }
}

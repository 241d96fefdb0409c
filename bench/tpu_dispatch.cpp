// Host dispatch cost per step of TPUStrategy on emulated TPU cores (issue 11),
// beside MirroredStrategy on as many logical CPU devices, in the same run.
//
//   tpu_dispatch [--quick] [--cores 8] [--steps-per-run 1,10,100] [--steps 2000]
//                [--repeats 7] [--no-all-reduce] [--only TEXT]
//
// Every figure steps one pass over a distributed dataset of static batches,
// Dataset::range(steps x cores).batch(cores, drop_remainder=true): one int64
// element per replica per step. The replica function is trivial: it reads
// its element and adds it to its replica's tally (no tensor is made). Figures:
//   TPUStrategy run_steps_on_iterator(k)  tpu.extended().experimental_run_steps_on_iterator(fn, it)
//                                         with steps_per_run k: one host round trip per k steps
//   TPUStrategy run        tpu.run(fn, it.get_next()) per step (one round trip each)
//   MirroredStrategy run   strategy.run(fn, it.get_next()) per step: the limit of each row
//   input_only             it.get_next() per step and nothing else, for each strategy's dataset
//   fn=all_reduce          fn also all-reduces its element across the replicas (TPU at the
//                          largest k, and Mirrored): a collective's cost, not host dispatch
// What a step's time includes, in every figure alike: the host takes the
// step's inputs from the iterator, hands them to the replicas and waits for
// them. With steps_per_run k the host takes k steps' inputs, then hands them
// over at once: k amortizes the hand-over and the replicas' wake-up, not the
// input. So each trivial figure runs with two inputs:
//   input=pipeline  the strategy's distributed dataset: its input actor prefetches
//                   the steps, and each get_next is a message round trip to it
//   input=memory    the same steps, taken once and kept in host memory (a
//                   DistributedDataset without a runtime): get_next is a vector read
//                   on the host thread, so these rows time the dispatch alone
// TARGET lines judge the goal (k = 100 at <= 1/10 of Mirrored's per-step
// time) for both.
//
// Each figure is the median over --repeats timed rounds (one pass of --steps
// steps each) after one untimed warm-up round, the rounds of all figures
// interleaved so that drift on a shared machine hits them alike. Every round
// is verified outside the timing: each replica saw every step once, with its
// own element; an all-reduce gave the exact sum; the iterator ended with the
// last step; TPUStrategy's host_round_trips() and steps_run() grew by
// steps / k and steps. A mismatch exits with status 1.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <troupe/actors/replicas/step_source.hpp>
#include <troupe/core/config.hpp>
#include <troupe/troupe.hpp>

#include "bench_support.hpp"

namespace {

using troupe::Tensor;
using troupe::bench::Clock;
using troupe::bench::cpu_model;
using troupe::bench::load_average;
using troupe::bench::seconds_between;

struct VerificationError {
  std::string message;
};

[[noreturn]] void verification_failed(const std::string& message) {
  throw VerificationError{message};
}

// -- options ---------------------------------------------------------------------

struct Options {
  bool quick = false;
  bool all_reduce = true;
  int cores = 8;
  std::vector<int> steps_per_run{1, 10, 100};
  int steps = 2000;
  int repeats = 7;
  std::string only; // run only the figures whose name contains it (for profiling)
};

Options parse(int argc, char** argv) {
  Options opts;
  CLI::App app(
    "Host dispatch cost per step of TPUStrategy on emulated TPU cores (steps_per_run 1, 10, 100) "
    "beside MirroredStrategy on as many logical CPU devices, same run.",
    "tpu_dispatch");
  app.add_flag("--quick", opts.quick,
               "a smoke test: 200 steps, 2 rounds (seconds, not a measurement)");
  app.add_flag_callback(
    "--no-all-reduce", [&] { opts.all_reduce = false; },
    "skip the variants whose function all-reduces");
  app
    .add_option("--cores", opts.cores,
                "emulated TPU cores = logical CPU devices = replicas (default 8)")
    ->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  app
    .add_option("--steps-per-run", opts.steps_per_run,
                "TPUStrategy steps_per_run values (default 1,10,100)")
    ->delimiter(',')
    ->check(CLI::Range(1, 100000));
  app
    .add_option(
      "--steps", opts.steps,
      "steps per timed round, a multiple of every --steps-per-run (default 2000; 200 with --quick)")
    ->check(CLI::Range(1, 10000000));
  app.add_option("--repeats", opts.repeats, "timed rounds per figure (default 7; 2 with --quick)")
    ->check(CLI::Range(1, 1000));
  app
    .add_option(
      "--only", opts.only,
      "run only the figures whose name (as the detail lines print it) contains TEXT, e.g. "
      "'k=100) fn=trivial' (for profiling; no TARGET line)")
    ->type_name("TEXT");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e)); // prints the help or the error
  }
  if (opts.quick) {
    if (app.count("--steps") == 0)
      opts.steps = 200;
    if (app.count("--repeats") == 0)
      opts.repeats = 2;
  }
  std::sort(opts.steps_per_run.begin(), opts.steps_per_run.end());
  opts.steps_per_run.erase(std::unique(opts.steps_per_run.begin(), opts.steps_per_run.end()),
                           opts.steps_per_run.end());
  for (const int k : opts.steps_per_run)
    if (opts.steps % k != 0) {
      std::cerr << "tpu_dispatch: --steps " << opts.steps
                << " is not a multiple of --steps-per-run " << k
                << ": every round must be whole round trips; pass a --steps that each "
                   "steps_per_run divides\n";
      std::exit(2);
    }
  return opts;
}

// -- the replica function and its verification --------------------------------------------

// What one replica saw in a round; a cache line each, as each replica writes its own.
struct alignas(64) ReplicaTally {
  int64_t steps = 0;
  int64_t sum = 0;
  int64_t wrong = 0; // elements of another replica or shape, wrong all-reduce sums
  std::string first_wrong;
};

// The replicas' tallies; the replica functions write them, the host checks them after a round.
class Tallies {
public:
  explicit Tallies(int replicas) : replicas_(replicas), tallies_(static_cast<size_t>(replicas)) {}

  void reset() {
    for (auto& t : tallies_)
      t = ReplicaTally{};
  }

  // The trivial function's body: read this replica's element, count it.
  // Returns the element (the step's value for replica 0 plus the replica id).
  int64_t record(const Tensor& x) {
    const int replica = troupe::get_replica_context().replica_id_in_sync_group();
    auto& t = tallies_[static_cast<size_t>(replica)];
    ++t.steps;
    if (x.num_elements() != 1) {
      note_wrong(t, "replica " + std::to_string(replica) + " got an element of shape "
                      + x.shape().to_string());
      return 0;
    }
    const int64_t v = x.data<int64_t>()[0];
    t.sum += v;
    if (v % replicas_ != replica)
      note_wrong(t, "replica " + std::to_string(replica) + " got element " + std::to_string(v));
    return v;
  }

  // The all-reduce variant's check: the sum over the replicas of step s's elements.
  void check_sum(int64_t element, const Tensor& sum) {
    const int replica = troupe::get_replica_context().replica_id_in_sync_group();
    const int64_t n = replicas_;
    const int64_t expected = (element - replica) * n + n * (n - 1) / 2;
    const int64_t got = sum.num_elements() == 1 ? sum.item<int64_t>() : -1;
    if (got != expected)
      note_wrong(tallies_[static_cast<size_t>(replica)],
                 "replica " + std::to_string(replica) + "'s all_reduce(SUM) gave "
                   + std::to_string(got) + ", expected " + std::to_string(expected));
  }

  // After a round of `steps` steps: every replica saw each step once, with its own element.
  void verify(const std::string& figure, int64_t steps) const {
    const int64_t n = replicas_;
    for (int r = 0; r < replicas_; ++r) {
      const auto& t = tallies_[static_cast<size_t>(r)];
      const int64_t expected_sum = n * steps * (steps - 1) / 2 + r * steps;
      if (t.wrong > 0)
        verification_failed(figure + ": " + std::to_string(t.wrong)
                            + " wrong values, the first: " + t.first_wrong);
      if (t.steps != steps || t.sum != expected_sum)
        verification_failed(figure + ": replica " + std::to_string(r) + " ran "
                            + std::to_string(t.steps) + " steps with element sum "
                            + std::to_string(t.sum) + ", expected " + std::to_string(steps)
                            + " steps with sum " + std::to_string(expected_sum));
    }
  }

private:
  static void note_wrong(ReplicaTally& t, std::string what) {
    if (t.wrong++ == 0)
      t.first_wrong = std::move(what);
  }

  int replicas_;
  std::vector<ReplicaTally> tallies_;
};

// -- inputs ---------------------------------------------------------------------------------

// Steps kept in host memory, taken once from a strategy's distributed dataset:
// an iterator over them gives each step on the calling thread (a vector
// read), with no input actor, so the figures that use it time the dispatch alone.
class MemorySteps final : public troupe::internal::StepSource {
public:
  explicit MemorySteps(std::shared_ptr<const std::vector<std::vector<troupe::Element>>> steps)
    : steps_(std::move(steps)) {}
  std::optional<std::vector<troupe::Element>> next_step() override {
    if (next_ >= steps_->size())
      return std::nullopt;
    return (*steps_)[next_++];
  }

private:
  std::shared_ptr<const std::vector<std::vector<troupe::Element>>> steps_;
  size_t next_ = 0;
};

// A distributed dataset of `source`'s steps, served from host memory (no runtime: no input actor).
troupe::DistributedDataset memory_dataset(const troupe::DistributedDataset& source) {
  auto steps = std::make_shared<std::vector<std::vector<troupe::Element>>>();
  for (const auto& step : source)
    steps->push_back(step.values());
  return troupe::DistributedDataset(
    nullptr, [steps] { return std::make_unique<MemorySteps>(steps); }, source.element_spec(), {});
}

// -- figures ----------------------------------------------------------------------------------

// One figure: `round(iterator)` runs every step of a fresh pass; `before` and `after` surround it,
// untimed.
struct Figure {
  Figure(std::string strategy_, std::string call_, std::string fn_, std::string input_,
         int steps_per_run_, double round_trips_per_step_,
         const troupe::DistributedDataset* dataset_)
    : strategy(std::move(strategy_)), call(std::move(call_)), fn(std::move(fn_)),
      input(std::move(input_)), steps_per_run(steps_per_run_),
      round_trips_per_step(round_trips_per_step_), dataset(dataset_) {}

  std::string strategy;  // TPUStrategy, MirroredStrategy
  std::string call;      // run_steps_on_iterator, run, input_only
  std::string fn;        // trivial, all_reduce, none
  std::string input;     // pipeline (the strategy's input actor) or memory (MemorySteps)
  int steps_per_run = 1; // steps per host round trip
  double round_trips_per_step = 1;
  const troupe::DistributedDataset* dataset = nullptr;
  std::function<void(troupe::DistributedIterator&)> round;
  std::function<void()> before;   // outside the timing, before the round
  std::function<void()> after;    // outside the timing, verifies the round
  std::vector<double> per_step_s; // one per timed round

  [[nodiscard]] std::string name() const {
    return strategy + " " + call
           + (call == "run_steps_on_iterator" ? "(k=" + std::to_string(steps_per_run) + ")" : "")
           + " fn=" + fn + " input=" + input;
  }
};

// Steps the iterator to its end outside the timing: the pass had exactly the round's steps.
void expect_end(const Figure& f, troupe::DistributedIterator& it) {
  if (it.get_next_as_optional())
    verification_failed(f.name() + ": the iterator still had steps after the round's last one");
}

void time_round(Figure& f, int steps, bool timed) {
  troupe::DistributedIterator it(*f.dataset);
  if (f.before)
    f.before();
  const auto t0 = Clock::now();
  f.round(it);
  const auto t1 = Clock::now();
  expect_end(f, it);
  if (f.after)
    f.after();
  if (timed)
    f.per_step_s.push_back(seconds_between(t0, t1) / steps);
}

// A TPUStrategy figure's check of the round trips: steps / k of them, `steps` steps.
struct RoundTripCheck {
  const troupe::TPUExtended* extended = nullptr;
  uint64_t trips = 0;
  uint64_t steps = 0;

  void start() {
    trips = extended->host_round_trips();
    steps = extended->steps_run();
  }
  void verify(const std::string& figure, int round_steps, int steps_per_run) const {
    const uint64_t trips_made = extended->host_round_trips() - trips;
    const uint64_t steps_made = extended->steps_run() - steps;
    const auto expected = static_cast<uint64_t>(round_steps / steps_per_run);
    if (trips_made != expected || steps_made != static_cast<uint64_t>(round_steps))
      verification_failed(figure + ": host_round_trips() grew by " + std::to_string(trips_made)
                          + " and steps_run() by " + std::to_string(steps_made) + " over "
                          + std::to_string(round_steps) + " steps; expected "
                          + std::to_string(expected) + " round trips (1 per "
                          + std::to_string(steps_per_run) + " steps)");
  }
};

std::vector<std::string> cpu_device_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i)
    names.push_back("CPU:" + std::to_string(i));
  return names;
}

std::string format_us(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", seconds * 1e6);
  return buf;
}

int run(const Options& opts, int argc, char** argv) {
  const auto wall0 = Clock::now();
  const int n = opts.cores;
  const int steps = opts.steps;
  std::string command;
  for (int i = 0; i < argc; ++i)
    command += (i ? " " : "") + std::string(argv[i]);
  std::cout
    << "# tpu_dispatch: " << cpu_model() << ", " << std::thread::hardware_concurrency()
    << " hardware threads, " << load_average() << "; command: " << command << "\n"
    << "# " << n << " emulated TPU cores and " << n
    << " logical CPU devices in one Runtime (its default "
    << "scheduler threads); " << troupe::knobs().idle_polls
    << " idle polls before a CAF thread sleeps (TROUPE_IDLE_POLLS)\n"
    << "# each figure: median over " << opts.repeats << " timed rounds of " << steps
    << " steps (after a warm-up round), per step; rounds of all figures interleaved; all verified\n"
    << "# every step includes the host taking its inputs from the iterator: input=pipeline, from "
       "the\n"
    << "#   strategy's distributed dataset (a message round trip to its input actor per step, "
       "which\n"
    << "#   steps_per_run does not amortize; input_only rows: that alone); input=memory, from the "
       "same\n"
    << "#   steps kept in host memory (a vector read on the host thread: the dispatch alone)\n"
    << "# fn=trivial reads the replica's element and counts it; fn=all_reduce also all-reduces it "
       "across\n"
    << "#   the replicas (a collective's cost, not host dispatch)\n";
  if (opts.quick)
    std::cout << "# --quick: a smoke test, not a measurement\n";
  std::cout.flush();

  troupe::Runtime rt({.logical_cpu_devices = n, .logical_tpu_cores = n});
  troupe::TPUClusterResolver resolver("local");
  const auto topology = troupe::initialize_tpu_system(rt, resolver);
  if (topology.num_tasks() * topology.num_tpus_per_task() != n)
    throw std::runtime_error("the TPU system has "
                             + std::to_string(topology.num_tasks() * topology.num_tpus_per_task())
                             + " cores, not --cores " + std::to_string(n));

  // One element per replica per step, static batches.
  const auto dataset = troupe::Dataset::range(int64_t{steps} * n).batch(n, /*drop_remainder=*/true);
  Tallies tallies(n);

  troupe::MirroredStrategy mirrored(rt, cpu_device_names(n));
  const auto mirrored_data = mirrored.experimental_distribute_dataset(dataset);
  troupe::TPUStrategy tpu_v2(rt, resolver); // steps_per_run 1: tpu.run per step
  const auto tpu_v2_data = tpu_v2.experimental_distribute_dataset(dataset);
  std::vector<std::unique_ptr<troupe::TPUStrategy>> tpus;
  std::vector<std::unique_ptr<troupe::DistributedDataset>> tpu_data;
  for (const int k : opts.steps_per_run) {
    tpus.push_back(std::make_unique<troupe::TPUStrategy>(rt, resolver, k));
    tpu_data.push_back(std::make_unique<troupe::DistributedDataset>(
      tpus.back()->experimental_distribute_dataset(dataset)));
    if (tpus.back()->num_replicas_in_sync() != n)
      throw std::runtime_error("TPUStrategy has "
                               + std::to_string(tpus.back()->num_replicas_in_sync())
                               + " replicas, not " + std::to_string(n));
  }
  // Both strategies split a step the same way (one element per replica): one set of steps serves
  // both.
  const auto memory_data = memory_dataset(mirrored_data);

  auto trivial = [&tallies](const Tensor& x) { tallies.record(x); };
  auto trivial_steps = [&tallies](troupe::MultiStepContext&, const Tensor& x) {
    tallies.record(x);
  };
  auto reducing = [&tallies](const Tensor& x) {
    const int64_t v = tallies.record(x);
    tallies.check_sum(v, troupe::get_replica_context().all_reduce(troupe::ReduceOp::SUM, x));
  };
  auto reducing_steps = [&tallies](troupe::MultiStepContext&, const Tensor& x) {
    const int64_t v = tallies.record(x);
    tallies.check_sum(v, troupe::get_replica_context().all_reduce(troupe::ReduceOp::SUM, x));
  };

  std::vector<Figure> figures;
  auto reset = [&tallies] { tallies.reset(); };
  auto tallied = [&tallies, steps](const std::string& name) {
    return [&tallies, steps, name] { tallies.verify(name, steps); };
  };

  // Input only: each strategy's iterator stepped on the host and nothing else; the round counts the
  // steps.
  for (auto [strategy, data] : {std::pair<std::string, const troupe::DistributedDataset*>{
                                  "MirroredStrategy", &mirrored_data},
                                {"TPUStrategy", &tpu_v2_data}}) {
    auto taken = std::make_shared<int64_t>(0);
    Figure f{strategy, "input_only", "none", "pipeline", 1, 0, data};
    f.round = [taken, steps](troupe::DistributedIterator& it) {
      for (int s = 0; s < steps; ++s)
        if (auto step = it.get_next_as_optional(); step && static_cast<int>(step->size()) > 0)
          ++*taken;
    };
    f.before = [taken] { *taken = 0; };
    f.after = [taken, steps, name = f.name()] {
      if (*taken != steps)
        verification_failed(name + ": the iterator gave " + std::to_string(*taken) + " steps of "
                            + std::to_string(steps));
    };
    figures.push_back(std::move(f));
  }

  auto add_run_figure = [&](troupe::Strategy& strategy, const std::string& name,
                            const troupe::DistributedDataset& data, const std::string& input,
                            const std::string& fn_name, auto fn,
                            const troupe::TPUExtended* extended) {
    Figure f{name, "run", fn_name, input, 1, 1, &data};
    f.round = [&strategy, fn, steps](troupe::DistributedIterator& it) {
      for (int s = 0; s < steps; ++s)
        strategy.run(fn, it.get_next());
    };
    auto check = std::make_shared<RoundTripCheck>(RoundTripCheck{extended});
    f.before = [reset, check, extended] {
      reset();
      if (extended)
        check->start();
    };
    f.after = [verify = tallied(f.name()), check, extended, steps, name = f.name()] {
      verify();
      if (extended)
        check->verify(name, steps, 1);
    };
    figures.push_back(std::move(f));
  };

  auto add_steps_figure = [&](troupe::TPUStrategy& tpu, const troupe::DistributedDataset& data,
                              const std::string& input, const std::string& fn_name, auto fn) {
    const int k = tpu.extended().steps_per_run();
    Figure f{"TPUStrategy", "run_steps_on_iterator", fn_name, input, k, 1.0 / k, &data};
    f.round = [&tpu, fn, k, steps, name = f.name()](troupe::DistributedIterator& it) {
      for (int done = 0; done < steps; done += k) {
        const auto ctx = tpu.extended().experimental_run_steps_on_iterator(fn, it);
        if (ctx.steps_run() != k)
          verification_failed(name + ": a round trip ran " + std::to_string(ctx.steps_run())
                              + " steps, not " + std::to_string(k));
      }
    };
    auto check = std::make_shared<RoundTripCheck>(RoundTripCheck{&tpu.extended()});
    f.before = [reset, check] {
      reset();
      check->start();
    };
    f.after = [verify = tallied(f.name()), check, k, steps, name = f.name()] {
      verify();
      check->verify(name, steps, k);
    };
    figures.push_back(std::move(f));
  };

  for (const std::string input : {"pipeline", "memory"}) {
    const bool memory = input == "memory";
    add_run_figure(mirrored, "MirroredStrategy", memory ? memory_data : mirrored_data, input,
                   "trivial", trivial, nullptr);
    add_run_figure(tpu_v2, "TPUStrategy", memory ? memory_data : tpu_v2_data, input, "trivial",
                   trivial, &tpu_v2.extended());
    for (size_t i = 0; i < tpus.size(); ++i)
      add_steps_figure(*tpus[i], memory ? memory_data : *tpu_data[i], input, "trivial",
                       trivial_steps);
  }
  if (opts.all_reduce) {
    add_run_figure(mirrored, "MirroredStrategy", memory_data, "memory", "all_reduce", reducing,
                   nullptr);
    add_steps_figure(*tpus.back(), memory_data, "memory", "all_reduce", reducing_steps);
  }

  if (!opts.only.empty()) {
    std::erase_if(figures,
                  [&](const Figure& f) { return f.name().find(opts.only) == std::string::npos; });
    if (figures.empty())
      throw std::invalid_argument("--only '" + opts.only
                                  + "' matches no figure (see the names in a run without it)");
  }
  for (auto& f : figures)
    time_round(f, steps, /*timed=*/false);
  for (int r = 0; r < opts.repeats; ++r)
    for (auto& f : figures)
      time_round(f, steps, /*timed=*/true);

  // A figure's median per step; 0 when --only left it out.
  auto median_of = [&](const std::string& strategy, const std::string& call, const std::string& fn,
                       const std::string& input) {
    for (const auto& f : figures)
      if (f.strategy == strategy && f.call == call && f.fn == fn && f.input == input)
        return troupe::bench::median(f.per_step_s);
    return 0.0;
  };
  // The limit of a row: MirroredStrategy's run with the same function and input (input_only:
  // trivial's).
  auto limit_of = [&](const Figure& f) {
    return median_of("MirroredStrategy", "run", f.fn == "none" ? "trivial" : f.fn, f.input);
  };
  for (const auto& f : figures) {
    const auto s = troupe::bench::summarize(f.per_step_s);
    std::printf("#   %-66s per step: median %s us (min %s, max %s over %zu rounds)\n",
                f.name().c_str(), format_us(s.median).c_str(), format_us(s.min).c_str(),
                format_us(s.max).c_str(), s.count);
  }
  std::cout
    << "# "
       "DISPATCH_ROW,strategy,call,fn,input,replicas,steps_per_run,median_us_per_step,round_trips_"
       "per_step,"
       "mirrored_us_per_step,ratio\n"
    << "#   mirrored_us_per_step: MirroredStrategy.run with the same fn and input (fn=trivial for\n"
    << "#   input_only), the limit each row is set beside; ratio = median_us_per_step / "
       "mirrored_us_per_step\n";
  for (const auto& f : figures) {
    const double median = troupe::bench::median(f.per_step_s);
    const double limit = limit_of(f);
    // Without the limit (left out by --only): '-'.
    char ratio[32] = "-";
    if (limit > 0)
      std::snprintf(ratio, sizeof ratio, "%.3f", median / limit);
    char row[256];
    std::snprintf(row, sizeof row, "DISPATCH_ROW,%s,%s,%s,%s,%d,%s,%s,%.4g,%s,%s",
                  f.strategy.c_str(), f.call.c_str(), f.fn.c_str(), f.input.c_str(), n,
                  f.call == "input_only" ? "-" : std::to_string(f.steps_per_run).c_str(),
                  format_us(median).c_str(), f.round_trips_per_step,
                  limit > 0 ? format_us(limit).c_str() : "-", ratio);
    std::cout << row << "\n";
  }

  // The target: at steps_per_run = 100, the per-step cost <= 1/10 of MirroredStrategy's,
  // judged for the dispatch alone (input=memory) and with the input pipeline (input=pipeline).
  if (!opts.quick)
    for (const std::string input : {"memory", "pipeline"}) {
      const auto target = std::find_if(figures.begin(), figures.end(), [&](const Figure& f) {
        return f.call == "run_steps_on_iterator" && f.steps_per_run == 100 && f.fn == "trivial"
               && f.input == input;
      });
      const double limit = median_of("MirroredStrategy", "run", "trivial", input);
      if (target == figures.end() || limit <= 0)
        continue;
      const double ratio = troupe::bench::median(target->per_step_s) / limit;
      std::printf("TARGET,tpu_steps_per_run=100_over_mirrored<=0.1,input=%s,ratio=%.3f,%s\n",
                  input.c_str(), ratio, ratio <= 0.1 ? "met" : "missed");
    }
  std::printf("# total %.1f s, %s\n", seconds_between(wall0, Clock::now()), load_average().c_str());
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  const auto opts = parse(argc, argv);
  try {
    return run(opts, argc, argv);
  } catch (const VerificationError& e) {
    std::cout.flush();
    std::cerr << "tpu_dispatch: VERIFICATION FAILED: " << e.message << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "tpu_dispatch: " << e.what() << "\n";
    return 2;
  }
}

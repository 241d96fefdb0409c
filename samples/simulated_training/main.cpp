// One training program, run two ways (samples/simulated_training/training.cpp):
//
//   troupe-launch --workers 2 -- simulated_training real
//       each process is one task of a real cluster (TF_CONFIG);
//   simulated_training simulate [--workers 2] [--seeds 1-200]
//       every task in this process, as a SimulatedCluster: first without
//       faults (printing what each task printed in the real run, the same
//       bits), then over a range of seeds, each with frame delays and one
//       worker killed at a time drawn from the seed. Every run must end with
//       the fault-free model on every survivor, or with a named error
//       (peer_lost), never a wrong model or a hang; the first seed that
//       breaks this is printed with the line that replays it.
#include <chrono>
#include <cstring>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>

#include <troupe/troupe.hpp>

#include "training.hpp"

namespace {

using namespace std::chrono_literals;

/// Throws naming the seed unless every survivor has `expected`'s model or a peer_lost error.
template <class Results>
void check(uint64_t seed, const Results& results, const sample::Trained& expected) {
  for (const auto& r : results) {
    if (r.killed)
      continue;
    if (r.ok()) {
      if (r.value->w.size() != expected.w.size()
          || std::memcmp(r.value->w.data(), expected.w.data(), expected.w.size() * sizeof(float)) != 0)
        throw troupe::Error(troupe::Errc::internal, "seed " + std::to_string(seed) + ": " + r.task
                                                      + " trained another model: " + sample::describe(*r.value));
    } else if (r.error->code() != troupe::Errc::peer_lost) {
      throw troupe::Error(troupe::Errc::internal, "seed " + std::to_string(seed) + ": " + r.task + " failed with "
                                                    + std::string(troupe::name(r.error->code())) + ": " + r.error->what());
    }
  }
}

int simulate(int workers, const std::string& seeds) {
  // The program as every task, without faults: the real cluster's output.
  troupe::SimulatedCluster clean({.seed = 1, .workers = workers});
  const auto results = clean.run(sample::train);
  for (const auto& r : results) {
    if (!r.ok()) {
      std::cerr << "simulated_training: " << r.task << " failed without faults: " << r.error->what() << "\n";
      return 1;
    }
    std::cout << "[" << r.task << "] " << sample::describe(*r.value) << "\n";
  }
  const auto& expected = *results.front().value;
  // Then with faults, seed after seed.
  const auto range = troupe::SeedRange::from_env(troupe::SeedRange::parse(seeds));
  const auto report = troupe::run_seeds(range, [&](uint64_t seed) {
    troupe::SimulatedCluster sim({.seed = seed, .workers = workers, .deadline = 60s});
    sim.faults().delay(50us, 500us);
    std::uniform_int_distribution<int> victim(0, workers - 1);
    std::uniform_int_distribution<int64_t> when_us(0, 20'000);
    const auto task = "worker:" + std::to_string(victim(sim.random()));
    sim.faults().kill(task, std::chrono::microseconds(when_us(sim.random())));
    check(seed, sim.run(sample::train), expected);
  }, "simulated_training simulate --workers " + std::to_string(workers));
  std::cout << "faults: " << report.summary() << std::endl;
  return report.ok() ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app("One MultiWorkerMirroredStrategy training program, run as a task of a real cluster (real, under "
               "troupe-launch) or as every task of a simulated one (simulate).",
               "simulated_training");
  app.require_subcommand(1);
  auto* real = app.add_subcommand("real", "this process is one task of the cluster in TF_CONFIG");
  auto* sim = app.add_subcommand("simulate", "every task in this process, without faults and then seed by seed");
  int workers = 2;
  std::string seeds = "1-200";
  sim->add_option("--workers", workers, "worker tasks (default 2)")->check(CLI::Range(1, 64));
  sim->add_option("--seeds", seeds, "seeds with faults, N or A-B (default 1-200; TROUPE_SIM_SEED replays one)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (real->parsed()) {
      troupe::Runtime rt(troupe::ClusterResolver::from_env());
      std::cout << sample::describe(sample::train(rt)) << std::endl;
      return 0;
    }
    return simulate(workers, seeds);
  } catch (const std::exception& e) {
    std::cerr << "simulated_training: " << e.what() << "\n";
    return 1;
  }
}

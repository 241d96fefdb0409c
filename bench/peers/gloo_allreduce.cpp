// Gloo's all-reduce (float32 SUM) on the sizes troupe's
// bench/allreduce_cluster measures, as its peer in the same run
// (bench/allreduce_peers.sh builds this against Debian's libgloo-dev and
// starts RANKS copies). Gloo has no launcher: the processes meet through a
// FileStore folder and connect over TCP on 127.0.0.1.
//
//   gloo_allreduce RANK RANKS STORE_DIR BYTES[,BYTES...] [SECONDS_PER_SIZE]
//
// Per size and algorithm (ring, ring_chunked, halving_doubling, bcube): 5
// warm-up runs, then runs until SECONDS_PER_SIZE (0.5) pass (at least 10,
// at most 2000; rank 0 decides), each after a barrier; the figure is the
// median over runs of the slowest rank's time, as troupe's bench reports
// it. Every result is checked. Rank 0 prints, per size, the best
// algorithm's row in troupe's format (ROW,gloo,<algorithm>,ranks,bytes,...).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

namespace {

using Clock = std::chrono::steady_clock;

// The slowest rank's time of each run: a max all-reduce of every rank's times.
std::vector<double> slowest(const std::shared_ptr<gloo::Context>& context, std::vector<double> times) {
  gloo::AllreduceRing<double> max(context, {times.data()}, static_cast<int>(times.size()),
                                  gloo::ReductionFunction<double>::max);
  max.run();
  return times;
}

// Median seconds of `algorithm` on `count` floats (the slowest rank's per run).
template <class Algorithm>
double measure(const std::shared_ptr<gloo::Context>& context, int rank, int ranks, long count, double budget) {
  std::vector<float> data(static_cast<std::size_t>(std::max<long>(count, 1)));
  Algorithm algorithm(context, {data.data()}, static_cast<int>(count));
  gloo::BarrierAllToAll barrier(context);
  std::vector<double> times;
  const auto start = Clock::now();
  for (int i = -5;; ++i) {
    for (long k = 0; k < count; ++k)
      data[static_cast<std::size_t>(k)] = static_cast<float>(rank + 1) + static_cast<float>(k % 7);
    barrier.run();
    const auto t0 = Clock::now();
    algorithm.run();
    const auto t1 = Clock::now();
    for (long k = 0; k < count; ++k)
      if (data[static_cast<std::size_t>(k)]
          != static_cast<float>(ranks * (ranks + 1) / 2) + static_cast<float>(ranks * (k % 7))) {
        std::fprintf(stderr, "gloo_allreduce: wrong sum at element %ld on rank %d\n", k, rank);
        std::exit(1);
      }
    if (i < 0)
      continue;
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
    // Rank 0 decides whether to go on; every rank follows.
    int more = times.size() < 10
               || (times.size() < 2000 && std::chrono::duration<double>(Clock::now() - start).count() < budget);
    gloo::BroadcastOneToAll<int> tell(context, {&more}, 1, 0);
    tell.run();
    if (!more)
      break;
  }
  auto all = slowest(context, times);
  std::sort(all.begin(), all.end());
  return all[all.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: gloo_allreduce RANK RANKS STORE_DIR BYTES[,BYTES...] [SECONDS_PER_SIZE]\n");
    return 2;
  }
  const int rank = std::atoi(argv[1]);
  const int ranks = std::atoi(argv[2]);
  const double budget = argc > 5 ? std::atof(argv[5]) : 0.5;
  gloo::transport::tcp::attr attr("127.0.0.1");
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(argv[3]);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, ranks);
  context->connectFullMesh(store, device);
  std::stringstream sizes(argv[4]);
  for (std::string item; std::getline(sizes, item, ',');) {
    const long bytes = std::atol(item.c_str());
    const long count = bytes / 4;
    const std::vector<std::pair<const char*, std::function<double()>>> algorithms{
      {"ring", [&] { return measure<gloo::AllreduceRing<float>>(context, rank, ranks, count, budget); }},
      {"ring_chunked", [&] { return measure<gloo::AllreduceRingChunked<float>>(context, rank, ranks, count, budget); }},
      {"halving_doubling",
       [&] { return measure<gloo::AllreduceHalvingDoubling<float>>(context, rank, ranks, count, budget); }},
      {"bcube", [&] { return measure<gloo::AllreduceBcube<float>>(context, rank, ranks, count, budget); }},
    };
    const char* best = nullptr;
    double best_s = 0;
    for (const auto& [name, run] : algorithms) {
      const double s = run();
      if (best == nullptr || s < best_s) {
        best = name;
        best_s = s;
      }
    }
    if (rank == 0) {
      const double algbw = static_cast<double>(bytes) / best_s;
      const double busbw = algbw * 2.0 * (ranks - 1) / ranks;
      std::printf("ROW,gloo,%s,%d,%ld,%.1f,%.3f,%.3f,0,0\n", best, ranks, bytes, best_s * 1e6, algbw / 1e9,
                  busbw / 1e9);
      std::fflush(stdout);
    }
  }
  return 0;
}

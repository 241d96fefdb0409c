// The cross-process algorithms over an in-memory link that delivers frames in
// a seeded random order, keeping each sender->receiver pair in FIFO order as
// TCP does. Inputs differ per rank and per element and sum exactly.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include <troupe/collectives/algorithm_selector.hpp>
#include <troupe/collectives/direct_exchange_all_reduce.hpp>
#include <troupe/collectives/halving_doubling_all_reduce.hpp>
#include <troupe/collectives/peer_all_gather.hpp>
#include <troupe/collectives/peer_broadcast.hpp>
#include <troupe/collectives/ring_all_reduce.hpp>
#include <troupe/core/errors.hpp>

using namespace troupe;
using namespace troupe::internal;

namespace {

struct Frame {
  int from;
  uint32_t tag;
  FrameBytes bytes;
};

// Every rank's link; frames wait in per-(from, to) queues until delivered.
class MemoryNetwork {
public:
  /// `zero_copy`: frames keep the sender's bytes, read only when delivered,
  /// as a transport that does not copy (in one process, UCX); else they are
  /// copied at send, as a socket does.
  explicit MemoryNetwork(int n, bool zero_copy = false)
    : n_(n), zero_copy_(zero_copy), links_(static_cast<size_t>(n)) {
    for (int r = 0; r < n; ++r)
      links_[static_cast<size_t>(r)] = std::make_unique<Link>(*this, r);
  }

  PeerLink& link(int rank) { return *links_[static_cast<size_t>(rank)]; }
  size_t frames_sent() const { return sent_; }

  // Delivers every frame, picking the next (from, to) pair at random; returns
  // when no frame is left.
  void run(std::vector<PeerCollective*>& ranks, uint64_t seed, const std::function<void()>& after_each = {}) {
    std::mt19937_64 rng(seed);
    for (;;) {
      std::vector<std::pair<int, int>> ready;
      for (auto& [pair, queue] : queues_)
        if (!queue.empty())
          ready.push_back(pair);
      if (ready.empty())
        return;
      auto [from, to] = ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng)];
      auto frame = queues_[{from, to}].front();
      queues_[{from, to}].pop_front();
      ranks[static_cast<size_t>(to)]->on_frame(frame.from, frame.tag, frame.bytes);
      if (after_each)
        after_each();
    }
  }

private:
  class Link : public PeerLink {
  public:
    Link(MemoryNetwork& net, int rank) : net_(net), rank_(rank) {}
    void send(int rank, uint32_t tag, FrameBytes bytes) override {
      REQUIRE(rank != rank_);
      REQUIRE(rank >= 0);
      REQUIRE(rank < net_.n_);
      if (net_.zero_copy_) {
        net_.queues_[{rank_, rank}].push_back({rank_, tag, std::move(bytes)});
        ++net_.sent_;
        return;
      }
      // Copy now, as a socket would: later in-place writes must not leak into it.
      auto copy = std::make_shared<std::vector<std::byte>>(bytes.data, bytes.data + bytes.size);
      net_.queues_[{rank_, rank}].push_back({rank_, tag, FrameBytes{copy, copy->data(), copy->size()}});
      ++net_.sent_;
    }

  private:
    MemoryNetwork& net_;
    int rank_;
  };

  int n_;
  bool zero_copy_;
  std::vector<std::unique_ptr<Link>> links_;
  std::map<std::pair<int, int>, std::deque<Frame>> queues_;
  size_t sent_ = 0;
};

// Rank r's element i: distinct per rank and element, exact in float32.
Tensor rank_input(int rank, int64_t count, DType dtype) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>((rank + 1) * 1000 + i % 997);
  return Tensor::from_vector(v).cast(dtype);
}

std::vector<double> expected_sum(int n, int64_t count) {
  std::vector<double> out(static_cast<size_t>(count), 0.0);
  for (int r = 0; r < n; ++r)
    for (int64_t i = 0; i < count; ++i)
      out[static_cast<size_t>(i)] += (r + 1) * 1000 + i % 997;
  return out;
}

std::vector<double> as_doubles(const Tensor& t) {
  return t.cast(DType::float64).to_vector<double>();
}

} // namespace

TEST_CASE("ring allreduce sums every element for 1 to 5 ranks across several chunks", "[collectives][peer]") {
  const int n = GENERATE(1, 2, 3, 4, 5);
  const int64_t count = GENERATE(int64_t{0}, int64_t{1}, int64_t{3}, int64_t{1000}, int64_t{4099});
  const auto dtype = GENERATE(DType::float32, DType::int64, DType::float64);
  CAPTURE(n, count, name(dtype));
  MemoryNetwork net(n);
  std::vector<std::unique_ptr<RingAllReduce>> algs;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    algs.push_back(std::make_unique<RingAllReduce>(net.link(r), r, n, rank_input(r, count, dtype),
                                                   RingOptions{.chunk_bytes = 256}));
    ranks.push_back(algs.back().get());
  }
  for (auto* a : ranks)
    a->start();
  net.run(ranks, static_cast<uint64_t>(n * 7919 + count));
  const auto want = expected_sum(n, count);
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    REQUIRE(algs[static_cast<size_t>(r)]->done());
    REQUIRE(as_doubles(algs[static_cast<size_t>(r)]->buffer()) == want);
  }
}

TEST_CASE("ring allreduce sends its first step straight from a shared input and never writes it",
          "[collectives][peer]") {
  // A link that keeps what it was given, as a zero-copy transport would.
  struct Capture : PeerLink {
    std::vector<FrameBytes> frames;
    void send(int, uint32_t, FrameBytes bytes) override { frames.push_back(std::move(bytes)); }
  } link;
  const auto input = rank_input(0, 1000, DType::float32); // the caller keeps a reference
  const auto before = input.to_vector<float>();
  RingAllReduce ring(link, 0, 2, input, RingOptions{.chunk_bytes = 256});
  ring.start();
  REQUIRE_FALSE(link.frames.empty());
  const auto* begin = input.raw_data();
  for (const auto& f : link.frames) { // segment 1 of rank 0's own input, not a copy of it
    CHECK(f.data >= begin);
    CHECK(f.data + f.size <= begin + input.nbytes());
  }
  std::vector<float> theirs(500, 1.0f);
  for (uint32_t chunk = 0; chunk < 8; ++chunk) {
    const auto first = static_cast<size_t>(chunk) * 64;
    const auto n = std::min<size_t>(64, 500 - first);
    ring.on_frame(1, chunk, FrameBytes{nullptr, reinterpret_cast<const std::byte*>(theirs.data() + first),
                                       n * sizeof(float)});
  }
  CHECK(input.to_vector<float>() == before);
  CHECK_FALSE(ring.buffer().shares_buffer_with(input));
  const auto got = ring.buffer().to_vector<float>();
  for (size_t i = 0; i < 500; ++i)
    REQUIRE(got[i] == before[i] + 1.0f);
}

TEST_CASE("an in-place all-reduce writes the sum into its input's memory while a zero-copy link reads what it sent",
          "[collectives][peer]") {
  // Frames are read only when delivered, in a seeded random order: an
  // algorithm that rewrote bytes a peer has yet to read would sum wrongly.
  const auto algorithm = GENERATE(AllReduceAlgorithm::ring, AllReduceAlgorithm::halving_doubling,
                                  AllReduceAlgorithm::direct_exchange);
  const int n = GENERATE(1, 2, 3, 4, 5);
  const int64_t count = GENERATE(int64_t{0}, int64_t{3}, int64_t{1000}, int64_t{4099});
  const auto dtype = GENERATE(DType::float32, DType::int64);
  const auto seed = GENERATE(1u, 2u, 3u);
  CAPTURE(name(algorithm), n, count, name(dtype), seed);
  MemoryNetwork net(n, true);
  std::vector<std::unique_ptr<PeerCollective>> algs;
  std::vector<const Tensor*> buffers;
  std::vector<const std::byte*> addresses;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    auto input = rank_input(r, count, dtype);
    addresses.push_back(input.raw_data());
    // A second handle while it is built: without in_place, halving-doubling
    // would copy on write and reduce elsewhere.
    const Tensor keep = input;
    const Tensor* buffer = nullptr;
    algs.push_back(make_all_reduce({algorithm, "test"}, net.link(r), r, n, std::move(input),
                                   RingOptions{.chunk_bytes = 256}, PackMemory{.callers = true, .in_place = true},
                                   buffer));
    buffers.push_back(buffer);
    ranks.push_back(algs.back().get());
  }
  for (auto* a : ranks)
    a->start();
  net.run(ranks, seed * 7919 + static_cast<uint64_t>(n));
  const auto want = expected_sum(n, count);
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    REQUIRE(algs[static_cast<size_t>(r)]->done());
    CHECK(buffers[static_cast<size_t>(r)]->raw_data() == addresses[static_cast<size_t>(r)]);
    REQUIRE(as_doubles(*buffers[static_cast<size_t>(r)]) == want);
  }
}

TEST_CASE("an all-reduce of a caller's memory sums what it held, though the caller writes it once its rank is done",
          "[collectives][peer]") {
  // The frames are read when delivered (zero-copy), and each rank's caller
  // overwrites its memory as soon as that rank is done, as a framework
  // writing the next step's gradients would.
  const auto algorithm = GENERATE(AllReduceAlgorithm::ring, AllReduceAlgorithm::halving_doubling,
                                  AllReduceAlgorithm::direct_exchange);
  const int n = GENERATE(2, 3, 5);
  const int64_t count = GENERATE(int64_t{3}, int64_t{1000});
  const auto seed = GENERATE(1u, 2u, 3u, 4u);
  CAPTURE(name(algorithm), n, count, seed);
  MemoryNetwork net(n, true);
  std::vector<std::vector<float>> memory(static_cast<size_t>(n));
  std::vector<std::unique_ptr<PeerCollective>> algs;
  std::vector<const Tensor*> buffers;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    memory[static_cast<size_t>(r)] = rank_input(r, count, DType::float32).to_vector<float>();
    // The caller keeps its own handle, as all_reduce's caller does.
    auto input = Tensor::from_external(memory[static_cast<size_t>(r)].data(), Shape{count}, DType::float32, {});
    const Tensor* buffer = nullptr;
    algs.push_back(make_all_reduce({algorithm, "test"}, net.link(r), r, n, input, RingOptions{.chunk_bytes = 256},
                                   PackMemory{.callers = true}, buffer));
    buffers.push_back(buffer);
    ranks.push_back(algs.back().get());
  }
  std::vector<std::vector<double>> results(static_cast<size_t>(n));
  auto overwrite_when_done = [&] {
    for (int r = 0; r < n; ++r)
      if (algs[static_cast<size_t>(r)]->done() && results[static_cast<size_t>(r)].empty()) {
        results[static_cast<size_t>(r)] = as_doubles(*buffers[static_cast<size_t>(r)]);
        std::fill(memory[static_cast<size_t>(r)].begin(), memory[static_cast<size_t>(r)].end(), std::nanf(""));
      }
  };
  for (auto* a : ranks)
    a->start();
  overwrite_when_done();
  net.run(ranks, seed * 31 + static_cast<uint64_t>(n), overwrite_when_done);
  const auto want = expected_sum(n, count);
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    REQUIRE(results[static_cast<size_t>(r)] == want);
  }
}

TEST_CASE("ring reduce-scatter leaves rank r with the sum of segment r only", "[collectives][peer]") {
  const int n = GENERATE(2, 3, 4);
  const int64_t count = 1001;
  MemoryNetwork net(n);
  std::vector<std::unique_ptr<RingAllReduce>> algs;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    algs.push_back(std::make_unique<RingAllReduce>(
      net.link(r), r, n, rank_input(r, count, DType::float32),
      RingOptions{.chunk_bytes = 64, .reduce_scatter_only = true}));
    ranks.push_back(algs.back().get());
  }
  for (auto* a : ranks)
    a->start();
  net.run(ranks, 3);
  const auto want = expected_sum(n, count);
  for (int r = 0; r < n; ++r) {
    REQUIRE(algs[static_cast<size_t>(r)]->done());
    const auto [begin, end] = RingAllReduce::segment(count, n, r);
    const auto got = as_doubles(algs[static_cast<size_t>(r)]->buffer());
    for (int64_t i = begin; i < end; ++i)
      REQUIRE(got[static_cast<size_t>(i)] == want[static_cast<size_t>(i)]);
  }
}

TEST_CASE("ring allreduce sends each rank 2(n-1)/n of the buffer in chunk-sized frames", "[collectives][peer]") {
  const int n = 4;
  const int64_t count = 4096; // 16 KiB of float32, 4 KiB segments, 1 KiB chunks
  MemoryNetwork net(n);
  std::vector<std::unique_ptr<RingAllReduce>> algs;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    algs.push_back(std::make_unique<RingAllReduce>(net.link(r), r, n, rank_input(r, count, DType::float32),
                                                   RingOptions{.chunk_bytes = 1024}));
    ranks.push_back(algs.back().get());
  }
  for (auto* a : ranks)
    a->start();
  net.run(ranks, 1);
  // 2(n-1) steps x 4 chunks per segment, per rank.
  REQUIRE(net.frames_sent() == static_cast<size_t>(n * 2 * (n - 1) * 4));
}

TEST_CASE("halving-doubling allreduce sums every element for 1 to 7 ranks", "[collectives][peer]") {
  const int n = GENERATE(1, 2, 3, 4, 5, 6, 7, 8);
  const int64_t count = GENERATE(int64_t{0}, int64_t{1}, int64_t{5}, int64_t{1023});
  CAPTURE(n, count);
  for (uint64_t seed = 0; seed < 5; ++seed) {
    MemoryNetwork net(n);
    std::vector<std::unique_ptr<HalvingDoublingAllReduce>> algs;
    std::vector<PeerCollective*> ranks;
    for (int r = 0; r < n; ++r) {
      algs.push_back(std::make_unique<HalvingDoublingAllReduce>(net.link(r), r, n,
                                                                rank_input(r, count, DType::float32)));
      ranks.push_back(algs.back().get());
    }
    for (auto* a : ranks)
      a->start();
    net.run(ranks, seed);
    const auto want = expected_sum(n, count);
    for (int r = 0; r < n; ++r) {
      CAPTURE(r, seed);
      REQUIRE(algs[static_cast<size_t>(r)]->done());
      REQUIRE(as_doubles(algs[static_cast<size_t>(r)]->buffer()) == want);
    }
  }
}

TEST_CASE("direct-exchange allreduce sums every element in one frame per peer for 1 to 5 ranks",
          "[collectives][peer]") {
  const int n = GENERATE(1, 2, 3, 4, 5);
  const int64_t count = GENERATE(int64_t{0}, int64_t{1}, int64_t{1023});
  const auto dtype = GENERATE(DType::float32, DType::int64, DType::bfloat16);
  CAPTURE(n, count, name(dtype));
  for (uint64_t seed = 0; seed < 3; ++seed) {
    MemoryNetwork net(n);
    std::vector<std::unique_ptr<DirectExchangeAllReduce>> algs;
    std::vector<PeerCollective*> ranks;
    for (int r = 0; r < n; ++r) {
      algs.push_back(std::make_unique<DirectExchangeAllReduce>(net.link(r), r, n, rank_input(r, count, dtype)));
      ranks.push_back(algs.back().get());
    }
    for (auto* a : ranks)
      a->start();
    // One round: every rank's frames are out before any arrives.
    CHECK(net.frames_sent() == static_cast<size_t>(n * (n - 1)));
    net.run(ranks, seed);
    // bfloat16 holds these inputs and sums only roughly: the sum of the
    // inputs as sent (exact in float32, where it accumulates), rounded once.
    std::vector<double> sum(static_cast<size_t>(count), 0.0);
    for (int r = 0; r < n; ++r) {
      const auto input = as_doubles(rank_input(r, count, dtype));
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += input[i];
    }
    const auto want = as_doubles(Tensor::from_vector(sum).cast(dtype));
    for (int r = 0; r < n; ++r) {
      CAPTURE(r, seed);
      REQUIRE(algs[static_cast<size_t>(r)]->done());
      CHECK_FALSE(algs[static_cast<size_t>(r)]->waits_for((r + 1) % n));
      REQUIRE(as_doubles(algs[static_cast<size_t>(r)]->buffer()) == want);
    }
  }
}

TEST_CASE("direct-exchange allreduce gives every rank the same bits where the sum rounds", "[collectives][peer]") {
  const int n = 4;
  const int64_t count = 257;
  MemoryNetwork net(n);
  std::vector<std::unique_ptr<DirectExchangeAllReduce>> algs;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    std::vector<float> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) // magnitudes far apart: the order of the adds shows
      v[static_cast<size_t>(i)] = static_cast<float>((r % 2 == 0 ? 1e8 : 1.0) * (1.0 + 0.1 * r) + 0.37 * i);
    algs.push_back(std::make_unique<DirectExchangeAllReduce>(net.link(r), r, n, Tensor::from_vector(v)));
    ranks.push_back(algs.back().get());
  }
  for (auto* a : ranks)
    a->start();
  net.run(ranks, 11);
  const auto first = algs[0]->buffer().to_vector<float>();
  for (int r = 1; r < n; ++r) {
    CAPTURE(r);
    REQUIRE(std::memcmp(algs[static_cast<size_t>(r)]->buffer().raw_data(), algs[0]->buffer().raw_data(),
                        algs[0]->buffer().nbytes()) == 0);
  }
}

TEST_CASE("direct-exchange allreduce names a duplicate, a wrong tag or a wrong size", "[collectives][peer]") {
  MemoryNetwork net(3);
  DirectExchangeAllReduce alg(net.link(0), 0, 3, rank_input(0, 4, DType::float32));
  alg.start();
  CHECK(alg.waits_for(1));
  CHECK(alg.waits_for(2));
  std::vector<std::byte> right(16), wrong(12);
  REQUIRE_THROWS_WITH(alg.on_frame(1, 1, FrameBytes{nullptr, right.data(), right.size()}),
                      Catch::Contains("direct-exchange on rank 0: frame 1 from rank 1 is not expected"));
  REQUIRE_THROWS_WITH(alg.on_frame(2, 0, FrameBytes{nullptr, wrong.data(), wrong.size()}),
                      Catch::Contains("carries 12 bytes where 16 were expected"));
  alg.on_frame(1, 0, FrameBytes{nullptr, right.data(), right.size()});
  CHECK_FALSE(alg.waits_for(1));
  CHECK(alg.waits_for(2));
  REQUIRE_THROWS_WITH(alg.on_frame(1, 0, FrameBytes{nullptr, right.data(), right.size()}),
                      Catch::Contains("frame 0 from rank 1 is not expected"));
  CHECK_FALSE(alg.done());
}

namespace {

// Byte i of rank r's block: differs by rank and position, so pieces out of place show.
std::byte block_byte(int rank, std::size_t i) {
  return std::byte(static_cast<unsigned char>((rank + 1) * 31 + i * 7));
}

} // namespace

TEST_CASE("peer all-gather collects blocks of different sizes from every rank, in pieces past the frame limit",
          "[collectives][peer]") {
  const int n = GENERATE(1, 2, 4);
  // 4 bytes per frame: every block but rank 0's 3 bytes travels in pieces (one empty block too).
  const std::size_t max_frame = GENERATE(std::size_t{64} << 20, std::size_t{4});
  CAPTURE(n, max_frame);
  MemoryNetwork net(n);
  std::vector<std::vector<std::byte>> data;
  std::vector<size_t> sizes;
  for (int r = 0; r < n; ++r) {
    data.emplace_back(r == 2 ? 0 : static_cast<size_t>(3 + 5 * r));
    for (std::size_t i = 0; i < data.back().size(); ++i)
      data.back()[i] = block_byte(r, i);
    sizes.push_back(data.back().size());
  }
  std::vector<std::unique_ptr<PeerAllGather>> algs;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    auto& d = data[static_cast<size_t>(r)];
    algs.push_back(std::make_unique<PeerAllGather>(net.link(r), r, n, FrameBytes{nullptr, d.data(), d.size()}, sizes,
                                                   max_frame));
    ranks.push_back(algs.back().get());
  }
  for (auto* a : ranks)
    a->start();
  std::size_t frames = 0;
  for (int r = 0; r < n; ++r)
    frames += static_cast<std::size_t>(n - 1) * std::max<std::size_t>(1, (sizes[static_cast<size_t>(r)] + max_frame - 1) / max_frame);
  CHECK(net.frames_sent() == frames);
  net.run(ranks, 9);
  for (int r = 0; r < n; ++r) {
    REQUIRE(algs[static_cast<size_t>(r)]->done());
    for (int k = 0; k < n; ++k) {
      const auto& block = algs[static_cast<size_t>(r)]->blocks()[static_cast<size_t>(k)];
      REQUIRE(block.size == sizes[static_cast<size_t>(k)]);
      for (size_t i = 0; i < block.size; ++i)
        REQUIRE(block.data[i] == block_byte(k, i));
    }
  }
}

TEST_CASE("a piece of a block that does not fit is an error naming it", "[collectives][peer]") {
  MemoryNetwork net(2);
  std::vector<std::byte> mine(10);
  PeerAllGather gather(net.link(0), 0, 2, FrameBytes{nullptr, mine.data(), mine.size()}, {10, 10}, 4);
  std::vector<std::byte> piece(4);
  gather.on_frame(1, 0, FrameBytes{nullptr, piece.data(), piece.size()});
  REQUIRE_THROWS_WITH(gather.on_frame(1, 2, FrameBytes{nullptr, piece.data(), piece.size()}),
                      Catch::Contains("frame 2 from rank 1 came where piece 1 was expected"));
  PeerBroadcast broadcast(net.link(0), 0, 2, 1, FrameBytes{}, 10, 4);
  std::vector<std::byte> short_piece(3);
  REQUIRE_THROWS_WITH(broadcast.on_frame(1, 0, FrameBytes{nullptr, short_piece.data(), short_piece.size()}),
                      Catch::Contains("carries 3 bytes where 4 were expected (10 in 3 pieces)"));
}

TEST_CASE("peer broadcast delivers the root's bytes to every rank, in pieces past the frame limit", "[collectives][peer]") {
  const int n = 3;
  const int root = GENERATE(0, 2);
  const std::size_t max_frame = GENERATE(std::size_t{64} << 20, std::size_t{7}); // 7: 15 pieces
  CAPTURE(root, max_frame);
  MemoryNetwork net(n);
  std::vector<std::byte> payload(100);
  for (std::size_t i = 0; i < payload.size(); ++i)
    payload[i] = block_byte(root, i);
  std::vector<std::unique_ptr<PeerBroadcast>> algs;
  std::vector<PeerCollective*> ranks;
  for (int r = 0; r < n; ++r) {
    FrameBytes mine = r == root ? FrameBytes{nullptr, payload.data(), payload.size()} : FrameBytes{};
    algs.push_back(std::make_unique<PeerBroadcast>(net.link(r), r, n, root, mine, payload.size(), max_frame));
    ranks.push_back(algs.back().get());
  }
  for (auto* a : ranks)
    a->start();
  CHECK(net.frames_sent() == (n - 1) * (max_frame == 7 ? 15u : 1u));
  net.run(ranks, 4);
  for (int r = 0; r < n; ++r) {
    REQUIRE(algs[static_cast<size_t>(r)]->done());
    const auto& got = algs[static_cast<size_t>(r)]->bytes();
    REQUIRE(got.size == payload.size());
    CHECK(std::vector<std::byte>(got.data, got.data + got.size) == payload);
  }
}

TEST_CASE("a frame that does not fit the ring protocol is an error naming it", "[collectives][peer]") {
  MemoryNetwork net(3);
  RingAllReduce ring(net.link(0), 0, 3, rank_input(0, 30, DType::float32), RingOptions{});
  ring.start();
  std::vector<std::byte> junk(7);
  REQUIRE_THROWS_WITH(ring.on_frame(1, 0, FrameBytes{nullptr, junk.data(), junk.size()}),
                      Catch::Contains("from rank 1") && Catch::Contains("not the left neighbour 2"));
  REQUIRE_THROWS_WITH(ring.on_frame(2, 0, FrameBytes{nullptr, junk.data(), junk.size()}),
                      Catch::Contains("carries 7 bytes where 40 were expected"));
}

TEST_CASE("a ring chunk that arrives twice is an error, not added twice", "[collectives][peer]") {
  // 3 ranks, 30 float32 elements, chunks of 4 elements: rank 0 receives
  // segment 1 (10 elements, 3 chunks) from rank 2 at step 0.
  MemoryNetwork net(3);
  RingAllReduce ring(net.link(0), 0, 3, rank_input(0, 30, DType::float32), RingOptions{16, false});
  ring.start();
  std::vector<float> chunk(4, 1.0f);
  const FrameBytes bytes{nullptr, reinterpret_cast<const std::byte*>(chunk.data()), chunk.size() * sizeof(float)};
  ring.on_frame(2, 0, bytes);
  REQUIRE_THROWS_WITH(ring.on_frame(2, 0, bytes), Catch::Contains("repeats step 0, chunk 0"));
}

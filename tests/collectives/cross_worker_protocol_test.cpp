// The cross-worker state machine on its own: frames in, frames and results
// out, no actors. Frames that break the protocol fail the key on this worker
// and tell the others, never a wrong count or a wait.

#include <catch2/catch.hpp>

#include <troupe/collectives/cross_worker_collectives.hpp>
#include <troupe/collectives/wire_payloads.hpp>

using namespace troupe;
using namespace troupe::internal;

namespace {

struct Harness {
  std::vector<std::pair<int, FrameHeader>> sent;
  std::vector<std::pair<Errc, std::string>> failures;
  int completed = 0;
  CrossWorkerCollectives machine;

  explicit Harness(int workers)
    : machine(7, setup(workers),
              [this](int to, const FrameHeader& header, FrameBytes) { sent.emplace_back(to, header); },
              [this](const CollectiveKey&, std::vector<Tensor>) { ++completed; },
              [this](const CollectiveKey&, Errc code, const std::string& why) { failures.emplace_back(code, why); }) {}

  static CrossWorkerSetup setup(int workers) {
    CrossWorkerSetup s;
    for (int r = 0; r < workers; ++r)
      s.task_names.push_back("worker:" + std::to_string(r));
    return s;
  }

  [[nodiscard]] int aborts_sent() const {
    int n = 0;
    for (const auto& [to, header] : sent)
      n += header.type == FrameType::abort ? 1 : 0;
    return n;
  }
};

FrameHeader header_of(FrameType type, const CollectiveKey& key) {
  FrameHeader h;
  h.type = type;
  h.group = key.group;
  h.run = key.run;
  h.seq = key.seq;
  return h;
}

} // namespace

TEST_CASE("a worker that announces a collective twice fails it instead of counting twice", "[collectives][cross_worker]") {
  // 3 workers: with worker 1's announce counted twice, the all_gather would
  // start without worker 2's block.
  Harness h(3);
  const CollectiveKey key{7, 1, 0};
  const std::vector<Tensor> mine{Tensor::from_vector<float>({1, 2})};
  h.machine.start(key, CollectiveKind::all_gather, ReduceOp::SUM, 0, mine);
  const auto announce = AnnouncePayload{CollectiveFingerprint::of(CollectiveKind::all_gather, ReduceOp::SUM, 0, mine), 1}.encode();
  h.machine.on_frame(1, header_of(FrameType::announce, key), announce);
  REQUIRE(h.failures.empty());
  h.machine.on_frame(1, header_of(FrameType::announce, key), announce);
  REQUIRE(h.failures.size() == 1);
  CHECK(h.failures[0].first == Errc::internal);
  CHECK_THAT(h.failures[0].second, Catch::Contains("task worker:1 announced it twice"));
  CHECK(h.aborts_sent() == 2); // workers 1 and 2 learn it too
  CHECK(h.completed == 0);
}

TEST_CASE("a frame type the collective protocol does not have is an error, not data", "[collectives][cross_worker]") {
  Harness h(2);
  const CollectiveKey key{7, 1, 0};
  h.machine.start(key, CollectiveKind::all_reduce, ReduceOp::SUM, 0, {Tensor::from_vector<float>({1, 2})});
  auto header = header_of(static_cast<FrameType>(42), key);
  h.machine.on_frame(1, header, FrameBytes{});
  REQUIRE(h.failures.size() == 1);
  CHECK(h.failures[0].first == Errc::internal);
  CHECK_THAT(h.failures[0].second, Catch::Contains("frame of type 42"));
}

TEST_CASE("workers that reduce with SUM and MEAN under one key fail with a mismatch", "[collectives][cross_worker]") {
  Harness h(2);
  const CollectiveKey key{7, 1, 0};
  const std::vector<Tensor> tensors{Tensor::from_vector<float>({1, 2})};
  h.machine.start(key, CollectiveKind::all_reduce, ReduceOp::SUM, 0, tensors);
  const auto theirs = CollectiveFingerprint::of(CollectiveKind::all_reduce, ReduceOp::MEAN, 0, tensors);
  h.machine.on_frame(1, header_of(FrameType::announce, key), AnnouncePayload{theirs, 1}.encode());
  REQUIRE(h.failures.size() == 1);
  CHECK(h.failures[0].first == Errc::key_mismatch);
  CHECK_THAT(h.failures[0].second, Catch::Contains("task worker:0 sent all_reduce(SUM)")
                                     && Catch::Contains("task worker:1 sent all_reduce(MEAN)"));
  CHECK(h.completed == 0);
}

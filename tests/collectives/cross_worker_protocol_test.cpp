// The cross-worker state machine on its own: frames in, frames and results
// out, no actors. Frames that break the protocol fail the key on this worker
// and tell the others, never a wrong count or a wait.

#include <catch2/catch.hpp>

#include <set>

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
  const auto announce = AnnouncePayload{CollectiveFingerprint::of(CollectiveKind::all_gather, ReduceOp::SUM, 0, mine), 1, {}}.encode();
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
  h.machine.on_frame(1, header_of(FrameType::announce, key), AnnouncePayload{theirs, 1, {}}.encode());
  REQUIRE(h.failures.size() == 1);
  CHECK(h.failures[0].first == Errc::key_mismatch);
  CHECK_THAT(h.failures[0].second, Catch::Contains("task worker:0 sent all_reduce(SUM)")
                                     && Catch::Contains("task worker:1 sent all_reduce(MEAN)"));
  CHECK(h.completed == 0);
}

TEST_CASE("a group that goes away aborts its pending collectives on every other worker", "[collectives][cross_worker]") {
  Harness h(3);
  const CollectiveKey started{7, 1, 0};
  const CollectiveKey heard_of{7, 1, 1}; // only worker 1 issued it so far
  const std::vector<Tensor> mine{Tensor::from_vector<float>({1, 2})};
  h.machine.start(started, CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine);
  const auto announce = AnnouncePayload{CollectiveFingerprint::of(CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine), 1, {}}.encode();
  h.machine.on_frame(1, header_of(FrameType::announce, heard_of), announce);
  h.sent.clear();
  h.machine.abort_pending("its strategy was destroyed before this collective ended");
  std::set<std::pair<int, uint32_t>> aborted; // (to, seq)
  for (const auto& [to, header] : h.sent)
    if (header.type == FrameType::abort)
      aborted.emplace(to, header.seq);
  CHECK(aborted == std::set<std::pair<int, uint32_t>>{{1, 0}, {2, 0}, {1, 1}, {2, 1}});
  CHECK_FALSE(h.machine.active(started));
  CHECK_FALSE(h.machine.active(heard_of));
}

TEST_CASE("a failure is remembered until every worker finished its run, however far this one ran ahead", "[collectives][cross_worker]") {
  Harness h(2);
  const CollectiveKey failed{7, 1, 0};
  const std::vector<Tensor> mine{Tensor::from_vector<float>({1, 2})};
  h.machine.start(failed, CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine);
  h.machine.abort(failed, "a replica failed");
  // Run 2 issued no collective; this worker is in run 3 while worker 1 is still in run 1.
  h.machine.start(CollectiveKey{7, 3, 0}, CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine);
  // Worker 1's late announce of the failed collective is dropped, not kept
  // as a collective that waits forever.
  const auto announce = AnnouncePayload{CollectiveFingerprint::of(CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine), 1, {}}.encode();
  h.machine.on_frame(1, header_of(FrameType::announce, failed), announce);
  CHECK_FALSE(h.machine.active(failed));
  // A worker that joins the failed collective late gets the same failure.
  const auto before = h.failures.size();
  h.machine.start(failed, CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine);
  REQUIRE(h.failures.size() == before + 1);
  CHECK_THAT(h.failures.back().second, Catch::Contains("a replica failed"));
}

TEST_CASE("a peer lost in the middle of a transfer fails the collective with peer_lost", "[collectives][cross_worker]") {
  CrossWorkerSetup setup = Harness::setup(2);
  setup.implementation = CommunicationImplementation::RING;
  setup.ring.chunk_bytes = 64;
  std::vector<std::pair<Errc, std::string>> failures;
  int completed = 0;
  int data_sent = 0;
  CrossWorkerCollectives machine(
    7, setup, [&](int, const FrameHeader& header, FrameBytes) { data_sent += header.type == FrameType::data ? 1 : 0; },
    [&](const CollectiveKey&, std::vector<Tensor>) { ++completed; },
    [&](const CollectiveKey&, Errc code, const std::string& why) { failures.emplace_back(code, why); });
  const CollectiveKey key{7, 1, 0};
  const std::vector<Tensor> mine{Tensor::from_vector<float>(std::vector<float>(1024, 1.0f))};
  machine.start(key, CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine);
  machine.on_frame(1, header_of(FrameType::announce, key),
                   AnnouncePayload{CollectiveFingerprint::of(CollectiveKind::all_reduce, ReduceOp::SUM, 0, mine), 1, {}}.encode());
  REQUIRE(data_sent > 0); // the transfer is under way
  machine.on_peer_lost(1, "its data connection closed", false);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].first == Errc::peer_lost);
  CHECK_THAT(failures[0].second, Catch::Contains("task worker:1 was lost: its data connection closed"));
  CHECK(completed == 0);
  CHECK_FALSE(machine.active(key));
}

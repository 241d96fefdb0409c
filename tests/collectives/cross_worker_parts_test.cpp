// The parts the cross-worker state machine is built from: the control
// frames' payloads, tensor packing, the algorithm choice and the progress
// bookkeeping shared with the group actor.

#include <catch2/catch.hpp>

#include <cstring>

#include <troupe/collectives/algorithm_selector.hpp>
#include <troupe/collectives/progress_tracker.hpp>
#include <troupe/collectives/tensor_packing.hpp>
#include <troupe/collectives/wire_payloads.hpp>
#include <troupe/core/errors.hpp>

using namespace troupe;
using namespace troupe::internal;

namespace {

FrameBytes truncated(const FrameBytes& bytes, std::size_t size) {
  return FrameBytes{bytes.owner, bytes.data, size};
}

Errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Errc{};
}

} // namespace

TEST_CASE("control frame payloads round-trip and refuse truncated frames", "[collectives][wire]") {
  const std::vector<Tensor> tensors{Tensor::from_vector<float>({1, 2, 3}, {3})};
  const auto fp = CollectiveFingerprint::of(CollectiveKind::all_reduce, ReduceOp::SUM, 0, tensors);
  const auto announce = AnnouncePayload::decode(AnnouncePayload{fp, 3, "nccl details"}.encode());
  CHECK(announce.local_replicas == 3);
  CHECK(announce.fingerprint.describe() == fp.describe());
  CHECK(announce.communicator == "nccl details");

  const auto abort = AbortPayload::decode(AbortPayload{Errc::key_mismatch, "why"}.encode());
  CHECK(abort.code == Errc::key_mismatch);
  CHECK(abort.reason == "why");
  const auto done = RunDonePayload::decode(RunDonePayload{7, ""}.encode());
  CHECK(done.issued == 7);
  CHECK(done.failure.empty());

  CHECK(code_of([&] { (void)AbortPayload::decode(truncated(AbortPayload{}.encode(), 3)); }) == Errc::data_loss);
  CHECK(code_of([&] { (void)RunDonePayload::decode(truncated(RunDonePayload{}.encode(), 0)); }) == Errc::data_loss);
  CHECK(code_of([&] { (void)AnnouncePayload::decode(truncated(AnnouncePayload{fp, 1, {}}.encode(), 7)); })
        == Errc::data_loss);
  // NCCL details longer than the frame (or the limit) are refused before they are read.
  const auto honest = AnnouncePayload{fp, 1, "abc"}.encode();
  auto lying = std::make_shared<std::vector<std::byte>>(honest.span().begin(), honest.span().end());
  const uint32_t claimed = 1u << 30;
  std::memcpy(lying->data() + lying->size() - sizeof(int64_t) - sizeof claimed, &claimed, sizeof claimed);
  CHECK(code_of([&] { (void)AnnouncePayload::decode(frame_of(lying)); }) == Errc::data_loss);
  // A code this build does not know (a newer peer's) reads as cancelled.
  auto unknown = std::make_shared<std::vector<std::byte>>(4, std::byte{0xff});
  CHECK(AbortPayload::decode(frame_of(unknown)).code == Errc::cancelled);
}

TEST_CASE("packs fuse consecutive tensors of one dtype up to bytes_per_pack", "[collectives][packing]") {
  std::vector<Tensor> tensors{Tensor::from_vector<float>({1, 2}, {2}), Tensor::from_vector<float>({3, 4, 5, 6}, {2, 2}),
                              Tensor::from_vector<double>({7}, {1}), Tensor::from_vector<float>({8}, {1})};
  const auto unlimited = plan_packs(tensors, 0);
  REQUIRE(unlimited.size() == 3); // float32 x2 | float64 | float32
  CHECK(unlimited[0].tensors == std::vector<std::size_t>{0, 1});
  CHECK(plan_packs(tensors, 8).size() == 4); // the first pack is full after 8 bytes

  std::vector<Shape> shapes;
  for (const auto& t : tensors)
    shapes.push_back(t.shape());
  const auto flat = flatten(tensors, unlimited[0]);
  CHECK(flat.shape() == Shape({6}));
  std::vector<Tensor> out(4);
  unflatten(flat, unlimited[0], shapes, out);
  CHECK(out[1].shape() == Shape({2, 2}));
  CHECK(out[1].to_vector<float>() == std::vector<float>{3, 4, 5, 6});

  const auto fp = CollectiveFingerprint::of(CollectiveKind::all_gather, ReduceOp::SUM, 0, {out[0], out[1]});
  const auto block = to_block({out[0], out[1]});
  REQUIRE(block->size() == block_bytes(fp));
  CHECK(from_block(fp, block->data())[1].to_vector<float>() == std::vector<float>{3, 4, 5, 6});
}

TEST_CASE("AUTO picks a direct exchange, then halving-doubling, then the ring as packs grow", "[collectives][selector]") {
  using CI = CommunicationImplementation;
  const AllReduceLimits limits{8192, 65536};
  // Direct while (workers - 1) x pack fits 8 KiB: 8 KiB with 2 workers, 4 KiB with 3.
  CHECK(choose_all_reduce(CI::AUTO, 8192, 2, limits).algorithm == AllReduceAlgorithm::direct_exchange);
  CHECK(choose_all_reduce(CI::AUTO, 8193, 2, limits).algorithm == AllReduceAlgorithm::halving_doubling);
  CHECK(choose_all_reduce(CI::AUTO, 4096, 3, limits).algorithm == AllReduceAlgorithm::direct_exchange);
  CHECK(choose_all_reduce(CI::AUTO, 4097, 3, limits).algorithm == AllReduceAlgorithm::halving_doubling);
  CHECK(choose_all_reduce(CI::AUTO, 1024, 2, {0, 65536}).algorithm == AllReduceAlgorithm::halving_doubling);
  CHECK(choose_all_reduce(CI::AUTO, 65537, 2, limits).algorithm == AllReduceAlgorithm::ring);
  CHECK(choose_all_reduce(CI::RING, 16, 2, limits).algorithm == AllReduceAlgorithm::ring);
  CHECK(choose_all_reduce(CI::NCCL, 16, 2, limits).algorithm == AllReduceAlgorithm::ring);
  CHECK(std::string(name(AllReduceAlgorithm::halving_doubling)) == "halving-doubling");
  CHECK(std::string(name(AllReduceAlgorithm::direct_exchange)) == "direct-exchange");
}

TEST_CASE("the progress tracker names who skipped a collective and keeps failures per run", "[collectives][progress]") {
  ProgressTracker progress(3);
  const CollectiveKey second{1, 5, 2};
  progress.working_on(0, 5);
  progress.finished(1, 5, 2, "boom"); // issued #0 and #1 of run 5, not #2
  progress.finished(2, 4, 0, "");     // an older run says nothing about run 5
  CHECK(progress.skipped(second) == std::vector<std::size_t>{1});
  CHECK(progress.skipped(CollectiveKey{1, 5, 1}).empty());
  CHECK(progress.progress(1).failure == "boom");

  progress.record_failure(second, Errc::timeout, "late");
  REQUIRE(progress.failure(second) != nullptr);
  CHECK(progress.failure(second)->first == Errc::timeout);
  progress.forget_runs_before(1, 5);
  CHECK(progress.failure(second) != nullptr); // run 5 is kept
  progress.forget_runs_before(1, 6);
  CHECK(progress.failure(second) == nullptr);
  CHECK(describe(second) == "collective #2 of strategy.run #5");
}

// The thread that watches NCCL communicators whose groups are not on their
// streams yet: it tells when one moved on, tells after the longest wait
// asked for when it did not, and never reads one it was told to forget.

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>

#include <troupe/actors/gpu/nccl_progress_poller.hpp>

#include <troupe/actors/gpu/emulated/emulated_gpus.hpp>

using namespace troupe;
using internal::NcclProgressPoller;
using testing::EmulatedGpus;
using testing::EmulatedNccl;

namespace {

constexpr auto deadline = std::chrono::seconds{20};

/// A callback for watch() and the future it sets.
struct Told {
  std::shared_ptr<std::promise<void>> promise = std::make_shared<std::promise<void>>();
  std::future<void> future = promise->get_future();
  [[nodiscard]] std::function<void()> callback() const {
    return [promise = promise] { promise->set_value(); };
  }
};

} // namespace

TEST_CASE("the NCCL poller tells once a communicator is no longer in progress", "[actors][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  auto& backend = internal::nccl_backend();
  const auto id = backend.unique_id();
  auto* first = backend.init_rank(0, id, 2, 0);  // in progress until rank 1 joins
  NcclProgressPoller poller;
  Told told;
  poller.watch(first, std::chrono::hours{1}, told.callback());
  CHECK(told.future.wait_for(std::chrono::milliseconds{0}) == std::future_status::timeout);
  auto* second = backend.init_rank(1, id, 2, 1);
  REQUIRE(told.future.wait_for(deadline) == std::future_status::ready);
  std::string error;
  CHECK(backend.state(first, error) == internal::NcclState::ready);
  backend.abort(first);
  backend.abort(second);
  CHECK(nccl.backend->misuse().empty());
}

TEST_CASE("the NCCL poller tells after the longest wait asked for, and never reads a forgotten communicator",
          "[actors][nccl]") {
  EmulatedGpus gpus(2);
  EmulatedNccl nccl;
  auto& backend = internal::nccl_backend();
  auto* stuck = backend.init_rank(0, backend.unique_id(), 2, 0);  // rank 1 never joins
  NcclProgressPoller poller;
  Told waited;
  poller.watch(stuck, std::chrono::milliseconds{1}, waited.callback());
  REQUIRE(waited.future.wait_for(deadline) == std::future_status::ready);
  // Forgotten, then aborted: the emulation notes a state read of an aborted
  // communicator as misuse, so a later round that read it would show.
  auto* forgotten = backend.init_rank(0, backend.unique_id(), 2, 0);
  Told never;
  poller.watch(forgotten, std::chrono::hours{1}, never.callback());
  poller.forget(forgotten);
  backend.abort(forgotten);
  Told later;  // told after at least one more round of the thread
  poller.watch(stuck, std::chrono::milliseconds{1}, later.callback());
  REQUIRE(later.future.wait_for(deadline) == std::future_status::ready);
  CHECK(never.future.wait_for(std::chrono::milliseconds{0}) == std::future_status::timeout);
  CHECK(nccl.backend->misuse().empty());
  backend.abort(stuck);
}

#pragma once

// Not installed yet: it includes the coordinator actor's messages; it becomes
// public with ClusterCoordinator, over a header of its own (issue 15).

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <troupe/actors/coordinator_messages.hpp>
#include <troupe/actors/fwd.hpp>

namespace troupe {

namespace internal {

/// Blocks until `outcome` is settled; returns its value bytes or raises its
/// error (Error(cancelled) for a cancelled closure, naming the first failure).
const std::vector<uint8_t>& fetch_outcome(RuntimeImpl& runtime, const ClosureOutcome& outcome, ClosureId id);

} // namespace internal

/// The future result of a function given to ClusterCoordinator::schedule
/// (tf.distribute.experimental.coordinator.RemoteValue).
///
/// Copies share one result. fetch() blocks the calling (non-actor) thread
/// until the function ran; it raises the function's error, or Error(cancelled)
/// when the function never ran because an earlier one failed (the message
/// names that failure), or Error(peer_lost) when no worker was alive to run it.
template <class R>
class RemoteValue {
public:
  /// Turns the result bytes a worker sent back into an R.
  using Decoder = std::function<R(const std::vector<uint8_t>&)>;

  RemoteValue() = default;
  RemoteValue(internal::RuntimeImpl& runtime, internal::ClosureId id, std::shared_ptr<internal::ClosureOutcome> outcome,
              Decoder decode)
    : runtime_(&runtime), id_(id), outcome_(std::move(outcome)), decode_(std::move(decode)) {}

  /// Where the function stands now; does not wait.
  [[nodiscard]] RemoteValueStatus status() const noexcept {
    return outcome_->done.done() ? outcome_->status : RemoteValueStatus::not_ready;
  }

  /// The function's result; blocks until it ran. See the class comment for errors.
  [[nodiscard]] R fetch() const { return decode_(internal::fetch_outcome(*runtime_, *outcome_, id_)); }

  /// The scheduled function's id within its coordinator (1, 2, ...).
  [[nodiscard]] internal::ClosureId closure_id() const noexcept { return id_; }

private:
  internal::RuntimeImpl* runtime_ = nullptr;
  internal::ClosureId id_ = 0;
  std::shared_ptr<internal::ClosureOutcome> outcome_;
  Decoder decode_;
};

} // namespace troupe

#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/actors/remote_value_status.hpp>

namespace troupe {

namespace internal {

struct ClosureOutcome;

/// Where `outcome` stands now; does not wait.
[[nodiscard]] RemoteValueStatus outcome_status(const ClosureOutcome& outcome) noexcept;

/// Blocks until `outcome` is settled; returns its value bytes or raises its
/// error (Error(cancelled) for a cancelled closure, naming the first failure),
/// which `cluster` (the parameter-server cluster, if any) hears of.
const std::vector<uint8_t>& fetch_outcome(Executor& runtime, PsCluster* cluster, const ClosureOutcome& outcome,
                                          uint64_t closure_id);

} // namespace internal

/// The future result of a function given to ClusterCoordinator::schedule
/// (tf.distribute.experimental.coordinator.RemoteValue).
///
/// Copies share one result. fetch() blocks the calling (non-actor) thread
/// until the function ran; it raises the function's error, or Error(cancelled)
/// when the function never ran because an earlier one failed (the message
/// names that failure), or Error(peer_lost) when no worker was alive to run it
/// or a parameter server was lost.
template <class R>
class RemoteValue {
public:
  /// Turns the result bytes a worker sent back into an R.
  using Decoder = std::function<R(const std::vector<uint8_t>&)>;

  RemoteValue() = default;
  RemoteValue(internal::Executor& runtime, internal::PsCluster* cluster, uint64_t closure_id,
              std::shared_ptr<internal::ClosureOutcome> outcome, Decoder decode)
    : runtime_(&runtime), cluster_(cluster), id_(closure_id), outcome_(std::move(outcome)),
      decode_(std::move(decode)) {}

  /// Where the function stands now; does not wait. not_ready for an empty RemoteValue.
  [[nodiscard]] RemoteValueStatus status() const noexcept {
    return outcome_ ? internal::outcome_status(*outcome_) : RemoteValueStatus::not_ready;
  }

  /// The function's result; blocks until it ran. See the class comment for errors.
  R fetch() const {
    check_valid();
    return decode_(internal::fetch_outcome(*runtime_, cluster_, *outcome_, id_));
  }

  /// The scheduled function's id within its coordinator (1, 2, ...).
  [[nodiscard]] uint64_t closure_id() const noexcept { return id_; }

private:
  void check_valid() const;

  internal::Executor* runtime_ = nullptr;
  internal::PsCluster* cluster_ = nullptr;
  uint64_t id_ = 0;
  std::shared_ptr<internal::ClosureOutcome> outcome_;
  Decoder decode_;
};

namespace internal {
/// Error(failed_precondition): fetch on a RemoteValue that no schedule made.
[[noreturn]] void fail_empty_remote_value();
} // namespace internal

template <class R>
void RemoteValue<R>::check_valid() const {
  if (!outcome_)
    internal::fail_empty_remote_value();
}

} // namespace troupe

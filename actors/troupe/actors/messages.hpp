#pragma once

// Messages between the replica actors of one process and their collective
// group actor. They carry closures and shared plans, so they never leave the
// process: CAF is told they are local-only (CAF_ALLOW_UNSAFE_MESSAGE_TYPE)
// rather than given inspect overloads. Messages that cross processes live in
// the type-ID blocks (core/type_ids.hpp).

#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>

#include <troupe/actors/replica_handle.hpp>
#include <troupe/actors/run_job.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/collectives/local_all_reduce.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

/// Edge -> replica: run `job->body(replica)` on your fiber.
struct RunMsg {
  std::shared_ptr<RunJob> job;
};

/// Replica -> group: my part of collective `key`.
struct ContributionMsg {
  CollectiveKey key;
  int replica = 0;
  CollectiveFingerprint fingerprint;
  std::shared_ptr<CollectiveRequest> request;
};

/// Group -> replica: reduce part `part` of `plan`.
struct ReducePartMsg {
  CollectiveKey key;
  std::shared_ptr<LocalAllReduce> plan;
  size_t part = 0;
};

/// Replica -> group: part `part` of `key` is reduced (or failed with `failure`).
struct PartDoneMsg {
  CollectiveKey key;
  size_t part = 0;
  std::string failure;
};

/// Group -> replica: collective `key` finished, with a result or an error.
struct CollectiveDoneMsg {
  CollectiveKey key;
  std::shared_ptr<CollectiveResult> result; ///< null when it failed
  Errc code = Errc::internal;
  std::string message;
  /// The exception a merge_call function threw, rethrown as-is on every replica.
  std::exception_ptr exception;
};

/// Replica -> group: my function for run `run` returned after issuing
/// `issued` collectives (`failure` is its error text when it threw).
struct ReplicaFinishedMsg {
  uint64_t run = 0;
  int replica = 0;
  uint32_t issued = 0;
  std::string failure;
};

/// Group -> itself: check deadlines and stall warnings.
struct DeadlineTickMsg {};

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::RunMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ContributionMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ReducePartMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::PartDoneMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CollectiveDoneMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ReplicaFinishedMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::DeadlineTickMsg)

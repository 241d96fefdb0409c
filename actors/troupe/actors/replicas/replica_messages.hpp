#pragma once

// The messages a ReplicaActor accepts (replica_actor.hpp).
// They carry closures and shared plans, so they never leave the process: CAF
// is told they are local-only (CAF_ALLOW_UNSAFE_MESSAGE_TYPE) rather than
// given inspect overloads. Messages that cross processes live in type-ID
// blocks (core/type_ids.hpp, net/bootstrap/cluster_types.hpp).

#include <cstddef>
#include <exception>
#include <memory>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>

#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/actors/replicas/run_job.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/collectives/local_all_reduce.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

/// Edge -> replica: run `job->body(replica)` on your fiber.
struct RunMsg {
  std::shared_ptr<RunJob> job;
};

/// Group -> replica: reduce part `part` of `plan`.
struct ReducePartMsg {
  CollectiveKey key;
  std::shared_ptr<LocalAllReduce> plan;
  size_t part = 0;
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

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::RunMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ReducePartMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::CollectiveDoneMsg)

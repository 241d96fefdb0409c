#pragma once

// The messages a ReplicaActor accepts (replica_actor.hpp), and its typed
// handle. They carry closures and shared plans, so they never leave the
// process: their inspect() overloads print them and refuse serialisation
// (core/local_only.hpp). Messages that cross processes live in type-ID
// blocks (core/type_ids.hpp, net/bootstrap/cluster_types.hpp).

#include <cstddef>
#include <exception>
#include <memory>
#include <string>

#include <caf/typed_actor.hpp>

#include <troupe/actors/fibers/fiber_waiter.hpp>
#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/actors/replicas/run_job.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/collectives/collective_key_inspect.hpp>
#include <troupe/collectives/local_all_reduce.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/local_only.hpp>

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

// Local-only: the job's body, the plan and the result are shared in memory.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunMsg& x) {
  uint64_t run = x.job ? x.job->run_id : 0;
  return inspect_local_only(f, "troupe::RunMsg", run);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ReducePartMsg& x) {
  return inspect_local_only(f, "troupe::ReducePartMsg", x.key, x.part);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CollectiveDoneMsg& x) {
  bool failed = x.result == nullptr;
  return inspect_local_only(f, "troupe::CollectiveDoneMsg", x.key, failed, x.code, x.message);
}

/// What a replica accepts (ReplicaActor).
using ReplicaActorHandle = caf::typed_actor<caf::reacts_to<RunMsg>, caf::reacts_to<CollectiveDoneMsg>,
                                            caf::reacts_to<FiberWakeMsg>, caf::reacts_to<ReducePartMsg>>;

} // namespace troupe::internal

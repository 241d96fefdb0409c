#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <vector>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/fibers/fiber_local.hpp>

namespace troupe::internal {

class WorkerContext;

/// One strategy.run across a group: the per-replica body, each replica's
/// outcome, and the completion the caller waits on.
struct RunJob {
  RunJob(const std::function<void(int)>& fn, uint64_t id, int replicas)
    : body(fn), run_id(id), errors(static_cast<size_t>(replicas)), remaining(replicas) {}

  /// Records replica `replica`'s outcome; the last one raises `completion`.
  void replica_done(int replica, std::exception_ptr error) noexcept {
    errors[static_cast<size_t>(replica)] = std::move(error);
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1)
      completion.set();
  }

  const std::function<void(int)>& body; // owned by the blocked caller
  uint64_t run_id;
  std::vector<std::exception_ptr> errors;
  std::atomic<int> remaining;
  Completion completion;
  /// The scheduled function that called strategy.run, if any: its replicas
  /// stage their variable updates under that function's attempt.
  WorkerContext* worker = FiberLocal<WorkerContext>::current();
};

} // namespace troupe::internal

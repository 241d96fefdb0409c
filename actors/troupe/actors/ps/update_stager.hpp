#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/core/local_only.hpp>
#include <troupe/actors/ps/worker_context.hpp>

namespace troupe::internal {

/// One WorkerContext::stage call: what to stage, and where the waiting
/// function learns how it went.
struct StageSlot {
  WorkerContext* context = nullptr; ///< alive while its function waits
  AttemptId attempt;
  std::vector<WorkerContext::StageTarget> updates;
  std::size_t pending = 0;
  bool failed = false;
  Errc code = Errc::internal;
  std::string error;
  Completion done;
};

/// Function fiber -> the worker's stager: stage `slot->updates`.
struct StageUpdatesMsg {
  std::shared_ptr<StageSlot> slot;
};

// Local-only: the slot is where the function's fiber waits.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StageUpdatesMsg& x) {
  std::size_t updates = x.slot ? x.slot->updates.size() : 0;
  return inspect_local_only(f, "troupe::StageUpdatesMsg", updates);
}

/// Spawns a worker's stager: the one actor that sends that worker's
/// PsStageMsg, numbering each attempt's stages at each server 0, 1, ... in
/// the order it sends them (CAF keeps the order between two actors, so a
/// server sees no gap), with the collective timeout as each one's deadline.
[[nodiscard]] UpdateStagerHandle spawn_update_stager(Executor& runtime);

} // namespace troupe::internal

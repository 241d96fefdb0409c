#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <troupe/actors/fibers/completion.hpp>
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

/// Spawns a worker's stager: the one actor that sends that worker's
/// PsStageMsg, numbering each attempt's stages at each server 0, 1, ... in
/// the order it sends them (CAF keeps the order between two actors, so a
/// server sees no gap), with the collective timeout as each one's deadline.
[[nodiscard]] caf::actor spawn_update_stager(Executor& runtime);

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::StageUpdatesMsg)

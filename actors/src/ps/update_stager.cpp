#include <troupe/actors/ps/update_stager.hpp>

#include <troupe/actors/runtime/request_error.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {


/// A stage request not settled yet: `open` turns false once it is.
struct OpenStage {
  std::shared_ptr<bool> open;
  std::shared_ptr<StageSlot> slot;
  std::size_t index = 0;
};

struct StagerState {
  AttemptId attempt;
  std::map<int, uint32_t> next_sequence; ///< per ps task, for `attempt`
  /// Per server, its stages in flight; the servers are monitored, since CAF
  /// fails a request to a lost actor only at its deadline.
  std::map<caf::actor_addr, std::vector<OpenStage>> in_flight;
};

/// Counts one settled stage of `slot`, and wakes its function after the last.
void finish(StageSlot& slot) {
  if (--slot.pending == 0)
    slot.done.set();
}

/// Records the first failure of `slot`'s stages.
void record_failure(StageSlot& slot, Errc code, std::string error) {
  if (slot.failed)
    return;
  slot.failed = true;
  slot.code = code;
  slot.error = std::move(error);
}

caf::behavior update_stager(caf::stateful_actor<StagerState>* self) {
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(knobs().collective_timeout_seconds));
  // A lost server (its process died, or froze past the peer timeout) fails
  // its stages in flight at once, not at their deadline.
  self->set_down_handler([self](caf::down_msg& msg) {
    auto i = self->state.in_flight.find(msg.source);
    if (i == self->state.in_flight.end())
      return;
    for (auto& stage : i->second) {
      if (!*stage.open)
        continue;
      *stage.open = false;
      record_failure(*stage.slot, Errc::peer_lost,
                     stage.slot->updates[stage.index].what + " under " + to_string(stage.slot->attempt)
                       + " failed: the server's actor terminated (" + self->system().render(msg.reason)
                       + "): its task was lost");
      finish(*stage.slot);
    }
    self->state.in_flight.erase(i);
  });
  return {
    [self, timeout](StageUpdatesMsg& msg) {
      auto slot = msg.slot;
      if (!(slot->attempt == self->state.attempt)) {
        self->state.attempt = slot->attempt;
        self->state.next_sequence.clear();
      }
      for (std::size_t i = 0; i < slot->updates.size(); ++i) {
        auto& target = slot->updates[i];
        const uint32_t sequence = self->state.next_sequence[target.ps]++;
        auto open = std::make_shared<bool>(true);
        auto& stages = self->state.in_flight[target.server.address()];
        if (stages.empty())
          self->monitor(target.server);
        std::erase_if(stages, [](const OpenStage& stage) { return !*stage.open; });
        stages.push_back({open, slot, i});
        self->request(target.server, timeout, PsStageMsg{slot->attempt, sequence, target.update})
          .then(
            [slot, i, open] {
              if (!std::exchange(*open, false))
                return;
              slot->context->count_staged(slot->attempt, slot->updates[i].ps);
              finish(*slot);
            },
            [self, slot, i, open](caf::error& err) {
              if (!std::exchange(*open, false))
                return;
              const auto code = request_errc(err);
              record_failure(*slot, code,
                             slot->updates[i].what + " under " + to_string(slot->attempt) + " failed: "
                               + self->system().render(err)
                               + (code == Errc::timeout
                                    ? "; is the server alive? TROUPE_COLLECTIVE_TIMEOUT_SECONDS sets the deadline"
                                    : ""));
              finish(*slot);
            });
      }
    },
  };
}

} // namespace

caf::actor spawn_update_stager(Executor& runtime) {
  return runtime.system().spawn(update_stager);
}

} // namespace troupe::internal

#include <troupe/actors/ps/update_stager.hpp>

#include <map>
#include <memory>
#include <type_traits>
#include <utility>

#include <caf/all.hpp>

#include <troupe/actors/ps/ps_client.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {

struct StagerState {
  AttemptId attempt;
  std::map<int, uint32_t> next_sequence; ///< per ps task, for `attempt`
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

UpdateStagerHandle::behavior_type update_stager(UpdateStagerHandle::stateful_pointer<StagerState> self) {
  auto client = std::make_shared<BasicPsClient<std::remove_pointer_t<decltype(self)>>>(self);
  self->set_down_handler([client](caf::down_msg& msg) { client->server_down(msg); });
  return {
    [self, client](StageUpdatesMsg& msg) {
      auto slot = msg.slot;
      if (!(slot->attempt == self->state.attempt)) {
        self->state.attempt = slot->attempt;
        self->state.next_sequence.clear();
      }
      for (std::size_t i = 0; i < slot->updates.size(); ++i) {
        auto& target = slot->updates[i];
        const uint32_t sequence = self->state.next_sequence[target.ps]++;
        client->request<void>(
          target.server, target.what + " under " + to_string(slot->attempt),
          PsStageMsg{slot->attempt, sequence, target.update},
          [slot, i] {
            slot->context->count_staged(slot->attempt, slot->updates[i].ps);
            finish(*slot);
          },
          [slot](Errc code, std::string error) {
            record_failure(*slot, code, std::move(error));
            finish(*slot);
          });
      }
    },
  };
}

} // namespace

UpdateStagerHandle spawn_update_stager(Executor& runtime) {
  return runtime.system().spawn(update_stager);
}

} // namespace troupe::internal

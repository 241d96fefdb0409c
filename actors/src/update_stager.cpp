#include <troupe/actors/update_stager.hpp>

#include <troupe/actors/request_error.hpp>

#include <chrono>
#include <map>

#include <caf/all.hpp>

#include <troupe/actors/runtime_impl.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/type_ids.hpp>

namespace troupe::internal {

namespace {


struct StagerState {
  AttemptId attempt;
  std::map<int, uint32_t> next_sequence; ///< per ps task, for `attempt`
};

caf::behavior update_stager(caf::stateful_actor<StagerState>* self) {
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::duration<double>(knobs().collective_timeout_seconds));
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
        auto finish = [slot] {
          if (--slot->pending == 0)
            slot->done.set();
        };
        self->request(target.server, timeout, PsStageMsg{slot->attempt, sequence, target.update})
          .then(
            [slot, i, finish] {
              slot->context->count_staged(slot->attempt, slot->updates[i].ps);
              finish();
            },
            [self, slot, i, finish](caf::error& err) {
              if (!slot->failed) {
                slot->failed = true;
                slot->code = request_errc(err);
                slot->error = slot->updates[i].what + " under " + to_string(slot->attempt) + " failed: "
                              + self->system().render(err)
                              + (slot->code == Errc::timeout
                                   ? "; is the server alive? TROUPE_COLLECTIVE_TIMEOUT_SECONDS sets the deadline"
                                   : "");
              }
              finish();
            });
      }
    },
  };
}

} // namespace

caf::actor spawn_update_stager(RuntimeImpl& runtime) {
  return runtime.system().spawn(update_stager);
}

} // namespace troupe::internal

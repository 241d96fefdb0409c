#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/timespan.hpp>

#include <troupe/actors/ps/ps_settings_messages.hpp>

namespace troupe::internal {

/// The chief's side of check_same_across_workers in a parameter-server
/// cluster across processes, where parameter servers, which take part in no
/// collective, must agree too. Published on the chief's node; every worker
/// and ps task sends it PsSettingsMsg for each of its calls, the chief's
/// edge PsSettingsChiefMsg. Protocol, per round (the n-th call of each task):
///
/// 1. Collect the chief's settings and those of every member (`members`:
///    the tasks but the chief) that is not lost (TaskLostMsg, from the
///    chief's node: a lost worker is checked when it rejoins).
/// 2. Once all are there, decide: the round's verdict is
///    require_same_settings over them, the chief's first ("the tasks differ:
///    \"--optimizer\" is adam on chief:0, but sgd on worker:1"), or empty.
///    Every waiting task and the chief get it: all fail, or none.
/// 3. Tasks still missing `wait` after the chief's call (the init timeout)
///    make the verdict an error naming them.
/// 4. A task whose settings for a decided round come later (a restarted
///    worker that rejoined) is judged against the chief's alone: refused,
///    and named in the chief's log, when they differ; the job goes on.
class PsSettingsAgreement final : public PsSettingsAgreementHandle::base {
public:
  PsSettingsAgreement(caf::actor_config& cfg, std::vector<std::string> members, caf::timespan wait);

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.ps_settings"; }

private:
  struct Round {
    std::optional<std::string> chief;              ///< the chief's encoded settings
    std::map<std::string, std::string> sent;        ///< task -> its encoded settings
    std::vector<caf::response_promise> waiting;     ///< tasks waiting for the verdict
    std::shared_ptr<PsSettingsSlot> chief_slot;
    std::optional<std::string> verdict;             ///< once decided
  };

  caf::result<PsSettingsVerdictMsg> on_task(PsSettingsMsg& msg);
  void on_chief(PsSettingsChiefMsg& msg);
  /// Decides `round` when every task that is not lost has sent its settings.
  void try_decide(uint32_t round);
  void decide(uint32_t round, std::string verdict);
  /// The verdict over the chief's settings and `tasks`' (task, settings).
  [[nodiscard]] std::string compare(const std::string& chief,
                                    const std::vector<std::pair<std::string, std::string>>& tasks) const;
  [[nodiscard]] std::vector<std::string> missing(const Round& round) const;

  std::vector<std::string> members_;
  caf::timespan wait_;
  std::set<std::string> lost_;
  std::map<uint32_t, Round> rounds_;
};

} // namespace troupe::internal

#pragma once

// The messages of check_same_across_workers in a parameter-server cluster
// across processes (ps_settings_agreement.hpp): every worker and ps task
// sends its settings to the chief, whose agreement actor answers each with
// the one verdict. The wire messages have bounded inspect overloads and the
// type-ID block troupe_ps_settings; the chief's own call stays local.
// Include only from .cpp files and tests. docs/protocol.md, "Agreeing on a
// parameter-server job's settings".

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/core/bounded_field.hpp>
#include <troupe/core/local_only.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>

namespace caf {
class actor_system_config;
} // namespace caf

namespace troupe::internal {

/// Worker or ps task -> the chief's agreement actor: the settings `task`
/// passes to its `round`-th call of check_same_across_workers (0, 1, ...),
/// as encode_settings made them. Answered with PsSettingsVerdictMsg.
struct PsSettingsMsg {
  uint32_t round = 0;
  std::string task; ///< "worker:1"
  std::string settings;

  static constexpr std::size_t max_task_bytes = 256;
  /// Far above any job's flags and specs.
  static constexpr std::size_t max_settings_bytes = 1024 * 1024;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsSettingsMsg& x) {
  return f(caf::meta::type_name("troupe::PsSettingsMsg"), x.round,
           bounded(x.task, PsSettingsMsg::max_task_bytes, "a settings message's task"),
           bounded(x.settings, PsSettingsMsg::max_settings_bytes, "a task's settings"));
}

/// The chief's agreement actor -> a task that sent PsSettingsMsg: the
/// verdict of `round`, empty when the task's settings are the chief's and
/// every task's agree; otherwise the error every task of the round raises.
struct PsSettingsVerdictMsg {
  uint32_t round = 0;
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsSettingsVerdictMsg& x) {
  return f(caf::meta::type_name("troupe::PsSettingsVerdictMsg"), x.round,
           bounded(x.error, max_error_text_bytes, "a settings verdict"));
}

/// Where the chief's own call waits for its round's verdict.
struct PsSettingsSlot {
  std::string error;
  Completion done;
};

/// The chief's edge -> its agreement actor (local): the chief's settings
/// for `round`; `slot` gets the verdict.
struct PsSettingsChiefMsg {
  uint32_t round = 0;
  std::string settings;
  std::shared_ptr<PsSettingsSlot> slot;
};

/// The agreement actor -> itself: `round`'s wait for the tasks is over.
struct PsSettingsDeadlineMsg {
  uint32_t round = 0;
};

// Local-only: the chief's call carries a slot its thread waits on.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsSettingsChiefMsg& x) {
  return inspect_local_only(f, "troupe::PsSettingsChiefMsg", x.round, x.settings);
}

// The actor's own timer: no type ID, but it prints.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PsSettingsDeadlineMsg& x) {
  return f(caf::meta::type_name("troupe::PsSettingsDeadlineMsg"), x.round);
}

/// What the chief's settings agreement accepts (PsSettingsAgreement): the
/// tasks' settings (answered with the round's verdict), the chief's own, its
/// timer, and the chief's node's verdicts on members.
using PsSettingsAgreementHandle = caf::typed_actor<
  caf::replies_to<PsSettingsMsg>::with<PsSettingsVerdictMsg>, caf::reacts_to<PsSettingsChiefMsg>,
  caf::reacts_to<PsSettingsDeadlineMsg>, caf::reacts_to<TaskLostMsg>, caf::reacts_to<TaskJoinedMsg>>;

/// Registers the wire messages above (make_config does it for every Runtime).
void add_ps_settings_types(caf::actor_system_config& cfg);

} // namespace troupe::internal

CAF_BEGIN_TYPE_ID_BLOCK(troupe_ps_settings, caf::id_block::troupe_coordinator::end)
  CAF_ADD_TYPE_ID(troupe_ps_settings, (troupe::internal::PsSettingsMsg))
  CAF_ADD_TYPE_ID(troupe_ps_settings, (troupe::internal::PsSettingsVerdictMsg))
CAF_END_TYPE_ID_BLOCK(troupe_ps_settings)

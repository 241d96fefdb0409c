#include <troupe/actors/ps/ps_settings_agreement.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <caf/all.hpp>

#include <troupe/actors/replicas/settings_agreement.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>

namespace troupe::internal {

namespace {

constexpr const char* chief_task = "chief:0";
/// The calls of check_same_across_workers a job may make (each keeps its round).
constexpr uint32_t max_rounds = 4096;
constexpr const char* check_name = "check_same_across_workers";
constexpr const char* fix = "Start every task of the job (chief, workers and parameter servers) with the same "
                            "settings.";

std::string listed(const std::vector<std::string>& tasks) {
  std::string out;
  for (const auto& task : tasks)
    out += (out.empty() ? "" : ", ") + task;
  return out;
}

std::string seconds_of(caf::timespan t) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", std::chrono::duration<double>(t).count());
  return text;
}

} // namespace

void add_ps_settings_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::troupe_ps_settings>();
}

PsSettingsAgreement::PsSettingsAgreement(caf::actor_config& cfg, std::vector<std::string> members, caf::timespan wait)
  : PsSettingsAgreementHandle::base(cfg), members_(std::move(members)), wait_(wait) {
}

PsSettingsAgreement::behavior_type PsSettingsAgreement::make_behavior() {
  // An error that comes as a message (a task bounced a verdict it did not
  // expect) would end this actor by CAF's default; the job's check goes on.
  set_error_handler([this](caf::error& error) {
    TROUPE_LOG(warning, "net") << "the chief's settings agreement ignored an error sent to it: "
                               << system().render(error);
  });
  return {
    [this](PsSettingsMsg& msg) { return on_task(msg); },
    [this](PsSettingsChiefMsg& msg) { on_chief(msg); },
    [this](const PsSettingsDeadlineMsg& msg) {
      auto i = rounds_.find(msg.round);
      if (i == rounds_.end() || i->second.verdict)
        return;
      decide(msg.round, std::string(check_name) + ": task(s) " + listed(missing(i->second))
                          + " sent no settings for this check within " + seconds_of(wait_)
                          + " of the chief's (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS): every task of the job must "
                            "make the chief's calls of check_same_across_workers, in the same order, before "
                            "Runtime::serve(); is it running the same program?");
    },
    [this](const TaskLostMsg& msg) {
      // Not waited for: a restarted worker is judged when it rejoins.
      lost_.insert(msg.task);
      for (const auto& [round, state] : rounds_)
        if (!state.verdict)
          try_decide(round);
    },
    [this](const TaskJoinedMsg& msg) { lost_.erase(msg.task); },
  };
}

void PsSettingsAgreement::on_exit() {
  for (auto& [round, state] : rounds_) {
    if (state.chief_slot && !state.verdict) {
      state.chief_slot->error = "check_same_across_workers: the chief's cluster is shutting down";
      state.chief_slot->done.set();
    }
  }
  rounds_.clear();
}

caf::result<PsSettingsVerdictMsg> PsSettingsAgreement::on_task(PsSettingsMsg& msg) {
  if (msg.task == chief_task || std::find(members_.begin(), members_.end(), msg.task) == members_.end())
    return PsSettingsVerdictMsg{msg.round, std::string(check_name) + ": \"" + msg.task
                                             + "\" is no task of this cluster, whose tasks are " + chief_task
                                             + ", " + listed(members_)};
  // Bounded: a round is a call of check_same_across_workers, a few per job.
  if (msg.round >= max_rounds)
    return PsSettingsVerdictMsg{msg.round, std::string(check_name) + ": task " + msg.task + " sent its call number "
                                             + std::to_string(msg.round) + "; a job makes at most "
                                             + std::to_string(max_rounds) + " of them"};
  auto& round = rounds_[msg.round];
  if (round.verdict) {
    // Late: a task that rejoined after the round was decided.
    if (!round.verdict->empty())
      return PsSettingsVerdictMsg{msg.round, *round.verdict};
    auto verdict = compare(*round.chief, {{msg.task, msg.settings}});
    if (!verdict.empty())
      TROUPE_LOG(warning, "net") << "the chief refused task " << msg.task
                                 << ", which rejoined with other settings than the job's: " << verdict;
    return PsSettingsVerdictMsg{msg.round, std::move(verdict)};
  }
  round.sent[msg.task] = std::move(msg.settings);
  auto promise = make_response_promise();
  round.waiting.push_back(promise);
  try_decide(msg.round);
  return promise;
}

void PsSettingsAgreement::on_chief(PsSettingsChiefMsg& msg) {
  auto& round = rounds_[msg.round];
  round.chief = std::move(msg.settings);
  round.chief_slot = std::move(msg.slot);
  delayed_send(this, wait_, PsSettingsDeadlineMsg{msg.round});
  try_decide(msg.round);
}

std::vector<std::string> PsSettingsAgreement::missing(const Round& round) const {
  std::vector<std::string> tasks;
  for (const auto& task : members_)
    if (round.sent.count(task) == 0 && lost_.count(task) == 0)
      tasks.push_back(task);
  return tasks;
}

void PsSettingsAgreement::try_decide(uint32_t number) {
  auto& round = rounds_[number];
  if (round.verdict || !round.chief || !missing(round).empty())
    return;
  std::vector<std::pair<std::string, std::string>> tasks;
  for (const auto& task : members_)
    if (auto i = round.sent.find(task); i != round.sent.end())
      tasks.emplace_back(task, i->second);
  decide(number, compare(*round.chief, tasks));
}

void PsSettingsAgreement::decide(uint32_t number, std::string verdict) {
  auto& round = rounds_[number];
  round.verdict = verdict;
  for (auto& promise : round.waiting)
    promise.deliver(PsSettingsVerdictMsg{number, verdict});
  round.waiting.clear();
  if (round.chief_slot) {
    round.chief_slot->error = std::move(verdict);
    round.chief_slot->done.set();
    round.chief_slot.reset();
  }
}

std::string PsSettingsAgreement::compare(const std::string& chief,
                                         const std::vector<std::pair<std::string, std::string>>& tasks) const {
  try {
    std::vector<WorkerSettings> all{{chief_task, decode_settings(chief, chief_task)}};
    for (const auto& [task, bytes] : tasks)
      all.push_back({task, decode_settings(bytes, task)});
    require_same_settings(all, check_name, fix, "tasks");
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

} // namespace troupe::internal

#include <troupe/actors/ps/ps_cluster.hpp>

#include <caf/all.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/ps/parameter_server_actor.hpp>
#include <troupe/actors/ps/ps_settings_agreement.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/actors/ps/worker_actor.hpp>
#include <troupe/actors/ps/worker_context.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/net/bootstrap/cluster_directory.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>
#include <troupe/collectives/flight_recorder.hpp>
#include <troupe/core/timeline.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <set>

namespace troupe::internal {

namespace {

constexpr const char* published_server = "troupe.parameter_server";
constexpr const char* published_worker = "troupe.worker";
constexpr const char* published_settings = "troupe.settings";

caf::timespan init_timeout() {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(knobs().cluster_init_timeout_seconds));
}

/// "worker:1" for job "worker", index 1: how the cluster node names members.
std::string member(const char* job, int index) {
  return std::string(job) + ":" + std::to_string(index);
}

} // namespace

/// Across processes: where the node's verdicts on lost tasks go.
struct PsCluster::LossRouting {
  std::mutex mutex;
  CoordinatorActorHandle coordinator;
  std::map<std::string, caf::actor> workers; ///< the chief's view: "worker:1" -> its WorkerActor
  std::map<std::string, int> servers;        ///< "ps:0" -> 0
  std::map<std::string, std::string> lost;   ///< member -> why, for a coordinator attached later
  /// Members lost after they last (re)joined: a rejoined worker whose actor
  /// lookup answers after its new process was lost too is not added.
  std::set<std::string> lost_since_join;
  /// Set, on a worker or ps task, when serve() must end: the chief left or
  /// was lost, or a parameter server was lost.
  Completion task_ends;
  bool chief_gone = false;
  bool chief_left = false;
  std::string chief_why;
  std::string chief_job_error; ///< the chief said its job failed (its farewell)
  std::string ps_lost;         ///< "ps:1", the first parameter server lost
  std::string ps_why;
};

std::string task_name(const char* job, int index) {
  return std::string("/job:") + job + "/replica:0/task:" + std::to_string(index);
}

PsCluster::PsCluster(Executor& runtime, PsClusterShape shape) : runtime_(runtime), shape_(shape) {
  for (int j = 0; j < shape_.ps; ++j)
    servers_.push_back(runtime_.system().spawn<ParameterServerActor>(ParameterServerOptions{task_name("ps", j)}));
  // One process: the program registered its functions before it schedules.
  for (int i = 0; i < shape_.workers; ++i) {
    workers_.push_back(spawn_worker(i));
    workers_.back().context->mark_program_ready();
  }
}

PsCluster::PsCluster(Executor& runtime, ClusterDirectory& node, int devices_per_worker)
  : runtime_(runtime), node_(&node), task_type_(node.task_type()), task_index_(node.task_index()),
    routing_(std::make_shared<LossRouting>()) {
  shape_.workers = static_cast<int>(node.tasks_of("worker").size());
  shape_.ps = static_cast<int>(node.tasks_of("ps").size());
  shape_.devices_per_worker = devices_per_worker;
  // This task's own actor first, published, so that the others' lookups find it.
  if (task_type_ == "ps") {
    auto server = runtime_.system().spawn<ParameterServerActor>(ParameterServerOptions{task_name("ps", task_index_)});
    node.publish(published_server, caf::actor_cast<caf::actor>(server));
    own_server_ = server;
  } else if (task_type_ == "worker") {
    workers_.push_back(spawn_worker(task_index_));
    node.publish(published_worker, workers_.back().actor);
  } else if (is_coordinator()) {
    std::vector<std::string> members;
    for (const auto& task : node.members())
      if (task != node.task_type() + ":" + std::to_string(node.task_index()))
        members.push_back(task);
    settings_agreement_ = runtime_.system().spawn<PsSettingsAgreement>(std::move(members), init_timeout());
    node.watch_losses(caf::actor_cast<caf::actor>(settings_agreement_));
    node.publish(published_settings, caf::actor_cast<caf::actor>(settings_agreement_));
  }
  try {
    look_up_peers(node);
  } catch (...) {
    // The runtime's actor system would wait forever for this task's own actors.
    if (own_server_)
      caf::anon_send_exit(own_server_, caf::exit_reason::user_shutdown);
    if (settings_agreement_)
      caf::anon_send_exit(settings_agreement_, caf::exit_reason::user_shutdown);
    for (auto& worker : workers_)
      if (worker.context)
        caf::anon_send_exit(worker.actor, caf::exit_reason::user_shutdown);
    throw;
  }
  auto routing = routing_;
  const bool coordinator = is_coordinator();
  const auto lookup_timeout = std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(knobs().cluster_init_timeout_seconds));
  loss_listener_ = runtime_.system().spawn([routing, coordinator, lookup_timeout](
                                             LossListenerHandle::pointer self) -> LossListenerHandle::behavior_type {
    return {
      [=](TaskJoinedMsg& msg) {
        // A restarted worker process took its task's place: the coordinator
        // sends it closures again. Its own WorkerContext builds its
        // per-worker datasets and iterators afresh, on first use.
        if (!coordinator || msg.task.rfind("worker:", 0) != 0 || (!msg.node && !msg.worker))
          return;
        const auto task = msg.task;
        auto take_back = [routing, task](caf::actor& worker) {
          std::lock_guard<std::mutex> lock(routing->mutex);
          // Lost again before its actor was found: the next rejoin brings it back.
          if (routing->lost_since_join.count(task) != 0)
            return;
          routing->lost.erase(task);
          routing->workers[task] = worker;
          if (routing->coordinator)
            caf::anon_send(routing->coordinator,
                           CoordinatorAddWorkerMsg{worker, task_name("worker", std::stoi(task.substr(7)))});
          TROUPE_LOG(info, "net") << "the coordinator takes task " << task << " back: its restarted process "
                                  << "runs scheduled functions again";
        };
        if (msg.worker) { // a simulated cluster names the published worker at once
          {
            std::lock_guard<std::mutex> lock(routing->mutex);
            routing->lost_since_join.erase(task);
          }
          take_back(msg.worker);
          return;
        }
        self->request(msg.node, lookup_timeout, NodeLookupMsg{published_worker})
          .then(
            take_back,
            [task](caf::error& e) {
              TROUPE_LOG(warning, "net") << "the coordinator cannot take the rejoined task " << task
                                         << " back: its worker actor was not found (" << caf::to_string(e)
                                         << "); it gets no functions";
            });
        std::lock_guard<std::mutex> lock(routing->mutex);
        routing->lost_since_join.erase(task);
      },
      [routing](TaskLostMsg& msg) {
        std::lock_guard<std::mutex> lock(routing->mutex);
        if (msg.task.rfind("chief:", 0) == 0) {
          routing->chief_gone = true;
          routing->chief_left = msg.left;
          routing->chief_why = msg.why;
          routing->chief_job_error = msg.job_error;
          routing->task_ends.set();
          return;
        }
        const std::string why = msg.left ? "it ended (" + msg.why + ")" : msg.why;
        // A parameter server gone after the chief said farewell ended with
        // the job: the chief's word is why this task ends, though the
        // chief's own verdict may come later (its data plane's grace).
        if (msg.task.rfind("ps:", 0) == 0 && msg.chief_said_farewell && !routing->chief_gone
            && routing->ps_lost.empty()) {
          routing->chief_gone = true;
          routing->chief_left = true;
          routing->chief_why = "it said farewell, and " + msg.task + " ended after it";
          routing->chief_job_error = msg.chief_job_error;
          routing->task_ends.set();
        }
        // The variables a parameter server held are gone: no task of the
        // job can go on (the chief fails its calls, and every other task
        // ends serve() at once instead of waiting for the chief).
        // (A ps task that left normally follows the chief's end of the job.)
        if (msg.task.rfind("ps:", 0) == 0 && (!msg.left || !msg.job_error.empty()) && routing->ps_lost.empty()) {
          routing->ps_lost = msg.task;
          routing->ps_why = why;
          routing->task_ends.set();
        }
        routing->lost[msg.task] = why;
        routing->lost_since_join.insert(msg.task);
        if (!routing->coordinator)
          return;
        if (auto w = routing->workers.find(msg.task); w != routing->workers.end())
          caf::anon_send(routing->coordinator, CoordinatorWorkerLostMsg{w->second, "task " + msg.task + ": " + why});
        else if (auto p = routing->servers.find(msg.task); p != routing->servers.end())
          caf::anon_send(routing->coordinator, CoordinatorPsLostMsg{p->second, "task " + msg.task + ": " + why});
      },
    };
  });
  // The node tells any actor (a plain handle) with anon_send.
  node.watch_losses(caf::actor_cast<caf::actor>(loss_listener_));
}

void PsCluster::look_up_peers(ClusterDirectory& node) {
  const auto timeout = std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(knobs().cluster_init_timeout_seconds));
  for (int j = 0; j < shape_.ps; ++j) {
    // Another task's server comes as a plain actor: its interface is this one.
    servers_.push_back(j == task_index_ && task_type_ == "ps"
                         ? own_server_
                         : caf::actor_cast<ParameterServerActorHandle>(node.lookup(member("ps", j), published_server, timeout)));
    routing_->servers[member("ps", j)] = j;
  }
  if (!is_coordinator())
    return;
  for (int i = 0; i < shape_.workers; ++i) {
    Worker worker;
    worker.name = task_name("worker", i);
    worker.actor = node.lookup(member("worker", i), published_worker, timeout);
    routing_->workers[member("worker", i)] = worker.actor;
    workers_.push_back(std::move(worker));
  }
}

int PsCluster::serve() {
  if (local() || is_coordinator())
    fail(Errc::failed_precondition,
         "Runtime::serve() runs a worker or ps task of a parameter-server cluster across processes; this is the "
         "coordinator (the chief), which drives the cluster with a ClusterCoordinator instead");
  // This process's program has made its functions: its worker may run them.
  for (auto& worker : workers_)
    if (worker.context)
      worker.context->mark_program_ready();
  runtime_.wait(routing_->task_ends, "the coordinator (chief:0) to end the cluster");
  std::lock_guard<std::mutex> lock(routing_->mutex);
  const std::string me = task_type_ + ":" + std::to_string(task_index_);
  std::string why;
  if (routing_->chief_gone && routing_->chief_left && routing_->chief_job_error.empty()) {
    TROUPE_LOG(info, "net") << "task " << me << " ends: the coordinator chief:0 ended the job";
    return 0;
  }
  if (routing_->chief_gone && routing_->chief_left)
    why = "the coordinator chief:0 ended the job with an error: " + routing_->chief_job_error;
  else if (routing_->chief_gone)
    why = "the coordinator chief:0 was lost (" + routing_->chief_why + ")";
  else
    why = "parameter server " + routing_->ps_lost + " was lost (" + routing_->ps_why
          + "), and the job cannot go on without the variables it held; restart the job from a checkpoint";
  std::fprintf(stderr, "troupe: %s ends: %s\n", me.c_str(), why.c_str());
  // What this task's worker ran last, for the blame on every task.
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(runtime_.now().time_since_epoch()).count();
  for (const auto& worker : workers_)
    if (worker.context)
      if (auto block = worker.context->flight_record(why, now, me); !block.empty()) {
        TROUPE_LOG(warning, "net") << block;
        if (auto err = write_flight_record(knobs().flight_recorder_dir, me, block); !err.empty())
          TROUPE_LOG(warning, "net") << "flight recorder (TROUPE_FLIGHT_RECORDER_DIR): " << err;
      }
  return 1;
}

std::string PsCluster::agree_on_settings(const std::string& settings) {
  if (local())
    return {}; // every task runs this one program
  const uint32_t round = settings_round_++;
  const std::string me = task_type_ + ":" + std::to_string(task_index_);
  std::string verdict;
  if (is_coordinator()) {
    auto slot = std::make_shared<PsSettingsSlot>();
    caf::anon_send(settings_agreement_, PsSettingsChiefMsg{round, settings, slot});
    runtime_.wait(slot->done, "the tasks' settings (check_same_across_workers)");
    verdict = slot->error;
  } else {
    // The chief answers once every task sent its settings, or after its init
    // timeout; this task waits a little longer, and not at all once the
    // chief is gone.
    if (!settings_agreement_)
      settings_agreement_ =
        caf::actor_cast<PsSettingsAgreementHandle>(node_->lookup("chief:0", published_settings, init_timeout()));
    // Asked by an actor of this runtime, and waited for as Executor::wait
    // does: a simulated task's program runs on a fiber that must not block.
    struct Answer {
      Completion done;
      bool answered = false;
      std::string verdict;
      std::string trouble;
      Errc code = Errc::timeout;
    };
    auto answer = std::make_shared<Answer>();
    const auto agreement = caf::actor_cast<caf::actor>(settings_agreement_);
    const auto patience = 2 * init_timeout();
    auto& system = runtime_.system();
    runtime_.system().spawn([answer, agreement, patience, round, me, settings,
                             &system](caf::event_based_actor* self) -> caf::behavior {
      auto finish = [answer, self] {
        answer->done.set();
        self->quit();
      };
      self->monitor(agreement);
      self->set_down_handler([answer, finish, &system](caf::down_msg& msg) {
        answer->code = Errc::peer_lost;
        answer->trouble = "the chief was lost (" + system.render(msg.reason) + ")";
        finish();
      });
      self->send(caf::actor_cast<PsSettingsAgreementHandle>(agreement), PsSettingsMsg{round, me, settings});
      return {
        [answer, finish, round](PsSettingsVerdictMsg& msg) {
          if (msg.round != round)
            return; // an earlier call's, answered after its caller gave up
          answer->verdict = std::move(msg.error);
          answer->answered = true;
          finish();
        },
        caf::after(patience) >> [answer, finish] {
          answer->trouble = "no answer within twice TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS";
          finish();
        },
      };
    });
    runtime_.wait(answer->done, "the chief's verdict on the tasks' settings (check_same_across_workers)");
    if (!answer->answered)
      fail(answer->code, "check_same_across_workers on task " + me + ": the chief did not give its verdict on the "
                           "tasks' settings: " + answer->trouble);
    verdict = answer->verdict;
  }
  if (!verdict.empty())
    note_raised_error(verdict);
  return verdict;
}

void PsCluster::note_raised_error(const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!job_failed_)
    raised_error_ = error;
}

void PsCluster::note_job_failure(const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  job_failed_ = true;
  raised_error_ = error;
}

void PsCluster::end_program(bool by_exception) {
  // An exception ended the program, or the program reported a failure: its
  // job failed. The other tasks learn why before this task's bye (their
  // serve() says it), rather than seeing a normal exit.
  std::string why;
  bool failed = by_exception;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (program_ended_)
      return;
    program_ended_ = true;
    failed = failed || job_failed_;
    why = job_failed_ || raised_error_.empty()
            ? raised_error_
            : "its program ended with an exception; the last error troupe raised there: " + raised_error_;
  }
  if (node_ && failed)
    node_->say_farewell(why.empty() ? "its program ended with an exception" : why);
}

PsCluster::~PsCluster() {
  // Destroyed while an exception unwinds the program (a process's Runtime,
  // on its main thread): that ended it.
  end_program(std::uncaught_exceptions() > 0);
  // Every worker stops (a function still suspended on its fiber unwinds),
  // then its per-worker resources go, while the actor system still runs
  // their pipelines' actors.
  if (loss_listener_)
    caf::anon_send_exit(loss_listener_, caf::exit_reason::user_shutdown);
  if (own_server_)
    caf::anon_send_exit(own_server_, caf::exit_reason::user_shutdown);
  if (settings_agreement_ && is_coordinator())
    caf::anon_send_exit(settings_agreement_, caf::exit_reason::user_shutdown);
  std::vector<std::shared_ptr<Completion>> ended;
  for (auto& worker : workers_) {
    if (!worker.context)
      continue; // another process's worker (the chief's view)
    auto done = std::make_shared<Completion>();
    worker.actor->attach_functor([done] { done->set(); });
    ended.push_back(done);
    caf::anon_send_exit(worker.actor, caf::exit_reason::user_shutdown);
  }
  if (local())
    for (auto& server : servers_)
      caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  for (const auto& done : ended)
    runtime_.wait(*done, "a worker of the parameter-server cluster to stop");
  for (auto& worker : workers_)
    if (worker.context)
      worker.context->shut_down();
  runtime_.drain();
}

PsCluster::Worker PsCluster::spawn_worker(int index) {
  Worker worker;
  worker.name = task_name("worker", index);
  worker.context = std::make_shared<WorkerContext>(runtime_, index, worker.name, shape_.ps);
  Timeline::process().name_track(runtime_.trace_pid(), Timeline::functions_track(index),
                                 "worker:" + std::to_string(index) + " scheduled functions");
  // Held as a plain actor: the coordinator also holds other processes' workers.
  worker.actor = caf::actor_cast<caf::actor>(
    runtime_.system().spawn<WorkerActor>(worker.context, knobs().fiber_stack_bytes));
  return worker;
}

std::vector<std::string> PsCluster::parameter_server_names() const {
  std::vector<std::string> names;
  for (int j = 0; j < shape_.ps; ++j)
    names.push_back(task_name("ps", j));
  return names;
}

void PsCluster::attach_coordinator(CoordinatorActorHandle coordinator) {
  if (!is_coordinator())
    fail(Errc::failed_precondition, "only the chief task schedules functions; this is task " + task_type_ + ":"
                                      + std::to_string(task_index_) + ", which runs them (Runtime::serve())");
  std::lock_guard<std::mutex> lock(mutex_);
  if (coordinator_)
    fail(Errc::failed_precondition, "this cluster already has a ClusterCoordinator; a ParameterServerStrategy "
                                    "has one coordinator at a time: destroy the first one before making another");
  coordinator_ = std::move(coordinator);
  std::map<std::string, std::string> lost;
  std::map<std::string, caf::actor> current; // across processes: each worker task's latest actor
  if (routing_) {
    std::lock_guard<std::mutex> routing_lock(routing_->mutex);
    routing_->coordinator = coordinator_;
    lost = routing_->lost;
    current = routing_->workers;
  }
  for (int i = 0; i < static_cast<int>(workers_.size()); ++i) {
    const auto& worker = workers_[static_cast<std::size_t>(i)];
    const auto task = member("worker", i);
    const auto latest = current.find(task);
    if (worker.alive && !lost.count(task))
      caf::anon_send(coordinator_,
                     CoordinatorAddWorkerMsg{latest != current.end() ? latest->second : worker.actor, worker.name});
  }
  for (int j = 0; j < shape_.ps; ++j)
    if (auto it = lost.find(member("ps", j)); it != lost.end())
      caf::anon_send(coordinator_, CoordinatorPsLostMsg{j, "task ps:" + std::to_string(j) + ": " + it->second});
}

void PsCluster::detach_coordinator() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  coordinator_ = nullptr;
  if (routing_) {
    std::lock_guard<std::mutex> routing_lock(routing_->mutex);
    routing_->coordinator = nullptr;
  }
}

void PsCluster::check_local(const char* method) const {
  if (!local())
    fail(Errc::failed_precondition, std::string(method) + " injects faults into a cluster in this process "
                                    "(LocalCluster or Simulation); across processes, stop the task's process");
}

void PsCluster::check_worker_index(int index, const char* method) const {
  if (index < 0 || index >= shape_.workers)
    fail(Errc::out_of_range, std::string(method) + ": worker " + std::to_string(index) + " does not exist; the "
                               "cluster has workers 0.." + std::to_string(shape_.workers - 1));
}

void PsCluster::kill_worker(int index, const std::string& reason) {
  check_local("kill_worker");
  check_worker_index(index, "kill_worker");
  std::lock_guard<std::mutex> lock(mutex_);
  auto& worker = workers_[static_cast<std::size_t>(index)];
  if (!worker.alive)
    return;
  worker.alive = false;
  caf::anon_send(worker.actor, WorkerZombieMsg{});
  if (coordinator_)
    caf::anon_send(coordinator_, CoordinatorWorkerLostMsg{worker.actor, reason});
}

void PsCluster::restart_worker(int index) {
  check_local("restart_worker");
  check_worker_index(index, "restart_worker");
  std::lock_guard<std::mutex> lock(mutex_);
  auto& worker = workers_[static_cast<std::size_t>(index)];
  if (worker.alive)
    fail(Errc::failed_precondition, "restart_worker: worker " + std::to_string(index)
                                      + " is alive; kill_worker it first");
  worker = spawn_worker(index);
  worker.context->mark_program_ready();
  if (coordinator_)
    caf::anon_send(coordinator_, CoordinatorAddWorkerMsg{worker.actor, worker.name});
}

void PsCluster::kill_parameter_server(int index, const std::string& reason) {
  check_local("kill_parameter_server");
  if (index < 0 || index >= shape_.ps)
    fail(Errc::out_of_range, "kill_parameter_server: ps " + std::to_string(index) + " does not exist; the cluster "
                             "has ps tasks 0.." + std::to_string(shape_.ps - 1));
  // An exit message is no part of any interface: sent as to a plain actor.
  const auto server = caf::actor_cast<caf::actor>(servers_[static_cast<std::size_t>(index)]);
  caf::anon_send(server, caf::exit_msg{server.address(), caf::make_error(Errc::peer_lost, reason)});
}

} // namespace troupe::internal

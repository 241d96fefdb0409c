#include <troupe/actors/ps_cluster.hpp>

#include <caf/all.hpp>

#include <troupe/actors/coordinator_messages.hpp>
#include <troupe/actors/parameter_server_actor.hpp>
#include <troupe/actors/runtime_impl.hpp>
#include <troupe/actors/worker_actor.hpp>
#include <troupe/actors/worker_context.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>
#include <troupe/net/bootstrap/task_lost.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <set>

namespace troupe::internal {

namespace {

constexpr const char* published_server = "troupe.parameter_server";
constexpr const char* published_worker = "troupe.worker";

/// "worker:1" for job "worker", index 1: how the cluster node names members.
std::string member(const char* job, int index) {
  return std::string(job) + ":" + std::to_string(index);
}

} // namespace

/// Across processes: where the node's verdicts on lost tasks go.
struct PsCluster::LossRouting {
  std::mutex mutex;
  caf::actor coordinator;
  std::map<std::string, caf::actor> workers; ///< the chief's view: "worker:1" -> its WorkerActor
  std::map<std::string, int> servers;        ///< "ps:0" -> 0
  std::map<std::string, std::string> lost;   ///< member -> why, for a coordinator attached later
  /// Members lost after they last (re)joined: a rejoined worker whose actor
  /// lookup answers after its new process was lost too is not added.
  std::set<std::string> lost_since_join;
  Completion chief_gone;
  bool chief_left = false;
  std::string chief_why;
};

std::string task_name(const char* job, int index) {
  return std::string("/job:") + job + "/replica:0/task:" + std::to_string(index);
}

PsCluster::PsCluster(RuntimeImpl& runtime, PsClusterShape shape) : runtime_(runtime), shape_(shape) {
  for (int j = 0; j < shape_.ps; ++j)
    servers_.push_back(runtime_.system().spawn<ParameterServerActor>(ParameterServerOptions{task_name("ps", j)}));
  // One process: the program registered its functions before it schedules.
  for (int i = 0; i < shape_.workers; ++i) {
    workers_.push_back(spawn_worker(i));
    workers_.back().context->mark_program_ready();
  }
}

PsCluster::PsCluster(RuntimeImpl& runtime, ClusterNode& node, int devices_per_worker)
  : runtime_(runtime), node_(&node), task_type_(node.task_type()), task_index_(node.task_index()),
    routing_(std::make_shared<LossRouting>()) {
  shape_.workers = static_cast<int>(node.tasks_of("worker").size());
  shape_.ps = static_cast<int>(node.tasks_of("ps").size());
  shape_.devices_per_worker = devices_per_worker;
  // This task's own actor first, published, so that the others' lookups find it.
  if (task_type_ == "ps") {
    auto server = runtime_.system().spawn<ParameterServerActor>(ParameterServerOptions{task_name("ps", task_index_)});
    node.publish(published_server, server);
    own_server_ = server;
  } else if (task_type_ == "worker") {
    workers_.push_back(spawn_worker(task_index_));
    node.publish(published_worker, workers_.back().actor);
  }
  try {
    look_up_peers(node);
  } catch (...) {
    // The runtime's actor system would wait forever for this task's own actors.
    if (own_server_)
      caf::anon_send_exit(own_server_, caf::exit_reason::user_shutdown);
    for (auto& worker : workers_)
      if (worker.context)
        caf::anon_send_exit(worker.actor, caf::exit_reason::user_shutdown);
    throw;
  }
  auto routing = routing_;
  const bool coordinator = is_coordinator();
  const auto lookup_timeout = std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(knobs().cluster_init_timeout_seconds));
  loss_listener_ = runtime_.system().spawn([routing, coordinator, lookup_timeout](caf::event_based_actor* self) -> caf::behavior {
    return {
      [=](TaskJoinedMsg& msg) {
        // A restarted worker process took its task's place: the coordinator
        // sends it closures again. Its own WorkerContext builds its
        // per-worker datasets and iterators afresh, on first use.
        if (!coordinator || msg.task.rfind("worker:", 0) != 0 || !msg.node)
          return;
        const auto task = msg.task;
        self->request(msg.node, lookup_timeout, NodeLookupMsg{published_worker})
          .then(
            [routing, task](caf::actor& worker) {
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
            },
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
          routing->chief_left = msg.left;
          routing->chief_why = msg.why;
          routing->chief_gone.set();
          return;
        }
        const std::string why = msg.left ? "it ended (" + msg.why + ")" : msg.why;
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
  node.watch_losses(loss_listener_);
}

void PsCluster::look_up_peers(ClusterNode& node) {
  const auto timeout = std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(knobs().cluster_init_timeout_seconds));
  for (int j = 0; j < shape_.ps; ++j) {
    servers_.push_back(j == task_index_ && task_type_ == "ps" ? own_server_
                                                               : node.lookup(member("ps", j), published_server, timeout));
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
  runtime_.wait(routing_->chief_gone, "the coordinator (chief:0) to end the cluster");
  std::lock_guard<std::mutex> lock(routing_->mutex);
  if (routing_->chief_left)
    return 0;
  std::fprintf(stderr, "troupe: %s:%d ends: the coordinator chief:0 was lost (%s)\n", task_type_.c_str(), task_index_,
               routing_->chief_why.c_str());
  return 1;
}

PsCluster::~PsCluster() {
  // Every worker stops (a function still suspended on its fiber unwinds),
  // then its per-worker resources go, while the actor system still runs
  // their pipelines' actors.
  if (loss_listener_)
    caf::anon_send_exit(loss_listener_, caf::exit_reason::user_shutdown);
  if (own_server_)
    caf::anon_send_exit(own_server_, caf::exit_reason::user_shutdown);
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
  worker.actor = runtime_.system().spawn<WorkerActor>(worker.context, knobs().fiber_stack_bytes);
  return worker;
}

std::vector<std::string> PsCluster::parameter_server_names() const {
  std::vector<std::string> names;
  for (int j = 0; j < shape_.ps; ++j)
    names.push_back(task_name("ps", j));
  return names;
}

void PsCluster::attach_coordinator(caf::actor coordinator) {
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
  const auto& server = servers_[static_cast<std::size_t>(index)];
  caf::anon_send(server, caf::exit_msg{server.address(), caf::make_error(Errc::peer_lost, reason)});
}

} // namespace troupe::internal

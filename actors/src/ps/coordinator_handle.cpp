#include <troupe/actors/ps/coordinator_handle.hpp>

#include <caf/all.hpp>

#include <troupe/actors/ps/coordinator_actor.hpp>
#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

CoordinatorHandle::CoordinatorHandle(Executor& runtime, PsCluster* cluster, CoordinatorOptions options)
  : runtime_(&runtime), cluster_(cluster) {
  // Checked before anything is spawned, so a bad option leaves nothing behind.
  for (std::size_t i = 0; i < options.parameter_servers.size(); ++i)
    if (!options.parameter_servers[i])
      fail(Errc::invalid_argument, "ClusterCoordinator: parameter server " + std::to_string(i) +
                                     " has no actor; pass one actor per ps task, in task order");
  if (!options.parameter_server_names.empty() &&
      options.parameter_server_names.size() != options.parameter_servers.size())
    fail(Errc::invalid_argument, "ClusterCoordinator: " + std::to_string(options.parameter_server_names.size()) +
                                   " parameter server names for " + std::to_string(options.parameter_servers.size()) +
                                   " parameter servers; give one name per server, or none");
  if (options.commit_timeout.count() <= 0)
    fail(Errc::invalid_argument, "ClusterCoordinator: a commit timeout of " +
                                   std::to_string(options.commit_timeout.count()) + " ms; it must be > 0");
  runtime_->add_user();
  actor_ = runtime_->system().spawn<CoordinatorActor>(std::move(options));
}

CoordinatorHandle::~CoordinatorHandle() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
  actor_ = nullptr;
  runtime_->drain();
  runtime_->release_user();
}

ScheduledClosure CoordinatorHandle::schedule(ClosureSpec spec) {
  // Checked here, at the caller, rather than when a worker in another process
  // refuses the message: the same bounds as the wire's.
  if (spec.function_name.size() > max_function_name_bytes)
    fail(Errc::invalid_argument, "ClusterCoordinator.schedule: a function name of " + std::to_string(spec.function_name.size())
                                   + " bytes is over the limit of " + std::to_string(max_function_name_bytes)
                                   + "; register the function under a shorter name");
  if (spec.args.size() > max_closure_payload_bytes)
    fail(Errc::invalid_argument, "ClusterCoordinator.schedule of '" + spec.function_name + "': its arguments take "
                                   + std::to_string(spec.args.size()) + " bytes, over the limit of "
                                   + std::to_string(max_closure_payload_bytes)
                                   + "; keep bulk tensors in variables on the parameter servers, not in arguments");
  auto slot = std::make_shared<CoordinatorCallSlot>();
  slot->spec = std::move(spec);
  caf::anon_send(actor_, CoordinatorScheduleMsg{slot});
  call(slot, "ClusterCoordinator.schedule (waiting for a free slot in the closure queue)");
  return {slot->id, slot->outcome};
}

void CoordinatorHandle::join() {
  auto slot = std::make_shared<CoordinatorCallSlot>();
  caf::anon_send(actor_, CoordinatorJoinMsg{slot});
  call(slot, "ClusterCoordinator.join");
}

bool CoordinatorHandle::done() {
  auto slot = std::make_shared<CoordinatorCallSlot>();
  caf::anon_send(actor_, CoordinatorDoneMsg{slot});
  call(slot, "ClusterCoordinator.done");
  return slot->finished;
}

void CoordinatorHandle::add_worker(caf::actor worker, std::string name) {
  caf::anon_send(actor_, CoordinatorAddWorkerMsg{std::move(worker), std::move(name)});
}

void CoordinatorHandle::worker_lost(caf::actor worker, std::string reason) {
  caf::anon_send(actor_, CoordinatorWorkerLostMsg{std::move(worker), std::move(reason)});
}

void CoordinatorHandle::parameter_server_lost(int ps_task, std::string reason) {
  caf::anon_send(actor_, CoordinatorPsLostMsg{ps_task, std::move(reason)});
}

void CoordinatorHandle::call(const std::shared_ptr<CoordinatorCallSlot>& slot, const char* what) {
  runtime_->wait(slot->answered, what);
  if (slot->failed) {
    if (cluster_ != nullptr)
      cluster_->note_raised_error(slot->error);
    fail(slot->code, slot->error);
  }
}

} // namespace troupe::internal

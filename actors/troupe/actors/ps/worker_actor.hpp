#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/meta/type_name.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <troupe/actors/ps/coordinator_messages.hpp>
#include <troupe/actors/fibers/fiber_host.hpp>
#include <troupe/actors/ps/worker_context.hpp>

namespace troupe::internal {

/// A parameter-server cluster's test hook: the worker stops reporting, as a
/// process cut off from the cluster would (the function it runs goes on to
/// its end, and its late updates are refused by the servers), then exits.
struct WorkerZombieMsg {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WorkerZombieMsg&) {
  return f(caf::meta::type_name("troupe::WorkerZombieMsg"));
}

/// What a worker accepts (WorkerActor): attempts to run from the coordinator,
/// its fiber's wake-ups, and the zombie test hook.
using WorkerActorHandle =
  caf::typed_actor<caf::reacts_to<RunClosureMsg>, caf::reacts_to<FiberWakeMsg>, caf::reacts_to<WorkerZombieMsg>>;

/// One worker task of a parameter-server cluster: runs the closures the
/// coordinator hands it, one at a time, each on this actor's fiber.
///
/// 1. RunClosureMsg(id, attempt): starts attempt (id, attempt) in its
///    WorkerContext and resumes the fiber, which finds the function by name in
///    the process's FunctionRegistry and calls it on the arguments.
/// 2. A blocking call in the function (a variable read or update on a
///    parameter server, strategy.run on this worker's replicas, an iterator's
///    get_next) suspends the fiber (FiberWaiter); FiberWakeMsg resumes it.
/// 3. When the function returns or throws, the actor answers the coordinator
///    with ClosureFinishedMsg, carrying how many updates it staged at each
///    parameter server: the coordinator alone commits them.
class WorkerActor final : public WorkerActorHandle::base, public FiberHost {
public:
  WorkerActor(caf::actor_config& cfg, std::shared_ptr<WorkerContext> context, std::size_t stack_bytes);
  ~WorkerActor() override;

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.worker"; }

private:
  struct Running {
    RunClosureMsg msg;
    bool ok = true;
    std::vector<uint8_t> value;
    Errc code = Errc::internal;
    std::string error;
  };

  void start(RunClosureMsg& msg);
  /// Resumes the fiber, then reports the closure once it returned.
  void continue_closure();
  /// The fiber's task: runs the closure in running_.
  void run_closure(Running& running);
  void report(Running& running);
  [[nodiscard]] int64_t now_ns();

  std::shared_ptr<WorkerContext> context_;
  std::optional<Running> running_;
  bool finished_ = false;
  bool zombie_ = false;
};

} // namespace troupe::internal

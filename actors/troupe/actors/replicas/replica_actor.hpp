#pragma once

#include <cstdint>
#include <exception>
#include <memory>

#include <caf/typed_event_based_actor.hpp>

#include <troupe/actors/replicas/collective_group_messages.hpp>
#include <troupe/actors/fibers/fiber_host.hpp>
#include <troupe/actors/replicas/replica_messages.hpp>
#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/core/device_spec.hpp>

namespace troupe::internal {

/// What a replica actor is spawned with.
struct ReplicaSetup {
  int replica = 0;
  uint64_t group_id = 0;
  DeviceSpec device;
  CollectiveGroupActorHandle group;
  void* frame = nullptr;
  std::size_t stack_bytes = 1024 << 10;
  /// Collectives of GPU tensors run on host copies (the multi-worker ring,
  /// where NCCL cannot span the workers); the results go back to the GPU.
  bool stage_gpu_tensors_through_host = false;
  /// The task's process in the timeline (Executor::trace_pid).
  int trace_pid = 0;
};

/// One replica of a strategy: an event-based actor that runs the strategy's
/// per-replica function on a fiber.
///
/// 1. RunMsg: the actor resumes its fiber, which calls the function.
/// 2. A collective inside the function records the request and yields; the
///    actor sends it to the group as a ContributionMsg and goes back to its
///    mailbox (it may be asked to reduce a part meanwhile, ReducePartMsg).
/// 3. CollectiveDoneMsg: the actor resumes the fiber with the result, or the
///    fiber throws the error inside the function.
/// 4. A blocking troupe call inside the function (a parameter server's
///    variable read) suspends the fiber through FiberWaiter until the
///    completion it waits for is set (FiberWakeMsg).
/// 5. When the function returns, the actor tells the group how many
///    collectives it issued (so missing ones fail at once) and reports to the
///    RunJob. No thread ever blocks; the fiber is reused across runs.
class ReplicaActor final : public ReplicaActorHandle::base, public ReplicaHandle, public FiberHost {
public:
  ReplicaActor(caf::actor_config& cfg, ReplicaSetup setup);
  ~ReplicaActor() override;

  behavior_type make_behavior() override;
  void on_exit() override;
  [[nodiscard]] const char* name() const override { return "troupe.replica"; }

  // -- ReplicaHandle (called on the fiber) -------------------------------------

  [[nodiscard]] int replica_id() const noexcept override { return setup_.replica; }
  CollectiveResult collective(CollectiveRequest request) override;

private:
  /// collective() without staging GPU tensors through the host.
  CollectiveResult collective_as_is(CollectiveRequest request);
  void start_run(std::shared_ptr<RunJob> job);
  void on_done(CollectiveDoneMsg& msg);
  /// The fiber's task: the run's function for this replica.
  void run_function();
  /// Resumes the fiber, then sends what it yielded for.
  void continue_function();

  ReplicaSetup setup_;
  std::shared_ptr<RunJob> job_;
  uint32_t issued_ = 0;
  // Set by the fiber before it yields.
  std::shared_ptr<CollectiveRequest> pending_;
  bool finished_ = false;
  caf::actor_clock::time_point run_started_; ///< for the timeline
  std::exception_ptr job_error_;
  // Set by the actor before it resumes the fiber.
  std::shared_ptr<CollectiveResult> result_;
  Errc error_code_ = Errc::internal;
  std::string error_message_;
  std::exception_ptr error_exception_;
  CollectiveKey waiting_for_;
};

} // namespace troupe::internal

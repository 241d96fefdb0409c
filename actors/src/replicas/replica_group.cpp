#include <troupe/actors/replicas/replica_group.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include <caf/all.hpp>

#include <troupe/actors/replicas/collective_group_actor.hpp>
#include <troupe/actors/replicas/replica_actor.hpp>
#include <troupe/actors/runtime.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/timeline.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/hop_trace.hpp>

namespace troupe::internal {

namespace {

// Deadlines beyond 30 years would overflow the clock's int64 nanoseconds.
constexpr double max_timeout_seconds = 1e9;

caf::timespan to_timespan(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(std::min(seconds, max_timeout_seconds)));
}

} // namespace

struct ReplicaGroup::Impl {
  Executor& runtime;
  CollectiveGroupActorHandle group;
  std::vector<ReplicaActorHandle> replicas;
  std::vector<ReplicaActor*> handles;
  uint64_t runs = 0;
  std::atomic<bool> running{false};
  /// Why the replicas were stopped (a wait that failed mid-run); empty while usable.
  std::string broken;

  explicit Impl(Executor& rt) : runtime(rt) {}
};

ReplicaGroup::ReplicaGroup(Runtime& runtime, std::vector<DeviceSpec> devices,
                           std::vector<void*> frames, GroupOptions options, const DataPlaneHandle& link)
  : ReplicaGroup(runtime.executor(), std::move(devices), std::move(frames), std::move(options), link) {
}

ReplicaGroup::ReplicaGroup(Executor& runtime, std::vector<DeviceSpec> devices,
                           std::vector<void*> frames, GroupOptions options, const DataPlaneHandle& link)
  : impl_(std::make_unique<Impl>(runtime)) {
  if (devices.empty())
    fail(Errc::invalid_argument, "a replica group needs at least one device");
  if (!(options.timeout_seconds > 0) || !std::isfinite(options.timeout_seconds))
    fail(Errc::invalid_argument, "the collective timeout must be a positive, finite number of seconds, got "
                                   + std::to_string(options.timeout_seconds)
                                   + "; collectives always have a deadline, so that a lost peer fails them");
  if (options.cluster && !link)
    fail(Errc::internal, "a multi-worker replica group needs the worker's data-plane link");
  // A local id counts every group of this process, so it differs between
  // workers that create different single-worker strategies: on the wire,
  // only an id all workers agree on will do.
  if (options.cluster && !options.group_id)
    fail(Errc::internal, "a multi-worker replica group needs the id every worker gives it "
                         "(RuntimeImpl::next_cluster_group_id), not a local one");
  auto& sys = impl_->runtime.system();
  impl_->runtime.add_user();
  const auto group_id = options.group_id ? *options.group_id : impl_->runtime.next_group_id();
  GroupSetup setup{group_id, devices, to_timespan(options.timeout_seconds),
                   to_timespan(options.stall_warning_seconds), options.split_bytes, options.cluster,
                   options.cluster ? link : DataPlaneHandle{},
                   options.cluster ? options.cluster->implementation : options.implementation,
                   options.cluster ? options.cluster->bytes_per_pack : options.bytes_per_pack,
                   options.cluster ? options.direct_link : nullptr, impl_->runtime.trace_pid()};
  impl_->group = sys.spawn<CollectiveGroupActor>(std::move(setup));
  for (size_t i = 0; i < devices.size(); ++i) {
    ReplicaSetup rs{static_cast<int>(i), group_id, devices[i], impl_->group, frames.at(i),
                    options.stack_bytes, options.cluster && options.cluster->gpu_tensors_through_host,
                    impl_->runtime.trace_pid()};
    Timeline::process().name_track(impl_->runtime.trace_pid(), Timeline::replica_track(group_id, static_cast<int>(i)),
                                   Timeline::group_name(group_id) + ", replica " + std::to_string(i) + " ("
                                     + devices[i].short_name() + ")");
    auto replica = sys.spawn<ReplicaActor>(std::move(rs));
    impl_->handles.push_back(caf::actor_cast<ReplicaActor*>(replica));
    impl_->replicas.push_back(std::move(replica));
  }
}

ReplicaGroup::~ReplicaGroup() {
  stop_actors();
  impl_->runtime.release_user();
}

int ReplicaGroup::size() const noexcept {
  return static_cast<int>(impl_->replicas.size());
}

ReplicaHandle& ReplicaGroup::handle(int replica) {
  return *impl_->handles.at(static_cast<size_t>(replica));
}

void ReplicaGroup::stop_actors() {
  for (auto& r : impl_->replicas)
    caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(impl_->group, caf::exit_reason::user_shutdown);
  impl_->handles.clear();
  impl_->replicas.clear();
  impl_->group = nullptr;
  impl_->runtime.drain();
}

std::vector<std::exception_ptr> ReplicaGroup::run(const std::function<void(int)>& body) {
  return finish(start(body));
}

std::shared_ptr<RunJob> ReplicaGroup::start(const std::function<void(int)>& body) {
  if (!impl_->broken.empty())
    fail(Errc::failed_precondition, "this strategy's replicas were stopped when an earlier strategy.run "
                                    "failed (" + impl_->broken + "); create a new strategy");
  if (impl_->running.exchange(true))
    fail(Errc::failed_precondition, "strategy.run was called while the same strategy is already running "
                                    "(from another thread, or from merge_call's function); a strategy runs "
                                    "one step at a time");
  auto job = std::make_shared<RunJob>(body, ++impl_->runs, size());
  // One message, built once, is shared by every replica's mailbox.
  auto msg = caf::make_message(RunMsg{job});
  trace_hop(Hop::run_started, impl_->runs);
  for (auto& r : impl_->replicas)
    r->enqueue(nullptr, caf::make_message_id(), msg, nullptr);
  return job;
}

std::vector<std::exception_ptr> ReplicaGroup::finish(const std::shared_ptr<RunJob>& job) {
  struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag = false; }
  } release{impl_->running};
  try {
    impl_->runtime.wait(job->completion, "strategy.run");
    trace_hop(Hop::run_returned, job->run_id);
  } catch (const std::exception& e) {
    // The replicas may be suspended inside `body`, whose captures die with
    // this frame: stop them now, while the caller's frames are still alive.
    impl_->broken = e.what();
    stop_actors();
    throw;
  }
  return std::move(job->errors);
}

} // namespace troupe::internal

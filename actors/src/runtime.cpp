#include <troupe/actors/runtime.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <thread>

#include <caf/abstract_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/thread_hook.hpp>

#include <troupe/net/bootstrap/cluster_node.hpp>
#include <troupe/net/bootstrap/cluster_types.hpp>

#include <troupe/actors/runtime_impl.hpp>
#include <troupe/core/caf_types.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/cluster_resolver.hpp>
#include <troupe/core/denormals.hpp>

namespace troupe {

namespace internal {

namespace {

/// Every thread of troupe's actor system computes with denormals flushed
/// (core/denormals.hpp), set once as the thread starts.
class FlushDenormalsHook final : public caf::thread_hook {
public:
  void init(caf::actor_system&) override {}
  void thread_started() override { flush_denormals_on_this_thread(); }
  void thread_terminates() override {}
};

std::unique_ptr<caf::actor_system_config> make_config() {
  auto cfg = std::make_unique<caf::actor_system_config>();
  cfg->add_thread_hook<FlushDenormalsHook>();
  add_cluster_types(*cfg);
  return cfg;
}

caf::timespan to_timespan(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(seconds));
}

/// The tasks of `resolver`'s cluster that run on this task's host.
int tasks_on_this_host(const ClusterResolver& resolver) {
  const auto spec = resolver.cluster_spec();
  const auto& me = resolver.task_type();
  if (me.empty() || resolver.task_id() < 0)
    return 1;
  const auto host = parse_task_address(spec.task_address(me, resolver.task_id())).host;
  int n = 0;
  for (const auto& job : spec.jobs())
    for (const auto& address : spec.job_tasks(job))
      n += parse_task_address(address).host == host ? 1 : 0;
  return std::max(n, 1);
}

/// Cluster tasks hand work between threads at every frame: CAF's sharing
/// policy wakes a sleeping thread through a condition variable, where
/// work-stealing threads poll (burning the cores that several tasks of one
/// host share) or sleep in 50 us steps. Measured with bench/allreduce_cluster,
/// 2 workers on the 2-core CI machine type: 4 KiB all-reduce 510-690 us with
/// stealing, 217 us with sharing and one thread per task. Tasks that share a
/// host also share its cores, so each gets cores / tasks threads.
void configure_cluster_scheduler(caf::actor_system_config& cfg, const RuntimeOptions& options,
                                 const ClusterResolver& resolver) {
  const auto& policy = knobs().scheduler_policy;
  if (policy == "stealing")
    return;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  if (options.threads == 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    cfg.set("scheduler.max-threads", static_cast<size_t>(std::max(1, cores / tasks_on_this_host(resolver))));
  }
}

void configure_scheduler(caf::actor_system_config& cfg, const RuntimeOptions& options) {
  if (options.threads < 0)
    fail(Errc::invalid_argument,
         "RuntimeOptions.threads must be >= 0 (0 = one per core), got " + std::to_string(options.threads));
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  // CAF's default is max(4, cores), which oversubscribes small machines (CAF-NOTES §3).
  cfg.set("scheduler.max-threads", static_cast<size_t>(options.threads > 0 ? options.threads : cores));
  // CAF's idle workers sleep 50 us between polls after 100 polls and steal only
  // every 5th poll, which costs about 100 us per strategy step. Poll longer and
  // steal at once instead (TROUPE_IDLE_POLLS; measured in bench/allreduce_local:
  // strategy.run overhead on 8 replicas 143 us -> 12 us median).
  if (const auto polls = knobs().idle_polls; polls > 0) {
    cfg.set("work-stealing.aggressive-poll-attempts", polls);
    cfg.set("work-stealing.aggressive-steal-interval", size_t{1});
    cfg.set("work-stealing.moderate-steal-interval", size_t{1});
    cfg.set("work-stealing.moderate-sleep-duration", caf::timespan{std::chrono::microseconds(10)});
  }
}

void check_devices(int logical_cpu_devices) {
  if (logical_cpu_devices < 1)
    fail(Errc::invalid_argument, "logical_cpu_devices must be at least 1, got "
                                   + std::to_string(logical_cpu_devices));
}

} // namespace

RuntimeImpl::RuntimeImpl(const RuntimeOptions& options) : config_(make_config()) {
  check_devices(options.logical_cpu_devices);
  configure_scheduler(*config_, options);
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
  init_devices(options.logical_cpu_devices);
}

RuntimeImpl::RuntimeImpl(std::shared_ptr<const ClusterResolver> resolver, const RuntimeOptions& options)
  : config_(make_config()), resolver_(std::move(resolver)) {
  if (!resolver_)
    fail(Errc::invalid_argument, "Runtime: the cluster resolver is null; pass ClusterResolver::from_env()");
  check_devices(options.logical_cpu_devices);
  configure_scheduler(*config_, options);
  const bool multi_task = resolver_->cluster_spec().num_tasks_total() > 1;
  if (multi_task) {
    configure_cluster_scheduler(*config_, options, *resolver_);
    config_->load<caf::io::middleman>();
    // CAF detects neither dead nor frozen peers by default (CAF-NOTES §2): a
    // peer silent for peer_timeout is lost. CAF notices silence up to one
    // heartbeat late and the data plane confirms a loss after 50 ms, so its
    // timeout is shortened by both: a frozen peer is lost within peer_timeout.
    // Bulk bytes travel on the data plane, so control traffic stays small and
    // heartbeats are not starved.
    const auto& k = knobs();
    config_->set("middleman.heartbeat-interval", to_timespan(k.peer_heartbeat_seconds));
    config_->set("middleman.connection-timeout",
                 to_timespan(std::max(k.peer_timeout_seconds - k.peer_heartbeat_seconds - 0.05,
                                      2 * k.peer_heartbeat_seconds)));
  }
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
  init_devices(options.logical_cpu_devices);
  if (multi_task)
    cluster_ = std::make_unique<ClusterNode>(*system_, resolver_);
}

RuntimeImpl::RuntimeImpl(const Simulation& simulation)
  : config_(make_config()), rng_(simulation.seed) {
  check_devices(simulation.logical_cpu_devices);
  config_->set("scheduler.policy", caf::atom("testing"));
  owned_system_ = std::make_unique<caf::actor_system>(*config_);
  system_ = owned_system_.get();
  coordinator_ = &dynamic_cast<caf::scheduler::test_coordinator&>(system_->scheduler());
  init_devices(simulation.logical_cpu_devices);
}

RuntimeImpl::RuntimeImpl(caf::actor_system& system, const RuntimeOptions& options)
  : system_(&system), rng_(0) {
  check_devices(options.logical_cpu_devices);
  coordinator_ = dynamic_cast<caf::scheduler::test_coordinator*>(&system.scheduler());
  init_devices(options.logical_cpu_devices);
}

RuntimeImpl::~RuntimeImpl() {
  if (const int users = users_.load(); users > 0) {
    std::fprintf(stderr,
                 "troupe: a Runtime was destroyed while %d strategies or distributed-dataset iterators still "
                 "use it; destroy them before their Runtime (declare the Runtime first). Stopping, since "
                 "the actor system would otherwise wait for their actors forever.\n",
                 users);
    std::abort();
  }
  drain();
}

void RuntimeImpl::init_devices(int logical_cpu_devices) {
  for (int i = 0; i < logical_cpu_devices; ++i)
    devices_.push_back(DeviceSpec::local("CPU", i));
}

void RuntimeImpl::step_once() {
  auto& jobs = coordinator_->jobs;
  std::uniform_int_distribution<size_t> pick(0, jobs.size() - 1);
  auto chosen = jobs.begin() + static_cast<std::ptrdiff_t>(pick(rng_));
  std::rotate(jobs.begin(), chosen, chosen + 1);
  // Actor ids are handed out in spawn order, so the trace is reproducible.
  uint64_t id = 0;
  if (auto* actor = dynamic_cast<caf::abstract_actor*>(jobs.front()))
    id = actor->id();
  trace_hash_ = (trace_hash_ ^ id) * 1099511628211ull;
  ++steps_;
  coordinator_->run_once();
}

void RuntimeImpl::wait(const Completion& done, const char* what) {
  if (!coordinator_) {
    done.wait();
    return;
  }
  while (!done.done()) {
    if (!coordinator_->jobs.empty())
      step_once();
    else if (coordinator_->has_pending_timeout())
      coordinator_->trigger_timeout();
    else
      fail(Errc::deadlock, std::string("simulation deadlock while waiting for ") + what
                             + ": no actor can run and no timer is pending");
  }
}

void RuntimeImpl::drain() {
  if (!coordinator_)
    return;
  while (!coordinator_->jobs.empty())
    step_once();
}

} // namespace internal

// -- Runtime ---------------------------------------------------------------------

Runtime::Runtime(RuntimeOptions options)
  : impl_(std::make_unique<internal::RuntimeImpl>(options)) {
}

Runtime::Runtime(const Simulation& simulation, int)
  : impl_(std::make_unique<internal::RuntimeImpl>(simulation)) {
}

Runtime::Runtime(caf::actor_system& system, RuntimeOptions options)
  : impl_(std::make_unique<internal::RuntimeImpl>(system, options)) {
}

Runtime::Runtime(std::shared_ptr<const ClusterResolver> resolver, RuntimeOptions options)
  : impl_(std::make_unique<internal::RuntimeImpl>(std::move(resolver), options)) {
}

Runtime::~Runtime() = default;

bool Runtime::is_simulation() const noexcept {
  return impl_->simulation();
}

const std::vector<DeviceSpec>& Runtime::devices() const noexcept {
  return impl_->devices();
}

DeviceSpec Runtime::resolve_device(std::string_view device) const {
  auto spec = DeviceSpec::from_string(device);
  const auto& all = devices();
  // A local device: a job or task, when given, must name this process, which
  // TensorFlow calls /job:localhost/replica:0/task:0, or in a cluster
  // /job:<task type>/task:<task id>.
  const auto& resolver = impl_->resolver();
  const bool in_cluster = resolver && !resolver->task_type().empty();
  const std::string my_job = in_cluster ? resolver->task_type() : "localhost";
  const int my_task = in_cluster ? std::max(resolver->task_id(), 0) : 0;
  const bool job_ok = !spec.job() || *spec.job() == my_job || (!in_cluster && *spec.job() == "localhost");
  if (!job_ok || spec.replica().value_or(0) != 0 || spec.task().value_or(my_task) != my_task)
    fail(Errc::not_found, "device \"" + std::string(device) + "\" names another process ("
                            + spec.to_string() + "); this runtime is one process, /job:" + my_job
                            + "/replica:0/task:" + std::to_string(my_task) + ": drop the job and task"
                            + (in_cluster ? "" : ", or run it as a task of a cluster"));
  for (const auto& d : all)
    if (d.device_type() == spec.device_type()
        && d.device_index() == spec.device_index().value_or(0))
      return d;
  std::string names;
  for (const auto& d : all)
    names += (names.empty() ? "" : ", ") + d.short_name();
  std::string fix = spec.is_gpu()
                      ? "this build of troupe runs replicas on CPU devices only; use \"CPU:<n>\""
                      : "create the Runtime with RuntimeOptions{.logical_cpu_devices = "
                          + std::to_string(spec.device_index().value_or(0) + 1) + "} or more";
  fail(Errc::not_found, "device \"" + std::string(device) + "\" does not exist in this runtime "
                          "(devices: " + names + "): " + fix);
}

uint64_t Runtime::simulation_trace_hash() const noexcept {
  return impl_->trace_hash();
}

uint64_t Runtime::simulation_steps() const noexcept {
  return impl_->steps();
}

} // namespace troupe

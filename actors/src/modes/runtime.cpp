#include <troupe/actors/runtime.hpp>

#include <algorithm>

#include <troupe/actors/gpu/gpu_devices.hpp>
#include <troupe/actors/ps/ps_cluster.hpp>
#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/actors/gpu/gpu_backend.hpp>
#include <troupe/net/cluster_resolver.hpp>
#include <troupe/net/cluster_spec.hpp>

namespace troupe {

namespace {

/// How to get more GPUs than `runtime` has, or why it has none.
std::string gpu_fix(const internal::RuntimeImpl& runtime) {
  if (runtime.gpus() != nullptr)
    return "split each card into more logical GPUs with RuntimeOptions{.logical_gpu_devices_per_gpu = k}";
  if (runtime.simulation())
    return "a simulation runs on CPU devices only (GPUs finish in real time, not in the simulation's virtual "
           "time); use \"CPU:<n>\"";
  return "this process has no GPU (" + internal::gpu_backend().unavailable_reason() + "); use \"CPU:<n>\"";
}

} // namespace

// -- Runtime ---------------------------------------------------------------------

Runtime::Runtime(RuntimeOptions options)
  : impl_(std::make_unique<internal::RuntimeImpl>(options)) {
}

Runtime::Runtime(const Simulation& simulation, int)
  : impl_(std::make_unique<internal::RuntimeImpl>(simulation)) {
}

Runtime::Runtime(const LocalCluster& cluster)
  : impl_(std::make_unique<internal::RuntimeImpl>(cluster)) {
}

Runtime::Runtime(caf::actor_system& system, RuntimeOptions options)
  : impl_(std::make_unique<internal::RuntimeImpl>(system, options)) {
}

Runtime::Runtime(std::shared_ptr<const ClusterResolver> resolver, RuntimeOptions options)
  : impl_(std::make_unique<internal::RuntimeImpl>(std::move(resolver), options)) {
}

Runtime::Runtime(std::unique_ptr<internal::RuntimeImpl> impl) : impl_(std::move(impl)) {
}

Runtime::~Runtime() = default;

internal::Executor& Runtime::executor() noexcept {
  return *impl_;
}

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
  const std::string wanted = std::to_string(spec.device_index().value_or(0) + 1);
  std::string fix = spec.is_gpu()
                      ? gpu_fix(*impl_)
                      : spec.device_type() == "TPU"
                          ? "create the Runtime with RuntimeOptions{.logical_tpu_cores = n}, a TPU slice of at least "
                              + wanted + " cores on this host (emulated on CPU threads)"
                          : "create the Runtime with RuntimeOptions{.logical_cpu_devices = " + wanted + "} or more";
  fail(Errc::not_found, "device \"" + std::string(device) + "\" does not exist in this runtime "
                          "(devices: " + names + "): " + fix);
}

std::string Runtime::task_type() const {
  if (const auto* cluster = impl_->ps_cluster())
    return cluster->task_type();
  const auto& resolver = impl_->resolver();
  return resolver ? resolver->task_type() : std::string{};
}

int Runtime::task_index() const {
  if (const auto* cluster = impl_->ps_cluster())
    return cluster->task_index();
  const auto& resolver = impl_->resolver();
  return resolver ? std::max(resolver->task_id(), 0) : 0;
}

std::shared_ptr<const ClusterResolver> Runtime::cluster_resolver() const {
  return impl_->resolver();
}

int Runtime::num_tasks(std::string_view job) const {
  if (const auto* cluster = impl_->ps_cluster(); cluster && cluster->local())
    return job == "chief" ? 1 : job == "worker" ? cluster->shape().workers : job == "ps" ? cluster->shape().ps : 0;
  const auto& resolver = impl_->resolver();
  return resolver ? resolver->cluster_spec().num_tasks(job) : 0;
}

void Runtime::report_job_failure(const std::string& error) {
  if (auto* cluster = impl_->ps_cluster())
    cluster->note_job_failure(error);
}

int Runtime::serve() {
  if (auto* cluster = impl_->ps_cluster())
    return cluster->serve();
  fail(Errc::failed_precondition,
       "Runtime::serve() runs a worker or ps task of a parameter-server cluster across processes (TF_CONFIG "
       "with chief, worker and ps jobs); this runtime is " + (task_type().empty() ? std::string("a single process")
                                                                              : "the " + task_type() + " task")
         + ", which drives the cluster with a ClusterCoordinator instead");
}

uint64_t Runtime::simulation_trace_hash() const noexcept {
  return impl_->trace_hash();
}

uint64_t Runtime::simulation_steps() const noexcept {
  return impl_->steps();
}

} // namespace troupe

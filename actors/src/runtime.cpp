#include <troupe/actors/runtime.hpp>

#include <algorithm>

#include <troupe/actors/runtime_impl.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/cluster_resolver.hpp>

namespace troupe {

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

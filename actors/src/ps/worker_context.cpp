#include <troupe/actors/ps/worker_context.hpp>

#include <troupe/actors/ps/function_registry.hpp>
#include <troupe/actors/fibers/fiber_local_impl.hpp>

#include <caf/send.hpp>

#include <troupe/actors/runtime/executor.hpp>
#include <troupe/actors/ps/update_stager.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

WorkerContext::WorkerContext(Executor& runtime, int worker_index, std::string name, int num_ps)
  : runtime_(&runtime), worker_index_(worker_index), name_(std::move(name)),
    staged_(static_cast<std::size_t>(num_ps)), recorder_(knobs().flight_recorder_entries) {
}

void WorkerContext::record_start(uint64_t id, uint32_t attempt, const std::string& function, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  recorder_.dispatched(id, attempt, function, name_, now_ns);
}

void WorkerContext::record_end(uint64_t id, uint32_t attempt, std::string how, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  recorder_.ended(id, attempt, std::move(how), now_ns);
}

std::string WorkerContext::flight_record(const std::string& why, int64_t now_ns, const std::string& task) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorder_.size() == 0 ? std::string{} : recorder_.render(why, now_ns, task);
}

WorkerContext::~WorkerContext() {
  if (stager_)
    caf::anon_send_exit(stager_, caf::exit_reason::user_shutdown);
}

template class FiberLocal<WorkerContext>;

void WorkerContext::begin_attempt(AttemptId attempt) {
  std::lock_guard<std::mutex> lock(mutex_);
  attempt_ = attempt;
  std::fill(staged_.begin(), staged_.end(), 0u);
}

AttemptId WorkerContext::attempt() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return attempt_;
}

void WorkerContext::count_staged(AttemptId attempt, int ps) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (attempt == attempt_)
    ++staged_.at(static_cast<std::size_t>(ps));
}

void WorkerContext::stage(std::vector<StageTarget> updates) {
  if (updates.empty())
    return;
  UpdateStagerHandle stager;
  AttemptId attempt;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stager_)
      stager_ = spawn_update_stager(*runtime_);
    stager = stager_;
    attempt = attempt_;
  }
  auto slot = std::make_shared<StageSlot>();
  slot->context = this;
  slot->attempt = attempt;
  slot->updates = std::move(updates);
  slot->pending = slot->updates.size();
  caf::anon_send(stager, StageUpdatesMsg{slot});
  runtime_->wait(slot->done, "staging variable updates at the parameter servers");
  if (slot->failed)
    fail(slot->code, slot->error);
}

std::vector<uint32_t> WorkerContext::staged_per_server() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return staged_;
}

uint64_t WorkerContext::register_resource(std::type_index type, ResourceBuilder builder) {
  return FunctionRegistry::current().add_resource(type, std::move(builder));
}

void WorkerContext::shut_down() noexcept {
  std::map<uint64_t, std::shared_ptr<void>> dropped;
  UpdateStagerHandle stager;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(resources_);
    stager.swap(stager_);
  }
  if (stager)
    caf::anon_send_exit(stager, caf::exit_reason::user_shutdown);
}

std::shared_ptr<void> WorkerContext::resource(uint64_t id, std::type_index type, const char* type_name) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = resources_.find(id); it != resources_.end())
      return it->second;
  }
  const auto builder = runtime_->functions().resource_builder(id, type, type_name, name_);
  // Built outside the lock: building a dataset may wait for actors.
  auto built = builder(*this);
  std::lock_guard<std::mutex> lock(mutex_);
  return resources_.emplace(id, std::move(built)).first->second;
}

} // namespace troupe::internal

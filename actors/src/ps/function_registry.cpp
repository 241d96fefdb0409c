#include <troupe/actors/ps/function_registry.hpp>

#include <map>
#include <mutex>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

struct FunctionRegistry::State {
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<const RegisteredFunction>> functions;
  uint64_t generations = 0;
  std::vector<std::pair<std::type_index, ResourceBuilder>> resources; ///< by id - 1
};

namespace {

thread_local FunctionRegistry* installed = nullptr;

} // namespace

FunctionRegistry::FunctionRegistry() : state_(std::make_unique<State>()) {
}

FunctionRegistry::~FunctionRegistry() = default;

FunctionRegistry& FunctionRegistry::process() {
  static FunctionRegistry registry;
  return registry;
}

FunctionRegistry& FunctionRegistry::current() {
  return installed != nullptr ? *installed : process();
}

FunctionRegistry::Installer::Installer(FunctionRegistry* registry) : previous_(installed) {
  installed = registry;
}

FunctionRegistry::Installer::~Installer() {
  installed = previous_;
}

uint64_t FunctionRegistry::add_resource(std::type_index type, ResourceBuilder builder) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->resources.emplace_back(type, std::move(builder));
  return state_->resources.size();
}

ResourceBuilder FunctionRegistry::resource_builder(uint64_t id, std::type_index type, const char* type_name,
                                                   const std::string& worker) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const auto& all = state_->resources;
  if (id == 0 || id > all.size())
    fail(Errc::not_found, "worker " + worker + " has no per-worker resource " + std::to_string(id)
                            + ": this process created " + std::to_string(all.size())
                            + "; every process of the cluster must create the same per-worker datasets "
                              "in the same order");
  if (all[id - 1].first != type)
    fail(Errc::invalid_argument, "per-worker resource " + std::to_string(id) + " is not a " + type_name
                                   + "; pass the PerWorker value the function's parameter expects");
  return all[id - 1].second;
}

std::shared_ptr<const RegisteredFunction> FunctionRegistry::add(std::string name, std::type_index signature,
                                                                ClosureInvoker invoke) {
  if (name.empty())
    fail(Errc::invalid_argument, "remote_function: give the function a name (workers in other processes find it "
                                 "by that name)");
  auto& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  auto entry = std::make_shared<const RegisteredFunction>(
    RegisteredFunction{name, signature, ++s.generations, std::move(invoke)});
  s.functions[std::move(name)] = entry;
  return entry;
}

std::shared_ptr<const RegisteredFunction> FunctionRegistry::find(const std::string& name) const {
  auto& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.functions.find(name);
  return it == s.functions.end() ? nullptr : it->second;
}

std::vector<std::string> FunctionRegistry::names() const {
  auto& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<std::string> out;
  for (const auto& [name, entry] : s.functions)
    out.push_back(name);
  return out;
}

} // namespace troupe::internal

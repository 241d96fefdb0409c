#include <troupe/actors/ps/function_registry.hpp>

#include <map>
#include <mutex>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

struct FunctionRegistry::State {
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<const RegisteredFunction>> functions;
  uint64_t generations = 0;
};

FunctionRegistry& FunctionRegistry::process() {
  static FunctionRegistry registry;
  return registry;
}

FunctionRegistry::State& FunctionRegistry::state() const {
  static State state;
  return state;
}

std::shared_ptr<const RegisteredFunction> FunctionRegistry::add(std::string name, std::type_index signature,
                                                                ClosureInvoker invoke) {
  if (name.empty())
    fail(Errc::invalid_argument, "remote_function: give the function a name (workers in other processes find it "
                                 "by that name)");
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto entry = std::make_shared<const RegisteredFunction>(
    RegisteredFunction{name, signature, ++s.generations, std::move(invoke)});
  s.functions[std::move(name)] = entry;
  return entry;
}

std::shared_ptr<const RegisteredFunction> FunctionRegistry::find(const std::string& name) const {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.functions.find(name);
  return it == s.functions.end() ? nullptr : it->second;
}

std::vector<std::string> FunctionRegistry::names() const {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<std::string> out;
  for (const auto& [name, entry] : s.functions)
    out.push_back(name);
  return out;
}

} // namespace troupe::internal

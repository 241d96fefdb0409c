#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <typeindex>
#include <vector>

namespace troupe::internal {

/// Runs a registered function on serialized arguments and returns its
/// serialized result (throws what the function throws).
using ClosureInvoker = std::function<std::vector<uint8_t>(const std::vector<uint8_t>& args)>;

/// One registration: what a worker runs, and what identifies it.
struct RegisteredFunction {
  std::string name;
  std::type_index signature; ///< the C++ signature, R(Args...)
  uint64_t generation = 0;   ///< which registration of `name` this is
  ClosureInvoker invoke;
};

class WorkerContext;

/// Builds a per-worker resource (a dataset, an iterator) on the worker that
/// first needs it.
using ResourceBuilder = std::function<std::shared_ptr<void>(WorkerContext&)>;

/// What a program made for its workers: the functions a coordinator
/// schedules by name (troupe::remote_function registers them), the
/// builders of per-worker resources (ClusterCoordinator's per-worker
/// datasets and iterators, by id) and its variables' ids. A coordinator in
/// another process finds a function only by its name, a resource or a
/// variable only by its id, so every process registers the same functions,
/// resources and variables in the same order.
///
/// A process has one (process()); each task of a SimulatedCluster runs its
/// own program in the same process, so it has its own, installed on its
/// thread while its program runs (current()) and found by its workers
/// through their runtime (Executor::functions()).
///
/// Registering a name again replaces it (a later cluster in the same
/// process); a handle made by the earlier registration then fails at
/// schedule, since its function is no longer the one workers would run.
class FunctionRegistry {
public:
  FunctionRegistry();
  ~FunctionRegistry();
  FunctionRegistry(const FunctionRegistry&) = delete;
  FunctionRegistry& operator=(const FunctionRegistry&) = delete;

  /// This process's.
  [[nodiscard]] static FunctionRegistry& process();
  /// The one the calling program registers in: its simulated task's while
  /// one is installed on this thread, else the process's.
  [[nodiscard]] static FunctionRegistry& current();
  /// Makes `registry` current on this thread while it lives.
  class Installer {
  public:
    explicit Installer(FunctionRegistry* registry);
    ~Installer();
    Installer(const Installer&) = delete;
    Installer& operator=(const Installer&) = delete;

  private:
    FunctionRegistry* previous_;
  };

  /// Registers `invoke` under `name`; returns the registration. An empty
  /// name is Error(invalid_argument).
  [[nodiscard]] std::shared_ptr<const RegisteredFunction> add(std::string name, std::type_index signature,
                                                              ClosureInvoker invoke);

  /// The current registration of `name`, or null.
  [[nodiscard]] std::shared_ptr<const RegisteredFunction> find(const std::string& name) const;

  /// The registered names, sorted (for error messages).
  [[nodiscard]] std::vector<std::string> names() const;

  /// Registers a builder of resources of type `type` and returns its id:
  /// ids count up in registration order (1, 2, ...).
  [[nodiscard]] uint64_t add_resource(std::type_index type, ResourceBuilder builder);
  /// Resource `id`'s builder, or Error(not_found) naming `worker` when there
  /// is none, Error(invalid_argument) when it builds another type than `type`.
  [[nodiscard]] ResourceBuilder resource_builder(uint64_t id, std::type_index type, const char* type_name,
                                                 const std::string& worker) const;

  /// The id of the program's next ShardedVariable (1, 2, ...): every task
  /// that runs the program gives the same variable the same id.
  [[nodiscard]] uint64_t next_variable_id() noexcept { return next_variable_id_++; }

private:
  struct State;
  std::unique_ptr<State> state_;
  std::atomic<uint64_t> next_variable_id_{1};
};

} // namespace troupe::internal

#pragma once

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

/// The functions this process can run when a coordinator schedules them by
/// name (troupe::remote_function registers them). A coordinator in another
/// process finds a function only by its name, so every process registers
/// the same functions under the same names.
///
/// Registering a name again replaces it (a later cluster in the same
/// process); a handle made by the earlier registration then fails at
/// schedule, since its function is no longer the one workers would run.
class FunctionRegistry {
public:
  [[nodiscard]] static FunctionRegistry& process();

  /// Registers `invoke` under `name`; returns the registration. An empty
  /// name is Error(invalid_argument).
  [[nodiscard]] std::shared_ptr<const RegisteredFunction> add(std::string name, std::type_index signature,
                                                              ClosureInvoker invoke);

  /// The current registration of `name`, or null.
  [[nodiscard]] std::shared_ptr<const RegisteredFunction> find(const std::string& name) const;

  /// The registered names, sorted (for error messages).
  [[nodiscard]] std::vector<std::string> names() const;

private:
  FunctionRegistry() = default;
  struct State;
  [[nodiscard]] State& state() const;
};

} // namespace troupe::internal

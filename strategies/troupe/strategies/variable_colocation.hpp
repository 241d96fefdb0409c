#pragma once

#include <string>
#include <utility>

#include <troupe/strategies/fwd.hpp>

namespace troupe {

/// The RAII form of `with strategy.extended.colocate_vars_with(v):`
/// (StrategyExtended::colocate_vars_with). While it lives, variables the
/// strategy creates get their copies on the devices of the target variable's
/// copies. For troupe's strategies those are the replicas' devices anyway, so
/// it changes nothing yet; it is recorded so that strategies that place
/// variables (parameter servers) can honour it. Scopes nest; destroy them in
/// reverse order of creation, on the thread that made them.
class VariableColocation {
public:
  ~VariableColocation();
  VariableColocation(VariableColocation&& other) noexcept;
  VariableColocation(const VariableColocation&) = delete;
  VariableColocation& operator=(const VariableColocation&) = delete;
  VariableColocation& operator=(VariableColocation&&) = delete;

  /// The name of the variable new variables are colocated with.
  [[nodiscard]] const std::string& target() const noexcept { return target_; }

private:
  friend class StrategyExtended;
  VariableColocation(StrategyExtended& extended, std::string target) noexcept
    : extended_(&extended), target_(std::move(target)) {}

  StrategyExtended* extended_;
  std::string target_;
};

} // namespace troupe

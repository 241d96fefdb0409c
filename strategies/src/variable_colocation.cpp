#include <troupe/strategies/variable_colocation.hpp>

#include <utility>

#include <troupe/strategies/strategy_extended.hpp>

namespace troupe {

VariableColocation::VariableColocation(VariableColocation&& other) noexcept
  : extended_(std::exchange(other.extended_, nullptr)), target_(std::move(other.target_)) {
}

VariableColocation::~VariableColocation() {
  if (extended_ != nullptr)
    extended_->end_colocation();
}

} // namespace troupe

#pragma once

#include <memory>
#include <utility>

namespace troupe::internal {

/// Replaces the process's built-in implementation of `Interface` (the GPU
/// driver, the GPU kernels, NCCL) while it lives: troupe's tests install the
/// emulated ones this way. Scopes nest; the innermost one serves. Create it
/// before any Runtime and destroy it after the last one: it is not
/// thread-safe against running Runtimes.
template <class Interface>
class ScopedOverride {
public:
  /// Installs `replacement`, owned by the scope.
  explicit ScopedOverride(std::unique_ptr<Interface> replacement)
    : owned_(std::move(replacement)), previous_(std::exchange(slot(), owned_.get())) {}
  /// Installs `replacement`, which outlives the scope.
  explicit ScopedOverride(Interface& replacement) : previous_(std::exchange(slot(), &replacement)) {}
  ~ScopedOverride() { slot() = previous_; }
  ScopedOverride(const ScopedOverride&) = delete;
  ScopedOverride& operator=(const ScopedOverride&) = delete;

  /// The replacement in force, or null when the built-in one serves.
  [[nodiscard]] static Interface* current() noexcept { return slot(); }

private:
  static Interface*& slot() noexcept {
    static Interface* installed = nullptr;
    return installed;
  }

  std::unique_ptr<Interface> owned_;
  Interface* previous_;
};

} // namespace troupe::internal

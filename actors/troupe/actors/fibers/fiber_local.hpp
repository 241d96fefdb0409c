#pragma once

#include <utility>

namespace troupe::internal {

/// A pointer, per thread, to the T that the code running there works under
/// (a fiber's waiter, a scheduled function's context). An actor installs it
/// around each resume of its fiber, since a fiber may resume on another
/// thread.
///
/// current() and the installer's switch are out of line: an inlined
/// thread_local address could be reused after the fiber resumed on another
/// thread. T's own .cpp includes fiber_local_impl.hpp and instantiates
/// `template class FiberLocal<T>;`, so T may be incomplete where it is used.
template <class T>
class FiberLocal {
public:
  /// The current T on this thread, or null.
  [[nodiscard]] static T* current() noexcept;

  /// Makes `value` the current one while it lives.
  class Installer {
  public:
    explicit Installer(T* value) noexcept : previous_(exchange(value)) {}
    ~Installer() { exchange(previous_); }
    Installer(const Installer&) = delete;
    Installer& operator=(const Installer&) = delete;

  private:
    T* previous_;
  };

private:
  /// Makes `value` current and returns the one before.
  static T* exchange(T* value) noexcept;
};

} // namespace troupe::internal

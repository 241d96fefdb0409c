#pragma once

// FiberLocal's out-of-line members: included by the one .cpp of each T that
// instantiates `template class FiberLocal<T>;`.

#include <utility>

#include <troupe/actors/fibers/fiber_local.hpp>

namespace troupe::internal {

template <class T>
thread_local T* fiber_local_slot = nullptr;

template <class T>
T* FiberLocal<T>::current() noexcept {
  return fiber_local_slot<T>;
}

template <class T>
T* FiberLocal<T>::exchange(T* value) noexcept {
  return std::exchange(fiber_local_slot<T>, value);
}

} // namespace troupe::internal

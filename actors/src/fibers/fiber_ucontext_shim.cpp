// Sanitizer builds switch Boost.Context to its ucontext backend
// (BOOST_USE_UCONTEXT), which ASan can follow. Debian's libboost_context is
// built for the fcontext backend, so the ucontext backend's one out-of-line
// piece, the per-thread current activation record, is defined here as Boost's
// own source defines it.
#if defined(BOOST_USE_UCONTEXT)

#include <cstddef>

#include <boost/context/fiber.hpp>

namespace boost::context::detail {

namespace {
thread_local fiber_activation_record* current_record = nullptr;
thread_local std::size_t initializer_count = 0;
} // namespace

fiber_activation_record_initializer::fiber_activation_record_initializer() noexcept {
  if (initializer_count++ == 0)
    current_record = new fiber_activation_record();
}

fiber_activation_record_initializer::~fiber_activation_record_initializer() {
  if (--initializer_count == 0) {
    delete current_record;
    current_record = nullptr;
  }
}

fiber_activation_record*& fiber_activation_record::current() noexcept {
  // The record of the thread's main context is created the first time a
  // thread switches fibers, and freed when the thread exits.
  thread_local fiber_activation_record_initializer initializer;
  return current_record;
}

} // namespace boost::context::detail

#endif

#include <troupe/core/denormals.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace troupe {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// MXCSR bit 15 (FTZ) and bit 6 (DAZ).
constexpr unsigned long long flush_bits = 0x8040;
unsigned long long read_mode() { return _mm_getcsr(); }
void write_mode(unsigned long long mode) { _mm_setcsr(static_cast<unsigned int>(mode)); }
#elif defined(__aarch64__)
// FPCR bit 24 (FZ) flushes both inputs and results.
constexpr unsigned long long flush_bits = 1ull << 24;
unsigned long long read_mode() {
  unsigned long long fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
}
void write_mode(unsigned long long mode) { __asm__ __volatile__("msr fpcr, %0" : : "r"(mode)); }
#else
constexpr unsigned long long flush_bits = 0;
unsigned long long read_mode() { return 0; }
void write_mode(unsigned long long) {}
#endif

} // namespace

bool denormals_flushed() {
  return flush_bits != 0 && (read_mode() & flush_bits) == flush_bits;
}

void flush_denormals_on_this_thread() {
  write_mode(read_mode() | flush_bits);
}

ScopedFlushDenormals::ScopedFlushDenormals() : saved_(read_mode()) {
  // On troupe's own threads the bits are set already: one read, no write.
  restore_ = (saved_ & flush_bits) != flush_bits;
  if (restore_)
    write_mode(saved_ | flush_bits);
}

ScopedFlushDenormals::~ScopedFlushDenormals() {
  if (restore_)
    write_mode(saved_);
}

} // namespace troupe

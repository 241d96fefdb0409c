#pragma once

namespace troupe {

/// Denormal (subnormal) floats: troupe computes with them flushed to zero, as
/// TensorFlow does on its compute threads. Arithmetic that produces or reads
/// a denormal takes a microcode assist on many CPUs (tens to hundreds of
/// cycles per operation): a model whose small weights and Adam moments decay
/// into the denormal range slowed down 1.9x after two epochs without it.
///
/// - Every thread troupe's actor system starts (scheduler workers, detached
///   actors, the middleman) sets flush-to-zero (FTZ) and denormals-are-zero
///   (DAZ) once when it starts, and so does every replica's fiber.
/// - Every kernel (ops/nn_ops.hpp, ops/optimizer_ops.hpp, ops/tensor_ops.hpp, casts, the
///   collectives' reductions) runs with both set whatever thread calls it,
///   and gives the calling thread its own mode back when it returns, so a
///   kernel's result does not depend on the thread that ran it.
/// - Your own arithmetic inside a replica function or a dataset's map or
///   filter function runs with both set too; elsewhere on your own threads
///   troupe changes nothing.
///
/// On x86-64 these are the MXCSR bits FTZ and DAZ; on AArch64 FPCR.FZ; on
/// other CPUs nothing is changed and denormals_flushed() is false.

/// Whether the calling thread flushes denormal results and inputs to zero.
[[nodiscard]] bool denormals_flushed();

/// Sets flush-to-zero and denormals-are-zero on the calling thread for good.
void flush_denormals_on_this_thread();

/// Sets flush-to-zero and denormals-are-zero for its lifetime and restores
/// the thread's previous mode when it ends (a no-op where they are set).
class ScopedFlushDenormals {
public:
  ScopedFlushDenormals();
  ~ScopedFlushDenormals();
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

private:
  unsigned long long saved_;
  bool restore_;
};

} // namespace troupe

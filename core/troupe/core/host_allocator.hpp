#pragma once

#include <cstddef>

namespace troupe::internal {

/// Host memory for tensor buffers: 64-byte aligned, and blocks of at least
/// 64 KiB are cached by size class for reuse (up to knobs().host_cache_bytes),
/// so a training loop or a collective does not page-fault fresh memory on every
/// step. Thread-safe.
void* allocate_host(std::size_t bytes);
void deallocate_host(void* ptr, std::size_t bytes) noexcept;

/// Bytes currently held in the cache (for tests and benchmarks).
std::size_t host_cache_bytes() noexcept;

} // namespace troupe::internal

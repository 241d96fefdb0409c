#pragma once

// CRC-32C (Castagnoli) and TensorFlow's masked form, for TFRecord framing.
// Internal to troupe_datasets.

#include <cstddef>
#include <cstdint>
#include <span>

namespace troupe::internal {

/// The CRC-32C of `data` appended to bytes whose CRC-32C is `crc`
/// (crc32c_extend(0, ...) is the CRC of `data` alone). Runs the fastest of
/// crc32c_implementations(), picked once: VPCLMULQDQ folding on CPUs with
/// AVX-512, else three streams of the SSE4.2 crc32 instruction, else tables.
[[nodiscard]] uint32_t crc32c_extend(uint32_t crc, const void* data, std::size_t size) noexcept;

/// The same with tables only (slicing-by-8), on any CPU.
[[nodiscard]] uint32_t crc32c_extend_portable(uint32_t crc, const void* data,
                                              std::size_t size) noexcept;

/// One way to compute crc32c_extend.
struct Crc32cImplementation {
  using Function = uint32_t (*)(uint32_t crc, const void* data, std::size_t size) noexcept;
  const char* name; ///< "vpclmulqdq", "sse4.2" or "slicing-by-8"
  Function extend;
};

/// The implementations this CPU runs, fastest first (crc32c_extend uses the
/// first); for tests and benchmarks.
[[nodiscard]] std::span<const Crc32cImplementation> crc32c_implementations();

/// The CRC-32C of `data`.
[[nodiscard]] inline uint32_t crc32c(const void* data, std::size_t size) noexcept {
  return crc32c_extend(0, data, size);
}

/// TensorFlow's masked CRC, as stored in TFRecord files: a CRC of data that
/// embeds CRCs is not itself a well-behaved CRC, hence the rotation.
[[nodiscard]] inline uint32_t crc32c_mask(uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/// The CRC that crc32c_mask() turned into `masked`.
[[nodiscard]] inline uint32_t crc32c_unmask(uint32_t masked) noexcept {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

} // namespace troupe::internal

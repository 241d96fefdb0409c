#include <troupe/core/crc32c.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TROUPE_DATASETS_CRC32C_X86 1
#endif

namespace troupe::internal {

namespace {

// Reflected CRC-32C polynomial.
constexpr uint32_t polynomial = 0x82f63b78u;

using Table = std::array<uint32_t, 256>;

// Slicing-by-8: slice[k][b] is the CRC register after byte b followed by k zero bytes.
constexpr std::array<Table, 8> make_slice_tables() {
  std::array<Table, 8> slice{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1) != 0 ? (c >> 1) ^ polynomial : c >> 1;
    slice[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b)
    for (std::size_t k = 1; k < 8; ++k)
      slice[k][b] = (slice[k - 1][b] >> 8) ^ slice[0][slice[k - 1][b] & 0xff];
  return slice;
}

constexpr std::array<Table, 8> slice = make_slice_tables();

uint64_t load_le64(const unsigned char* p) noexcept {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  if constexpr (std::endian::native == std::endian::big)
    word = __builtin_bswap64(word);
  return word;
}

#ifdef TROUPE_DATASETS_CRC32C_X86

// -- three streams in parallel ------------------------------------------------------------
//
// The crc32 instruction has a latency of three cycles and a throughput of one
// per cycle, so one stream runs at a third of the possible speed. We run three
// streams over adjacent blocks and combine them: the register after A||B is the
// register after A advanced over |B| zero bytes, xor the register after B from
// zero. Advancing over a fixed number of zeros is a linear map on the 32-bit
// register, applied byte by byte through four tables (Mark Adler's crc32c.c).

using Matrix = std::array<uint32_t, 32>; // image of each register bit, GF(2)

constexpr uint32_t times(const Matrix& mat, uint32_t vec) {
  uint32_t sum = 0;
  for (std::size_t i = 0; vec != 0; vec >>= 1, ++i)
    if ((vec & 1) != 0)
      sum ^= mat[i];
  return sum;
}

constexpr Matrix square(const Matrix& mat) {
  Matrix result{};
  for (std::size_t i = 0; i < 32; ++i)
    result[i] = times(mat, mat[i]);
  return result;
}

// Tables that advance a register over `bytes` zero bytes (a power of two).
constexpr std::array<Table, 4> make_zeros_tables(std::size_t bytes) {
  Matrix op{}; // one zero bit
  op[0] = polynomial;
  for (std::size_t i = 1; i < 32; ++i)
    op[i] = uint32_t{1} << (i - 1);
  for (int i = 0; i < 3; ++i) // one zero byte
    op = square(op);
  for (; bytes > 1; bytes >>= 1)
    op = square(op);
  std::array<Table, 4> zeros{};
  for (uint32_t b = 0; b < 256; ++b)
    for (std::size_t k = 0; k < 4; ++k)
      zeros[k][b] = times(op, b << (8 * k));
  return zeros;
}

constexpr std::size_t long_block = 8192;
constexpr std::size_t short_block = 256;
constexpr std::array<Table, 4> long_zeros = make_zeros_tables(long_block);
constexpr std::array<Table, 4> short_zeros = make_zeros_tables(short_block);

uint32_t shift(const std::array<Table, 4>& zeros, uint32_t crc) noexcept {
  return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^ zeros[2][(crc >> 16) & 0xff]
         ^ zeros[3][crc >> 24];
}

// Runs three streams over blocks of `block` bytes while at least three are left;
// keeps the register and the pointer in locals so that the loop stays in registers.
template <std::size_t block>
__attribute__((target("sse4.2"), always_inline)) inline uint64_t
three_streams(uint64_t crc0, const unsigned char*& next, std::size_t& size,
              const std::array<Table, 4>& zeros) noexcept {
  const unsigned char* p = next;
  std::size_t left = size;
  while (left >= 3 * block) {
    uint64_t crc1 = 0;
    uint64_t crc2 = 0;
    for (std::size_t i = 0; i < block; i += 8) {
      crc0 = _mm_crc32_u64(crc0, load_le64(p + i));
      crc1 = _mm_crc32_u64(crc1, load_le64(p + block + i));
      crc2 = _mm_crc32_u64(crc2, load_le64(p + 2 * block + i));
    }
    crc0 = shift(zeros, static_cast<uint32_t>(crc0)) ^ crc1;
    crc0 = shift(zeros, static_cast<uint32_t>(crc0)) ^ crc2;
    p += 3 * block;
    left -= 3 * block;
  }
  next = p;
  size = left;
  return crc0;
}

__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const void* data,
                                                        std::size_t size) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t crc0 = ~crc;
  while (size > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *p++);
    --size;
  }
  crc0 = three_streams<long_block>(crc0, p, size, long_zeros);
  crc0 = three_streams<short_block>(crc0, p, size, short_zeros);
  for (; size >= 8; size -= 8, p += 8)
    crc0 = _mm_crc32_u64(crc0, load_le64(p));
  for (; size > 0; --size)
    crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *p++);
  return ~static_cast<uint32_t>(crc0);
}

// -- carry-less multiplication -------------------------------------------------------------
//
// With VPCLMULQDQ the data is folded 256 bytes per step, sixteen 128-bit
// lanes at a time, about twice the speed of the crc32 instruction. A 128-bit
// chunk A (high half H, low half L as polynomials) that lies D bits before a
// chunk B adds to B as H * (x^(D+64) mod P) + L * (x^D mod P), a product of
// fewer than 128 bits. Loaded little-endian, the lanes hold H and L
// bit-reflected; a carry-less product of reflected operands comes out one bit
// short of the 128-bit reflected layout, which the constants absorb by using
// x^(D+63) and x^(D-1). The folded 16 bytes are finally run through crc32
// from a zero register, which reduces them modulo P.

// x^n mod P, with P in normal (unreflected) form.
constexpr uint32_t x_power_mod(std::size_t n) {
  uint32_t r = 1;
  for (std::size_t i = 0; i < n; ++i)
    r = (r & 0x80000000u) != 0 ? (r << 1) ^ 0x1edc6f41u : r << 1;
  return r;
}

// A remainder of degree < 32 in the reflected 64-bit operand layout: x^e at bit 63 - e.
constexpr uint64_t reflected64(uint32_t q) {
  uint64_t v = 0;
  for (int e = 0; e < 32; ++e)
    if (((q >> e) & 1) != 0)
      v |= uint64_t{1} << (63 - e);
  return v;
}

// The constants that fold a 128-bit chunk `bits` forward, one per half.
struct FoldConstants {
  uint64_t for_h; // multiplies H, the high-degree half: the lane's low quadword
  uint64_t for_l; // multiplies L, the low-degree half: the lane's high quadword
};

constexpr FoldConstants fold_constants(std::size_t bits) {
  return {reflected64(x_power_mod(bits + 63)), reflected64(x_power_mod(bits - 1))};
}

constexpr FoldConstants fold_2048 = fold_constants(2048);
constexpr FoldConstants fold_512 = fold_constants(512);
constexpr FoldConstants fold_384 = fold_constants(384);
constexpr FoldConstants fold_256 = fold_constants(256);
constexpr FoldConstants fold_128 = fold_constants(128);

#define TROUPE_DATASETS_CRC32C_VPCLMUL                                                             \
  __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2")))

TROUPE_DATASETS_CRC32C_VPCLMUL inline __m512i lanes(FoldConstants k) {
  const auto h = static_cast<long long>(k.for_h);
  const auto l = static_cast<long long>(k.for_l);
  return _mm512_set_epi64(l, h, l, h, l, h, l, h); // highest quadword first
}

TROUPE_DATASETS_CRC32C_VPCLMUL inline __m512i fold(__m512i a, __m512i k, __m512i b) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
                                   _mm512_clmulepi64_epi128(a, k, 0x11), b, 0x96);
}

TROUPE_DATASETS_CRC32C_VPCLMUL inline __m128i fold(__m128i a, FoldConstants k, __m128i b) {
  const __m128i kk =
    _mm_set_epi64x(static_cast<long long>(k.for_l), static_cast<long long>(k.for_h));
  return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(a, kk, 0x00),
                                _mm_clmulepi64_si128(a, kk, 0x11), b, 0x96);
}

TROUPE_DATASETS_CRC32C_VPCLMUL uint32_t extend_vpclmul(uint32_t crc, const void* data,
                                                       std::size_t size) noexcept {
  if (size < 1024)
    return extend_sse42(crc, data, size);
  const auto* p = static_cast<const unsigned char*>(data);
  // The register adds to the first 32 bits of the data.
  __m512i z0 = _mm512_xor_si512(_mm512_loadu_si512(p),
                                _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(~crc))));
  __m512i z1 = _mm512_loadu_si512(p + 64);
  __m512i z2 = _mm512_loadu_si512(p + 128);
  __m512i z3 = _mm512_loadu_si512(p + 192);
  p += 256;
  size -= 256;
  const __m512i k2048 = lanes(fold_2048);
  for (; size >= 256; p += 256, size -= 256) {
    z0 = fold(z0, k2048, _mm512_loadu_si512(p));
    z1 = fold(z1, k2048, _mm512_loadu_si512(p + 64));
    z2 = fold(z2, k2048, _mm512_loadu_si512(p + 128));
    z3 = fold(z3, k2048, _mm512_loadu_si512(p + 192));
  }
  const __m512i k512 = lanes(fold_512);
  z1 = fold(z0, k512, z1);
  z2 = fold(z1, k512, z2);
  z3 = fold(z2, k512, z3);
  // Through memory: GCC 12's lane-extract intrinsics warn about their own
  // undefined upper lanes.
  alignas(64) std::array<unsigned char, 64> lanes_bytes;
  _mm512_store_si512(lanes_bytes.data(), z3);
  const auto lane = [&](int i) {
    return _mm_load_si128(reinterpret_cast<const __m128i*>(lanes_bytes.data() + 16 * i));
  };
  __m128i x = lane(3);
  x = fold(lane(0), fold_384, x);
  x = fold(lane(1), fold_256, x);
  x = fold(lane(2), fold_128, x);
  for (; size >= 16; p += 16, size -= 16)
    x = fold(x, fold_128, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  uint64_t r = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(x)));
  r = _mm_crc32_u64(r, static_cast<uint64_t>(_mm_extract_epi64(x, 1)));
  for (; size > 0; --size)
    r = _mm_crc32_u8(static_cast<uint32_t>(r), *p++);
  return ~static_cast<uint32_t>(r);
}

#endif // TROUPE_DATASETS_CRC32C_X86

std::vector<Crc32cImplementation> available_implementations() {
  std::vector<Crc32cImplementation> found;
#ifdef TROUPE_DATASETS_CRC32C_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f")
      && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("pclmul")
      && __builtin_cpu_supports("sse4.2"))
    found.push_back({"vpclmulqdq", extend_vpclmul});
  if (__builtin_cpu_supports("sse4.2"))
    found.push_back({"sse4.2", extend_sse42});
#endif
  found.push_back({"slicing-by-8", crc32c_extend_portable});
  return found;
}

const std::vector<Crc32cImplementation>& implementations() {
  static const std::vector<Crc32cImplementation> all = available_implementations();
  return all;
}

} // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, std::size_t size) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  for (; size > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --size)
    c = slice[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  for (; size >= 8; size -= 8, p += 8) {
    const uint64_t word = load_le64(p) ^ c;
    c = slice[7][word & 0xff] ^ slice[6][(word >> 8) & 0xff] ^ slice[5][(word >> 16) & 0xff]
        ^ slice[4][(word >> 24) & 0xff] ^ slice[3][(word >> 32) & 0xff]
        ^ slice[2][(word >> 40) & 0xff] ^ slice[1][(word >> 48) & 0xff] ^ slice[0][word >> 56];
  }
  for (; size > 0; --size)
    c = slice[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

uint32_t crc32c_extend(uint32_t crc, const void* data, std::size_t size) noexcept {
  static const Crc32cImplementation::Function fastest = implementations().front().extend;
  return fastest(crc, data, size);
}

std::span<const Crc32cImplementation> crc32c_implementations() {
  return implementations();
}

} // namespace troupe::internal

#include <troupe/collectives/reduce_kernels.hpp>
#include <troupe/core/denormals.hpp>

#include <cstring>
#include <type_traits>

#include <emmintrin.h>

#include <troupe/ops/eigen_types.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

// Accumulator bytes per block. Small blocks keep the accumulator and the
// hardware prefetchers' streams (one per input) cheap: measured on the 2-core
// CI machine type for 4 x 64 MiB float32 on one thread, 8 KiB blocks took
// 17-34 ms, 2 KiB blocks 13.7 ms (bench/allreduce_local, helper experiment).
constexpr int64_t block_bytes = 2048;

// Copies a finished block to its destination, bypassing the cache when asked
// and when both ends allow 16-byte non-temporal stores.
void store_block(std::byte* dst, const std::byte* src, size_t bytes, bool streaming) {
  if (!streaming || reinterpret_cast<uintptr_t>(dst) % 16 != 0 || bytes % 16 != 0) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto* d = reinterpret_cast<__m128i*>(dst);
  auto* s = reinterpret_cast<const __m128i*>(src);
  for (size_t i = 0; i < bytes / 16; ++i)
    _mm_stream_si128(d + i, _mm_load_si128(s + i));
}

template <class T>
void reduce_typed(ReduceOp op, const std::byte* const* inputs, int n, std::byte* out,
                  int64_t begin, int64_t end, bool streaming) {
  using Acc = compute_t<T>;
  using E = eigen_t<T>;
  using AccArray = Eigen::Array<Acc, Eigen::Dynamic, 1>;
  constexpr int64_t block = block_bytes / static_cast<int64_t>(sizeof(Acc));
  alignas(64) Acc acc_buf[block];
  alignas(64) T out_buf[block];
  for (int64_t b = begin; b < end; b += block) {
    const int64_t len = std::min(block, end - b);
    Eigen::Map<AccArray> acc(acc_buf, len);
    auto input = [&](int k) {
      auto in = Eigen::Map<const Eigen::Array<E, Eigen::Dynamic, 1>>(
        reinterpret_cast<const E*>(inputs[k]) + b, len);
      if constexpr (std::is_same_v<Acc, E>)
        return in;
      else
        return in.template cast<Acc>();
    };
    // Up to four inputs per pass over the accumulator, added left to right
    // ((((in0 + in1) + in2) + in3) + ...), so the result is bitwise the same
    // as adding one input at a time, with a quarter of the accumulator traffic.
    int k = 0;
    switch (std::min(n, 4)) {
      case 1: acc = input(0); k = 1; break;
      case 2: acc = input(0) + input(1); k = 2; break;
      case 3: acc = input(0) + input(1) + input(2); k = 3; break;
      default: acc = input(0) + input(1) + input(2) + input(3); k = 4; break;
    }
    while (k < n) {
      switch (std::min(n - k, 4)) {
        case 1: acc = acc + input(k); k += 1; break;
        case 2: acc = acc + input(k) + input(k + 1); k += 2; break;
        case 3: acc = acc + input(k) + input(k + 1) + input(k + 2); k += 3; break;
        default: acc = acc + input(k) + input(k + 1) + input(k + 2) + input(k + 3); k += 4; break;
      }
    }
    const auto bytes = static_cast<size_t>(len) * sizeof(T);
    std::byte* dst = out + b * static_cast<int64_t>(sizeof(T));
    if constexpr (std::is_unsigned_v<T>) {
      // uint8 accumulates in uint32, exact for fewer than 2^24 inputs: MEAN
      // divides the exact sum (as tf.reduce_mean, which widens uint8), SUM
      // wraps modulo 256 as it narrows to T.
      if (op == ReduceOp::MEAN)
        acc /= static_cast<Acc>(n);
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> result(out_buf, len);
      result = acc.template cast<T>();
      store_block(dst, reinterpret_cast<const std::byte*>(out_buf), bytes, streaming);
    } else if constexpr (std::is_integral_v<T>) {
      // The unsigned sum wraps back to T (modular, as TensorFlow's integer
      // kernels); MEAN then truncates in T, as tf.reduce_mean.
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> result(out_buf, len);
      result = acc.template cast<T>();
      if (op == ReduceOp::MEAN)
        result /= static_cast<T>(n);
      store_block(dst, reinterpret_cast<const std::byte*>(out_buf), bytes, streaming);
    } else {
      if (op == ReduceOp::MEAN)
        acc /= static_cast<Acc>(n);
      if constexpr (std::is_same_v<Acc, E>) {
        store_block(dst, reinterpret_cast<const std::byte*>(acc_buf), bytes, streaming);
      } else {
        Eigen::Map<Eigen::Array<E, Eigen::Dynamic, 1>>(reinterpret_cast<E*>(out_buf), len)
          = acc.template cast<E>();
        store_block(dst, reinterpret_cast<const std::byte*>(out_buf), bytes, streaming);
      }
    }
  }
  if (streaming)
    _mm_sfence(); // non-temporal stores must be visible before the result is shared
}

} // namespace

void reduce_elements(DType dtype, ReduceOp op, const std::byte* const* inputs, int num_inputs,
                     std::byte* out, int64_t begin, int64_t end, bool streaming_stores) {
  const ScopedFlushDenormals flush_denormals;
  if (dtype == DType::bool_)
    fail(Errc::not_supported, "all_reduce of bool tensors is not supported: cast to int32 first");
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      reduce_typed<T>(op, inputs, num_inputs, out, begin, end, streaming_stores);
  });
}

void divide_elements(DType dtype, std::byte* data, int64_t count, double divisor) {
  const ScopedFlushDenormals flush_denormals;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using C = compute_t<T>;
      using E = eigen_t<T>;
      // As ops' divide: the divisor as a T first (exact for a replica count), both operands in C.
      const C by = std::is_same_v<C, E> ? static_cast<C>(divisor)
                                        : static_cast<C>(static_cast<E>(static_cast<float>(divisor)));
      Eigen::Map<Eigen::Array<E, Eigen::Dynamic, 1>> values(reinterpret_cast<E*>(data), count);
      values = (values.template cast<C>() / by).template cast<E>();
    } else {
      fail(Errc::internal, "divide_elements: " + std::string(name(dtype)) + " is not a floating dtype");
    }
  });
}

} // namespace troupe::internal

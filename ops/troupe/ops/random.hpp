#pragma once

#include <cstdint>
#include <random>

#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>
#include <troupe/core/tensor.hpp>

namespace troupe {

/// A seeded source of random tensors for weight initialisers and tests, as
/// tf.random.Generator.from_seed.
///
/// The same seed gives the same tensors bit for bit on every platform and
/// standard library: the engine is std::mt19937_64 (whose output the C++
/// standard fixes), and every conversion from its 64-bit draws is written out
/// here with IEEE arithmetic only (no std::*_distribution, no libm log/sin, whose
/// last bits differ between C libraries). Tensors fill in row-major order.
/// Not thread-safe: give each thread (or replica) its own generator.
class RandomGenerator {
public:
  /// The generator std::mt19937_64(seed) drives.
  explicit RandomGenerator(uint64_t seed);

  // -- raw draws ------------------------------------------------------------------

  /// The next 64 bits of the engine.
  [[nodiscard]] uint64_t next_u64();

  /// A double in [0, 1) from the top 53 bits of one draw: (x >> 11) * 2^-53.
  [[nodiscard]] double next_double();

  // -- tensors ----------------------------------------------------------------------

  /// Values uniform in [low, high), as tf.random.uniform, one draw per element.
  /// Floating dtypes compute low + (high - low) * next_double() in double and
  /// round to `dtype`; a value that rounds up to `high` becomes the next value
  /// below it, so `high` never appears. Integer dtypes (int32, int64, uint8)
  /// take integral low < high within the dtype's range and draw without
  /// modulo bias (a draw may be rejected and repeated). Bad bounds or bool are
  /// Error(invalid_argument / not_supported).
  [[nodiscard]] Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0,
                               DType dtype = DType::float32);

  /// Values from N(mean, stddev^2), as tf.random.normal: Marsaglia's polar
  /// method, two elements per accepted pair of draws (an odd count drops the
  /// last spare). Floating dtypes only; stddev must be finite and >= 0.
  [[nodiscard]] Tensor normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
                              DType dtype = DType::float32);

  /// A [fan_in, fan_out] dense kernel from Keras' default initialiser,
  /// GlorotUniform: uniform in [-limit, limit) with limit = sqrt(6 / (fan_in + fan_out)).
  /// Both fans must be positive.
  [[nodiscard]] Tensor glorot_uniform(int64_t fan_in, int64_t fan_out,
                                      DType dtype = DType::float32);

private:
  std::mt19937_64 engine_;
};

} // namespace troupe

#pragma once

// Bare-CUDA baselines for bench/gpu_device.cpp (bench/gpu_reference.cu).

#include <cstddef>
#include <vector>

#include "bench_support.hpp"

namespace troupe::bench {

/// Seconds per launch of a one-thread kernel on GPU 0, waited for by an event
/// (or, with `read_back`, by copying 4 bytes back to pinned host memory), after warm-up.
[[nodiscard]] std::vector<double> bare_launch_seconds(int iterations, bool read_back);

/// Seconds per launch of that kernel when `count` launches are queued back to
/// back and waited for once at the end (median of `rounds`).
[[nodiscard]] double pipelined_launch_seconds(int count, int rounds);

/// GPU 0's device-to-device copy bandwidth (cudaMemcpy of `bytes`): bytes read
/// plus bytes written per second of the median repetition.
[[nodiscard]] double device_copy_bytes_per_second(std::size_t bytes, int repetitions);

} // namespace troupe::bench

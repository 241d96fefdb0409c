#pragma once

// The all-reduce between 2 and 4 logical GPUs of GPU 0 (MirroredStrategy), as
// ROW lines whose limit is reading N·S and writing S at `copy_bps` (the
// card's device-to-device copy bandwidth, bench/gpu_reference.hpp), each
// followed by its ratio to reading and writing N·S (every replica has its own
// output). Each size is timed over `repetitions` all-reduces in one run,
// ended by a readback; every result is checked (exit 1 when wrong).

#include <cstddef>
#include <vector>

#include "bench_support.hpp"

namespace troupe::bench {

void print_gpu_all_reduce_rows(const std::vector<std::size_t>& sizes, int repetitions, double copy_bps);

} // namespace troupe::bench

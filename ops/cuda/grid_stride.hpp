#pragma once

// Launch shapes shared by the CUDA kernels (private to ops/cuda/). Kernels
// walk their elements in grid-stride loops over int64 indices, so a capped
// grid covers any n, 2^31 elements and beyond.

#include <algorithm>
#include <cstdint>

namespace troupe::internal {

inline constexpr int kThreadsPerBlock = 256;
inline constexpr int kWarpSize = 32;
/// Enough 256-thread blocks to fill an H100 (132 SMs) several times over;
/// more would only add block scheduling.
inline constexpr int64_t kMaxBlocks = 8192;

inline constexpr int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Blocks for `items` work items of which one block takes `items_per_block`.
inline unsigned blocks_for(int64_t items, int64_t items_per_block = kThreadsPerBlock) {
  return static_cast<unsigned>(std::clamp<int64_t>(ceil_div(items, items_per_block), 1, kMaxBlocks));
}

#ifdef __CUDACC__
/// This thread's first index in a grid-stride loop.
__device__ inline int64_t grid_start() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// The step of a grid-stride loop: every thread of the grid.
__device__ inline int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}
#endif

} // namespace troupe::internal

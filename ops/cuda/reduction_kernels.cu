// Kernels that reduce along rows or columns: reduce_sum, softmax,
// cross-entropy and the accuracy count.
//
// A row up to kWarpRowLimit long is one warp's (several rows per block), a
// longer one a whole block's; either team combines its threads' partial
// values with shuffles (and shared memory across a block's warps) in a fixed
// tree, so results do not change from run to run. Sums start from -0, the
// identity of float addition, so that a sum of -0s stays -0 as on the CPU.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <math_constants.h>

#include <troupe/core/errors.hpp>

#include "cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "grid_stride.hpp"

namespace troupe::internal::cuda_kernels {

namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
/// Rows up to this long go to one warp each; longer ones to a whole block.
constexpr int64_t kWarpRowLimit = 1024;

/// The bits of std::numeric_limits<float>::quiet_NaN(), as the CPU kernels write.
__device__ inline float quiet_nan() {
  return __int_as_float(0x7fc00000);
}

// -- combining values across threads -------------------------------------------------------

struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// The index of the largest number one thread (or team) saw: `index` is
/// kNoIndex when it saw none.
constexpr int64_t kNoIndex = INT64_MAX;
struct ArgMax {
  float value;
  int64_t index;
};

/// The larger of two ArgMax, the first index on ties.
struct FirstLargest {
  __device__ ArgMax operator()(const ArgMax& a, const ArgMax& b) const {
    if (b.index == kNoIndex)
      return a;
    if (a.index == kNoIndex)
      return b;
    return b.value > a.value || (b.value == a.value && b.index < a.index) ? b : a;
  }
};

__device__ float shuffle_xor(float value, int lane_mask) {
  return __shfl_xor_sync(kFullWarp, value, lane_mask);
}

__device__ ArgMax shuffle_xor(const ArgMax& value, int lane_mask) {
  return {__shfl_xor_sync(kFullWarp, value.value, lane_mask),
          static_cast<int64_t>(__shfl_xor_sync(kFullWarp, static_cast<long long>(value.index), lane_mask))};
}

/// `combine` over the warp's 32 values, returned to every lane. Each step
/// combines the lower lane's value with the upper one's, in that order, so
/// every lane computes the same tree bit for bit.
template <class T, class Combine>
__device__ T warp_all_reduce(T value, Combine combine) {
  const int lane = threadIdx.x % kWarpSize;
  for (int lane_mask = kWarpSize / 2; lane_mask > 0; lane_mask /= 2) {
    const T other = shuffle_xor(value, lane_mask);
    value = (lane & lane_mask) != 0 ? combine(other, value) : combine(value, other);
  }
  return value;
}

/// `combine` over the block's values, returned to every thread; every thread
/// of the block must call it.
template <class T, class Combine>
__device__ T block_all_reduce(T value, Combine combine) {
  __shared__ T warp_values[kThreadsPerBlock / kWarpSize];
  value = warp_all_reduce(value, combine);
  __syncthreads(); // a previous call's readers are done with warp_values
  if (threadIdx.x % kWarpSize == 0)
    warp_values[threadIdx.x / kWarpSize] = value;
  __syncthreads();
  // Every thread folds the few warp values itself: no third barrier to broadcast.
  T total = warp_values[0];
  for (int warp = 1; warp < kThreadsPerBlock / kWarpSize; ++warp)
    total = combine(total, warp_values[warp]);
  return total;
}

// -- teams: the threads that share a row ---------------------------------------------------

/// One warp per row (work item), kThreadsPerBlock / 32 rows per block.
struct WarpTeam {
  static constexpr int64_t kPerBlock = kThreadsPerBlock / kWarpSize;
  __device__ static int rank() { return threadIdx.x % kWarpSize; }
  __device__ static int size() { return kWarpSize; }
  __device__ static int64_t first() { return static_cast<int64_t>(blockIdx.x) * kPerBlock + threadIdx.x / kWarpSize; }
  __device__ static int64_t stride() { return static_cast<int64_t>(gridDim.x) * kPerBlock; }
  template <class T, class Combine>
  __device__ static T all_reduce(T value, Combine combine) {
    return warp_all_reduce(value, combine);
  }
};

/// One block per row (work item). Its loops over rows are the same for every
/// thread of the block, as block_all_reduce's barriers need.
struct BlockTeam {
  static constexpr int64_t kPerBlock = 1;
  __device__ static int rank() { return threadIdx.x; }
  __device__ static int size() { return kThreadsPerBlock; }
  __device__ static int64_t first() { return blockIdx.x; }
  __device__ static int64_t stride() { return gridDim.x; }
  template <class T, class Combine>
  __device__ static T all_reduce(T value, Combine combine) {
    return block_all_reduce(value, combine);
  }
};

/// Calls launch(team, blocks) with the team for rows `cols` long.
template <class Launch>
void launch_per_row(int64_t rows, int64_t cols, Launch launch) {
  if (cols <= kWarpRowLimit)
    launch(WarpTeam{}, blocks_for(rows, WarpTeam::kPerBlock));
  else
    launch(BlockTeam{}, blocks_for(rows, BlockTeam::kPerBlock));
}

/// Label `row` as int64, whatever its dtype; -1 (out of range) for an unknown dtype.
__device__ int64_t label_at(const void* labels, GpuLabelType type, int64_t row) {
  switch (type) {
    case GpuLabelType::int32: return static_cast<const int32_t*>(labels)[row];
    case GpuLabelType::int64: return static_cast<const int64_t*>(labels)[row];
    case GpuLabelType::uint8: return static_cast<const uint8_t*>(labels)[row];
  }
  return -1;
}

// -- reduce_sum -----------------------------------------------------------------------------

/// x is [rows, length]; work item w sums chunk (w % chunks) of row (w / chunks):
/// out[w] = scale * sum of x[row, chunk * chunk_length + k] for k < chunk_length.
template <class Team>
__global__ void sum_rows_kernel(const float* x, float* out, int64_t items, int64_t length, int64_t chunks,
                                int64_t chunk_length, float scale) {
  for (int64_t item = Team::first(); item < items; item += Team::stride()) {
    const float* row = x + (item / chunks) * length;
    const int64_t begin = (item % chunks) * chunk_length;
    const int64_t end = begin + chunk_length < length ? begin + chunk_length : length;
    float sum = -0.0f;
#pragma unroll 4
    for (int64_t k = begin + Team::rank(); k < end; k += Team::size())
      sum += row[k];
    sum = Team::all_reduce(sum, Add{});
    if (Team::rank() == 0)
      out[item] = scale * sum;
  }
}

/// x is [outer, length, inner]; one thread per output of [outer, chunks, inner]:
/// out[o, c, i] = scale * sum of x[o, c * chunk_length + k, i] for k < chunk_length.
/// Neighbouring threads read neighbouring i: coalesced.
__global__ void sum_columns_kernel(const float* x, float* out, int64_t outer, int64_t length, int64_t inner,
                                   int64_t chunks, int64_t chunk_length, float scale) {
  const int64_t items = outer * chunks * inner;
  for (int64_t item = grid_start(); item < items; item += grid_stride()) {
    const int64_t i = item % inner;
    const int64_t chunk = item / inner % chunks;
    const int64_t o = item / inner / chunks;
    const int64_t begin = chunk * chunk_length;
    const int64_t end = begin + chunk_length < length ? begin + chunk_length : length;
    const float* column = x + o * length * inner + i;
    float sum = -0.0f;
    for (int64_t k = begin; k < end; ++k)
      sum += column[k * inner];
    out[item] = scale * sum;
  }
}

__global__ void fill_kernel(float* out, int64_t n, float value) {
  for (int64_t i = grid_start(); i < n; i += grid_stride())
    out[i] = value;
}

constexpr const char* kReduceSum = "reduce_sum_f32";
/// Row sums: blocks this many at least in flight, each summing this many elements at least.
constexpr int64_t kTargetRowBlocks = 1024;
constexpr int64_t kMinRowChunk = 8 * 1024;
/// Column sums: threads this many at least in flight, each summing this many elements at least.
constexpr int64_t kTargetColumnThreads = 128 * 1024;
constexpr int64_t kMinColumnChunk = 64;
static_assert(kTargetRowBlocks <= kWarpRowLimit, "the partial sums of a row must fit one warp's pass");

/// How the `length` summands of each output split into chunks summed in
/// parallel, when `outputs` threads (or blocks) alone would leave the GPU
/// idle: up to `target` in all, no chunk shorter than `min_chunk`.
struct Chunks {
  int64_t count;
  int64_t length;
};

Chunks split(int64_t length, int64_t outputs, int64_t target, int64_t min_chunk) {
  int64_t count = 1;
  if (outputs < target)
    count = std::max<int64_t>(1, std::min(ceil_div(target, outputs), length / min_chunk));
  const int64_t chunk_length = ceil_div(length, count);
  return {ceil_div(length, chunk_length), chunk_length};
}

/// Device memory for partial sums, allocated and freed in the stream's order:
/// nothing waits, and the memory goes back to CUDA's pool once the kernels
/// enqueued before the free have run.
class StreamScratch {
public:
  StreamScratch(const GpuLaunchContext& ctx, int64_t floats) : stream_(stream_of(ctx)) {
    const std::size_t bytes = static_cast<std::size_t>(floats) * sizeof(float);
    const cudaError_t status = cudaMallocAsync(&data_, bytes, stream_);
    if (status == cudaErrorMemoryAllocation) {
      (void) cudaGetLastError();
      fail(Errc::resource_exhausted, std::string{kReduceSum} + " on GPU " + std::to_string(ctx.gpu)
                                       + ": no room for the " + std::to_string(bytes)
                                       + " bytes of its partial sums");
    }
    check_cuda(status, kReduceSum, ctx.gpu, "cudaMallocAsync");
  }
  ~StreamScratch() { (void) cudaFreeAsync(data_, stream_); }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  [[nodiscard]] float* data() const { return static_cast<float*>(data_); }

private:
  cudaStream_t stream_;
  void* data_ = nullptr;
};

/// out[r] = scale * sum of row r of x [rows, length], length > 0.
void sum_rows(const GpuLaunchContext& ctx, const float* x, float* out, int64_t rows, int64_t length, float scale) {
  const cudaStream_t stream = stream_of(ctx);
  if (length <= kWarpRowLimit) {
    sum_rows_kernel<WarpTeam><<<blocks_for(rows, WarpTeam::kPerBlock), kThreadsPerBlock, 0, stream>>>(
      x, out, rows, length, 1, length, scale);
    check_launch(kReduceSum, ctx.gpu);
    return;
  }
  const Chunks chunks = split(length, rows, kTargetRowBlocks, kMinRowChunk);
  if (chunks.count == 1) {
    sum_rows_kernel<BlockTeam><<<blocks_for(rows, 1), kThreadsPerBlock, 0, stream>>>(x, out, rows, length, 1,
                                                                                     length, scale);
    check_launch(kReduceSum, ctx.gpu);
    return;
  }
  // Few long rows (a full reduction): several blocks per row, then one pass over their partial sums.
  const int64_t items = rows * chunks.count;
  const StreamScratch partials{ctx, items};
  sum_rows_kernel<BlockTeam><<<blocks_for(items, 1), kThreadsPerBlock, 0, stream>>>(
    x, partials.data(), items, length, chunks.count, chunks.length, 1.0f);
  check_launch(kReduceSum, ctx.gpu);
  sum_rows(ctx, partials.data(), out, rows, chunks.count, scale);
}

/// out[o, i] = scale * sum over k of x[o, k, i], length > 0.
void sum_columns(const GpuLaunchContext& ctx, const float* x, float* out, int64_t outer, int64_t length,
                 int64_t inner, float scale) {
  const cudaStream_t stream = stream_of(ctx);
  const int64_t outputs = outer * inner;
  const Chunks chunks = split(length, outputs, kTargetColumnThreads, kMinColumnChunk);
  if (chunks.count == 1) {
    sum_columns_kernel<<<blocks_for(outputs), kThreadsPerBlock, 0, stream>>>(x, out, outer, length, inner, 1,
                                                                             length, scale);
    check_launch(kReduceSum, ctx.gpu);
    return;
  }
  // Few outputs over long columns: chunks of each column in parallel, then the same over their partial sums.
  const int64_t items = outputs * chunks.count;
  const StreamScratch partials{ctx, items};
  sum_columns_kernel<<<blocks_for(items), kThreadsPerBlock, 0, stream>>>(x, partials.data(), outer, length, inner,
                                                                         chunks.count, chunks.length, 1.0f);
  check_launch(kReduceSum, ctx.gpu);
  sum_columns(ctx, partials.data(), out, outer, chunks.count, inner, scale);
}

// -- softmax and cross-entropy --------------------------------------------------------------
//
// Each thread handles the same columns of its row in every pass, so `out`
// may alias the input.

template <class Team>
__global__ void softmax_kernel(const float* in, float* out, int64_t rows, int64_t cols, bool log) {
  for (int64_t row = Team::first(); row < rows; row += Team::stride()) {
    const float* x = in + row * cols;
    float* y = out + row * cols;
    // Shift by the row maximum so that expf cannot overflow (logits of 1000).
    float row_max = -CUDART_INF_F;
    for (int64_t c = Team::rank(); c < cols; c += Team::size())
      row_max = fmaxf(row_max, x[c]);
    row_max = Team::all_reduce(row_max, Max{});
    float sum = -0.0f;
    for (int64_t c = Team::rank(); c < cols; c += Team::size()) {
      const float e = expf(x[c] - row_max);
      if (!log)
        y[c] = e;
      sum += e;
    }
    sum = Team::all_reduce(sum, Add{});
    // The CPU kernel's formulas: (x - max) - log(sum), or e * (1 / sum).
    if (log) {
      const float log_sum = logf(sum);
      for (int64_t c = Team::rank(); c < cols; c += Team::size())
        y[c] = (x[c] - row_max) - log_sum;
    } else {
      const float inverse = 1.0f / sum;
      for (int64_t c = Team::rank(); c < cols; c += Team::size())
        y[c] *= inverse;
    }
  }
}

template <class Team>
__global__ void cross_entropy_kernel(const void* labels, GpuLabelType label_type, const float* logits,
                                     int64_t rows, int64_t cols, float* loss, float* backprop) {
  for (int64_t row = Team::first(); row < rows; row += Team::stride()) {
    const int64_t label = label_at(labels, label_type, row);
    float* gradient = backprop != nullptr ? backprop + row * cols : nullptr;
    if (label < 0 || label >= cols) {
      // NaN, as TensorFlow's GPU kernel gives (the same label for the whole team: no barrier skipped).
      if (Team::rank() == 0)
        loss[row] = quiet_nan();
      if (gradient != nullptr)
        for (int64_t c = Team::rank(); c < cols; c += Team::size())
          gradient[c] = quiet_nan();
      continue;
    }
    const float* x = logits + row * cols;
    float row_max = -CUDART_INF_F;
    for (int64_t c = Team::rank(); c < cols; c += Team::size())
      row_max = fmaxf(row_max, x[c]);
    row_max = Team::all_reduce(row_max, Max{});
    float sum = -0.0f;
    for (int64_t c = Team::rank(); c < cols; c += Team::size()) {
      const float e = expf(x[c] - row_max);
      if (gradient != nullptr)
        gradient[c] = e;
      sum += e;
    }
    sum = Team::all_reduce(sum, Add{});
    if (Team::rank() == 0)
      loss[row] = logf(sum) - (x[label] - row_max);
    if (gradient != nullptr) {
      // softmax - one_hot, rounded as the CPU's e * (1 / sum), then e[label] - 1 (no FMA).
      const float inverse = 1.0f / sum;
      for (int64_t c = Team::rank(); c < cols; c += Team::size()) {
        const float probability = __fmul_rn(gradient[c], inverse);
        gradient[c] = c == label ? probability - 1.0f : probability;
      }
    }
  }
}

// -- accuracy_count -------------------------------------------------------------------------

__global__ void init_counts_kernel(int64_t* counts, int64_t rows) {
  counts[0] = 0;
  counts[1] = rows;
}

/// Adds each team's correct rows to counts[0] and lowers counts[1] to its
/// first row with an out-of-range label: one atomic of each per team.
template <class Team>
__global__ void accuracy_count_kernel(const void* labels, GpuLabelType label_type, const float* logits,
                                      int64_t rows, int64_t cols, int64_t* counts) {
  unsigned long long correct = 0;
  int64_t first_bad_row = rows;
  for (int64_t row = Team::first(); row < rows; row += Team::stride()) {
    const int64_t label = label_at(labels, label_type, row);
    if (label < 0 || label >= cols) {
      if (row < first_bad_row)
        first_bad_row = row;
      continue; // no argmax in [0, cols) can equal it
    }
    const float* x = logits + row * cols;
    // The CPU's scan keeps index 0 until a strictly larger number comes: the
    // first index of the largest number, NaN ignored, unless x[0] is NaN.
    ArgMax best{-CUDART_INF_F, kNoIndex};
    for (int64_t c = Team::rank(); c < cols; c += Team::size()) {
      const float value = x[c];
      if (value > best.value || (best.index == kNoIndex && value == best.value))
        best = {value, c};
    }
    best = Team::all_reduce(best, FirstLargest{});
    const int64_t argmax = isnan(x[0]) ? 0 : best.index;
    if (argmax == label)
      ++correct;
  }
  if (Team::rank() == 0) {
    if (correct > 0)
      atomicAdd(reinterpret_cast<unsigned long long*>(&counts[0]), correct);
    if (first_bad_row < rows)
      atomicMin(reinterpret_cast<long long*>(&counts[1]), static_cast<long long>(first_bad_row));
  }
}

} // namespace

void reduce_sum_f32(const GpuLaunchContext& ctx, const float* x, float* out, int64_t outer, int64_t length,
                    int64_t inner, float scale) {
  const int64_t outputs = outer * inner;
  if (outputs <= 0)
    return;
  if (length <= 0) {
    // An empty sum is 0, as the CPU gives.
    fill_kernel<<<blocks_for(outputs), kThreadsPerBlock, 0, stream_of(ctx)>>>(out, outputs, scale * 0.0f);
    check_launch(kReduceSum, ctx.gpu);
    return;
  }
  if (inner == 1)
    sum_rows(ctx, x, out, outer, length, scale);
  else
    sum_columns(ctx, x, out, outer, length, inner, scale);
}

void softmax_f32(const GpuLaunchContext& ctx, const float* in, float* out, int64_t rows, int64_t cols, bool log) {
  if (rows <= 0 || cols <= 0)
    return;
  launch_per_row(rows, cols, [&](auto team, unsigned blocks) {
    softmax_kernel<decltype(team)><<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(in, out, rows, cols, log);
  });
  check_launch("softmax_f32", ctx.gpu);
}

void cross_entropy_f32(const GpuLaunchContext& ctx, const void* labels, GpuLabelType label_type,
                       const float* logits, int64_t rows, int64_t cols, float* loss, float* backprop) {
  if (rows <= 0)
    return;
  launch_per_row(rows, cols, [&](auto team, unsigned blocks) {
    cross_entropy_kernel<decltype(team)><<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(
      labels, label_type, logits, rows, cols, loss, backprop);
  });
  check_launch("cross_entropy_f32", ctx.gpu);
}

void accuracy_count_f32(const GpuLaunchContext& ctx, const void* labels, GpuLabelType label_type,
                        const float* logits, int64_t rows, int64_t cols, int64_t* counts) {
  const cudaStream_t stream = stream_of(ctx);
  // The counts start afresh even for no rows: {0, rows}.
  init_counts_kernel<<<1, 1, 0, stream>>>(counts, std::max<int64_t>(rows, 0));
  check_launch("accuracy_count_f32", ctx.gpu);
  if (rows <= 0)
    return;
  launch_per_row(rows, cols, [&](auto team, unsigned blocks) {
    accuracy_count_kernel<decltype(team)><<<blocks, kThreadsPerBlock, 0, stream>>>(labels, label_type, logits,
                                                                                   rows, cols, counts);
  });
  check_launch("accuracy_count_f32", ctx.gpu);
}

} // namespace troupe::internal::cuda_kernels

#include <troupe/actors/gpu/caching_device_allocator.hpp>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <utility>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

/// The smallest bucket, and the granularity of every bucket.
constexpr std::size_t min_bucket = 512;

} // namespace

// GiB is the largest unit.
std::string human_bytes(std::size_t bytes) {
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  static constexpr const char* units[] = {"KiB", "MiB", "GiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  // Moves up a unit from 1023.995 on, which would print as "1024.00".
  while (unit + 1 < std::size(units) && value >= 1023.995) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f %s", value, units[unit]);
  return buf;
}

// -- constructors, destructors, and assignment operators ----------------------

CachingDeviceAllocator::CachingDeviceAllocator(std::string device,
                                               std::unique_ptr<RawDeviceMemory> raw,
                                               std::size_t limit_bytes)
  : device_(std::move(device)), raw_(std::move(raw)), limit_bytes_(limit_bytes) {
  if (raw_ == nullptr)
    fail(Errc::invalid_argument,
         "the CachingDeviceAllocator of " + device_ + " needs raw device memory, got none");
}

CachingDeviceAllocator::~CachingDeviceAllocator() {
  // No one uses the blocks any more (the allocator outlives every block it
  // handed out), so the ones in use go back as well.
  release_cached_locked();
  for (const auto& [ptr, bucket] : in_use_)
    raw_->deallocate(ptr, bucket);
}

// -- buckets -------------------------------------------------------------------

std::size_t CachingDeviceAllocator::bucket_size(std::size_t bytes) noexcept {
  if (bytes <= min_bucket)
    return min_bucket;
  // A quarter of the power of two below, so four buckets per power of two;
  // never below 512, so every bucket is a multiple of 512 (the quarter is a
  // power of two as well, hence a multiple of 512 once it reaches it).
  const std::size_t step = std::max(std::bit_floor(bytes) / 4, min_bucket);
  const std::size_t rest = bytes % step;
  if (rest == 0)
    return bytes;
  const std::size_t pad = step - rest;
  if (bytes > std::numeric_limits<std::size_t>::max() - pad)
    return std::numeric_limits<std::size_t>::max();
  return bytes + pad;
}

// -- allocation ----------------------------------------------------------------

void CachingDeviceAllocator::set_release_barrier(std::function<void()> barrier) {
  std::lock_guard<std::mutex> guard{mutex_};
  release_barrier_ = std::move(barrier);
}

void* CachingDeviceAllocator::allocate(std::size_t bytes) {
  const std::size_t bucket = bucket_size(bytes);
  std::function<void()> barrier;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!release_barrier_)
      return allocate_locked(bytes, bucket, true);
    if (void* ptr = allocate_locked(bytes, bucket, false))
      return ptr;
    barrier = release_barrier_;
  }
  // Cached blocks must go back to the device: first the work that may still
  // name them must be where the driver's free waits for it.
  barrier();
  std::lock_guard<std::mutex> guard{mutex_};
  return allocate_locked(bytes, bucket, true);
}

void* CachingDeviceAllocator::allocate_locked(std::size_t bytes, std::size_t bucket, bool may_release) {

  // A cached block of the same bucket.
  if (auto it = free_.find(bucket); it != free_.end()) {
    void* ptr = it->second.back();
    in_use_.emplace(ptr, bucket); // the only step that can throw: nothing changed before it
    it->second.pop_back();
    if (it->second.empty())
      free_.erase(it);
    stats_.cached_bytes -= bucket;
    --stats_.cached_blocks;
    stats_.in_use_bytes += bucket;
    ++stats_.in_use_blocks;
    stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
    ++stats_.allocations;
    ++stats_.cache_hits;
    return ptr;
  }

  // Room under the limit (in_use_bytes + cached_bytes <= limit_bytes_ always
  // holds): if the blocks in use leave enough, release cached blocks until the
  // request fits, each time the smallest bucket that covers the shortfall, or
  // the largest one when none does. If they do not, releasing the cache would
  // not help, so it stays.
  if (limit_bytes_ != 0) {
    if (bucket > limit_bytes_ - stats_.in_use_bytes)
      fail_out_of_memory(bytes, bucket, true);
    if (!may_release && bucket > limit_bytes_ - stats_.in_use_bytes - stats_.cached_bytes)
      return nullptr;
    while (bucket > limit_bytes_ - stats_.in_use_bytes - stats_.cached_bytes) {
      const std::size_t shortfall =
        bucket - (limit_bytes_ - stats_.in_use_bytes - stats_.cached_bytes);
      auto it = free_.lower_bound(shortfall);
      // The cache is not empty: in_use + bucket <= limit, so it covers the shortfall.
      if (it == free_.end())
        it = std::prev(free_.end());
      release_one(it);
    }
  }

  // A fresh block; when the device is full, once more after releasing the
  // cache (if there was any to release).
  void* ptr = raw_->allocate(bucket);
  if (ptr == nullptr && !may_release && !free_.empty())
    return nullptr;
  if (ptr == nullptr && release_cached_locked())
    ptr = raw_->allocate(bucket);
  if (ptr == nullptr)
    fail_out_of_memory(bytes, bucket, false);
  ++stats_.raw_allocations;
  try {
    in_use_.emplace(ptr, bucket);
  } catch (...) {
    raw_->deallocate(ptr, bucket);
    throw;
  }
  stats_.in_use_bytes += bucket;
  ++stats_.in_use_blocks;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
  ++stats_.allocations;
  return ptr;
}

void CachingDeviceAllocator::deallocate(void* ptr) noexcept {
  if (ptr == nullptr)
    return;
  std::lock_guard<std::mutex> guard{mutex_};
  const auto found = in_use_.find(ptr);
  if (found == in_use_.end()) {
    std::fprintf(stderr,
                 "troupe: internal error: %s: deallocate(%p) of a block this allocator did not "
                 "hand out, or freed already; aborting before it corrupts device memory\n",
                 device_.c_str(), ptr);
    std::fflush(stderr);
    std::abort();
  }
  const std::size_t bucket = found->second;
  in_use_.erase(found);
  stats_.in_use_bytes -= bucket;
  --stats_.in_use_blocks;
  try {
    const auto list = free_.try_emplace(bucket).first;
    try {
      list->second.push_back(ptr);
    } catch (...) {
      if (list->second.empty())
        free_.erase(list);
      throw;
    }
    stats_.cached_bytes += bucket;
    ++stats_.cached_blocks;
  } catch (...) {
    // The free list could not grow: release the block instead.
    raw_->deallocate(ptr, bucket);
  }
}

void CachingDeviceAllocator::release_cached() noexcept {
  std::function<void()> barrier;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    barrier = release_barrier_;
  }
  if (barrier)
    barrier();
  std::lock_guard<std::mutex> guard{mutex_};
  release_cached_locked();
}

void CachingDeviceAllocator::release_one(
  std::map<std::size_t, std::vector<void*>>::iterator it) noexcept {
  const std::size_t bucket = it->first;
  raw_->deallocate(it->second.back(), bucket);
  it->second.pop_back();
  if (it->second.empty())
    free_.erase(it);
  stats_.cached_bytes -= bucket;
  --stats_.cached_blocks;
}

bool CachingDeviceAllocator::release_cached_locked() noexcept {
  if (free_.empty())
    return false;
  for (const auto& [bucket, blocks] : free_)
    for (void* ptr : blocks)
      raw_->deallocate(ptr, bucket);
  free_.clear();
  stats_.cached_bytes = 0;
  stats_.cached_blocks = 0;
  return true;
}

void CachingDeviceAllocator::fail_out_of_memory(std::size_t bytes, std::size_t bucket,
                                                bool over_limit) const {
  std::string msg = device_ + " is out of memory: a request of " + human_bytes(bytes) + " (bucket "
                    + human_bytes(bucket) + ") does not fit";
  msg += over_limit ? " under its limit" : " in the device's free memory";
  msg += "; " + human_bytes(stats_.in_use_bytes) + " are in use in "
         + std::to_string(stats_.in_use_blocks)
         + (stats_.in_use_blocks == 1 ? " block, " : " blocks, ") + human_bytes(stats_.cached_bytes)
         + " cached, peak " + human_bytes(stats_.peak_in_use_bytes) + ", "
         + (limit_bytes_ == 0 ? std::string{"no limit"} : "limit " + human_bytes(limit_bytes_));
  if (over_limit)
    msg += ": free tensors you no longer need, lower the batch size, or raise "
           "RuntimeOptions::gpu_memory_limit_bytes";
  else
    msg += ": free tensors you no longer need or lower the batch size (other processes on "
           "the device may hold memory as well)";
  fail(Errc::resource_exhausted, msg);
}

// -- properties ----------------------------------------------------------------

DeviceMemoryStats CachingDeviceAllocator::stats() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return stats_;
}

const std::string& CachingDeviceAllocator::device() const noexcept {
  return device_;
}

std::size_t CachingDeviceAllocator::limit_bytes() const noexcept {
  return limit_bytes_;
}

} // namespace troupe::internal

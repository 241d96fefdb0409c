#include <troupe/core/host_allocator.hpp>

#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include <troupe/core/config.hpp>

namespace troupe::internal {

namespace {

constexpr std::size_t alignment = 64;
constexpr std::size_t min_cached_bytes = 64 * 1024;

/// The size actually requested from the system for `bytes`. Small blocks round
/// up to the alignment (at least one line, so a zero-size request still gets a
/// unique pointer); cached blocks round up to a quarter of their power of two,
/// which wastes at most 25% but lets nearby sizes (a ragged last batch) reuse
/// one block.
std::size_t size_class(std::size_t bytes) noexcept {
  if (bytes < min_cached_bytes)
    return bytes == 0 ? alignment : (bytes + alignment - 1) / alignment * alignment;
  const std::size_t step = std::bit_floor(bytes) / 4;
  return (bytes + step - 1) / step * step;
}

/// Free blocks by size class. Holds at most knobs().host_cache_bytes.
class BlockCache {
public:
  /// A cached block of exactly `size` bytes, or nullptr.
  void* take(std::size_t size) {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty())
      return nullptr;
    void* ptr = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= size;
    return ptr;
  }

  /// Keeps `ptr` for reuse; false when that would exceed the cache limit.
  bool put(void* ptr, std::size_t size) {
    std::lock_guard<std::mutex> guard{mutex_};
    if (cached_bytes_ + size > limit_)
      return false;
    free_[size].push_back(ptr);
    cached_bytes_ += size;
    return true;
  }

  std::size_t cached_bytes() noexcept {
    std::lock_guard<std::mutex> guard{mutex_};
    return cached_bytes_;
  }

private:
  std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  std::size_t cached_bytes_ = 0;
  std::size_t limit_ = knobs().host_cache_bytes;
};

BlockCache& cache() {
  // Never destroyed: tensors held in static storage may release their memory
  // after this translation unit's statics are gone. The cached blocks are the
  // process's memory until exit either way.
  static BlockCache* instance = new BlockCache;
  return *instance;
}

} // namespace

void* allocate_host(std::size_t bytes) {
  const std::size_t size = size_class(bytes);
  if (size >= min_cached_bytes) {
    if (void* ptr = cache().take(size))
      return ptr;
  }
  void* ptr = std::aligned_alloc(alignment, size);
  if (ptr == nullptr)
    throw std::bad_alloc{};
  return ptr;
}

void deallocate_host(void* ptr, std::size_t bytes) noexcept {
  if (ptr == nullptr)
    return;
  const std::size_t size = size_class(bytes);
  if (size >= min_cached_bytes) {
    try {
      if (cache().put(ptr, size))
        return;
    } catch (...) {
      // The free list could not grow: release the block instead.
    }
  }
  std::free(ptr);
}

std::size_t host_cache_bytes() noexcept {
  return cache().cached_bytes();
}

} // namespace troupe::internal

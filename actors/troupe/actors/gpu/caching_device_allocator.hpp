#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace troupe::internal {

/// Raw memory of one device that a CachingDeviceAllocator carves up
/// (cudaMalloc/cudaFree for a GPU, cudaHostAlloc for pinned host staging).
/// The allocator serializes its calls, so an implementation need not be
/// thread-safe itself.
class RawDeviceMemory {
public:
  virtual ~RawDeviceMemory() = default;

  /// A block of `bytes`, or nullptr when the device is out of memory; throws
  /// Error for any other failure.
  virtual void* allocate(std::size_t bytes) = 0;

  /// Returns a block of `bytes` that allocate(bytes) gave.
  virtual void deallocate(void* ptr, std::size_t bytes) noexcept = 0;
};

/// What a CachingDeviceAllocator holds, for errors, tests and benchmarks.
struct DeviceMemoryStats {
  std::size_t in_use_bytes = 0;      ///< bytes of the blocks handed out now (bucket sizes)
  std::size_t cached_bytes = 0;      ///< bytes of free blocks kept for reuse
  std::size_t peak_in_use_bytes = 0; ///< high-water mark of in_use_bytes
  std::size_t in_use_blocks = 0;     ///< blocks handed out now
  std::size_t cached_blocks = 0;     ///< free blocks kept for reuse
  std::uint64_t allocations = 0;     ///< allocate() calls that succeeded
  std::uint64_t cache_hits = 0;      ///< of those, served from the cache
  std::uint64_t raw_allocations = 0; ///< calls of RawDeviceMemory::allocate that succeeded
};

/// Device memory for tensor buffers, cached by size bucket: a freed block is
/// kept and handed out again for the next request of the same bucket, so a
/// training loop does not call cudaMalloc/cudaFree (which synchronize the
/// device) on every step. Thread-safe: one mutex guards every member, and the
/// calls of the RawDeviceMemory happen under it.
///
/// The allocator must outlive every block it handed out: its destructor
/// returns the blocks still in use to the raw memory as well (tensor buffers
/// hold a shared_ptr to their allocator to guarantee that).
/// `bytes` for people: "0 B", "512 B", "1.50 KiB", "6.00 GiB" (two decimals
/// from 1 KiB on), as the allocator's errors write them.
[[nodiscard]] std::string human_bytes(std::size_t bytes);

class CachingDeviceAllocator {
public:
  // -- constructors, destructors, and assignment operators --------------------

  /// `device` names the device in errors ("GPU:0"); `limit_bytes` caps
  /// in_use_bytes + cached_bytes (0: no cap besides what `raw` gives).
  /// Throws Error(Errc::invalid_argument) when `raw` is null.
  CachingDeviceAllocator(std::string device, std::unique_ptr<RawDeviceMemory> raw,
                         std::size_t limit_bytes = 0);

  /// Returns every block, cached or still in use, to the raw memory.
  ~CachingDeviceAllocator();

  CachingDeviceAllocator(const CachingDeviceAllocator&) = delete;
  CachingDeviceAllocator& operator=(const CachingDeviceAllocator&) = delete;

  // -- buckets ---------------------------------------------------------------

  /// The bucket size a request of `bytes` occupies. Requests up to 512 bytes
  /// (0 included) take 512; larger ones round up to the next multiple of
  /// max(2^k / 4, 512), where 2^k <= bytes < 2^(k+1), i.e. to the next size
  /// of the form 2^k * {1, 1.25, 1.5, 1.75} that is also a multiple of 512.
  /// Monotonic in `bytes`, and every bucket is a multiple of 512. Waste
  /// bound: for bytes >= 1, bucket_size(bytes) - bytes < max(bytes / 4, 512),
  /// so requests of 2 KiB and more waste less than 25%, smaller ones less
  /// than 512 bytes. Requests whose bucket would overflow std::size_t (above
  /// 1.75 * 2^63 on 64-bit) get SIZE_MAX, which no device can give.
  [[nodiscard]] static std::size_t bucket_size(std::size_t bytes) noexcept;

  // -- allocation ------------------------------------------------------------

  /// A block of at least `bytes` (0 gives a valid minimal block). Thread-safe.
  /// Takes a cached block of the same bucket if there is one; otherwise
  /// releases cached blocks of other buckets as far as the limit requires and
  /// asks the raw memory, which, when out of memory, is asked once more after
  /// releasing the whole cache (if anything was cached). Throws
  /// Error(Errc::resource_exhausted) naming the device, the request and what
  /// is held when the block does not fit; when the blocks in use alone leave
  /// no room under the limit it throws at once and keeps the cache. An
  /// exception of the raw memory propagates unchanged, the allocator intact.
  [[nodiscard]] void* allocate(std::size_t bytes);

  /// Called, without the allocator's lock, before cached blocks go back to
  /// the raw memory (by allocate() or release_cached()). A freed block may
  /// still be named by work queued for its device (a kernel sent to a device
  /// actor and not yet on the stream): the device's barrier returns once that
  /// work is on the stream, where the driver's free waits for it. Must not
  /// throw. Set it before the allocator is shared.
  void set_release_barrier(std::function<void()> barrier);

  /// Returns a block from allocate() to the cache. Thread-safe. nullptr is
  /// ignored. A pointer this allocator did not hand out (or a block freed
  /// twice) is a bug that would corrupt memory: it prints a message on stderr
  /// and aborts the process, in every build.
  void deallocate(void* ptr) noexcept;

  /// Returns every cached (free) block to the raw memory (like
  /// torch.cuda.empty_cache()), after the release barrier. Blocks in use
  /// stay where they are.
  void release_cached() noexcept;

  // -- properties ------------------------------------------------------------

  /// A snapshot of what the allocator holds and has done.
  [[nodiscard]] DeviceMemoryStats stats() const;

  /// The device this allocator serves, as named in errors ("GPU:0").
  [[nodiscard]] const std::string& device() const noexcept;

  /// The cap on in_use_bytes + cached_bytes; 0 when there is none.
  [[nodiscard]] std::size_t limit_bytes() const noexcept;

private:
  /// Returns the last cached block of the free list at `it` to the raw memory,
  /// and drops the list when that empties it. Requires the lock.
  void release_one(std::map<std::size_t, std::vector<void*>>::iterator it) noexcept;

  /// release_cached() with the lock held; true when it released anything.
  bool release_cached_locked() noexcept;

  /// allocate() with the lock held. Without `may_release`, it returns null
  /// where it would have to return cached blocks to the raw memory first.
  [[nodiscard]] void* allocate_locked(std::size_t bytes, std::size_t bucket, bool may_release);

  /// Throws Error(Errc::resource_exhausted) for a request of `bytes` in
  /// `bucket`; `over_limit` tells whether the limit or the device refused it.
  [[noreturn]] void fail_out_of_memory(std::size_t bytes, std::size_t bucket,
                                       bool over_limit) const;

  const std::string device_;
  const std::unique_ptr<RawDeviceMemory> raw_;
  const std::size_t limit_bytes_;
  std::function<void()> release_barrier_;

  mutable std::mutex mutex_;
  /// Blocks handed out, with their bucket sizes.
  std::unordered_map<void*, std::size_t> in_use_;
  /// Free blocks by bucket size; no empty lists (ordered, so that making room
  /// under the limit can pick the smallest bucket that suffices).
  std::map<std::size_t, std::vector<void*>> free_;
  DeviceMemoryStats stats_;
};

} // namespace troupe::internal

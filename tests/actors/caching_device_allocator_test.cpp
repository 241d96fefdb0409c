#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <troupe/actors/gpu/caching_device_allocator.hpp>
#include <troupe/core/errors.hpp>

using troupe::Errc;
using troupe::Error;
using troupe::internal::CachingDeviceAllocator;
using troupe::internal::DeviceMemoryStats;
using troupe::internal::RawDeviceMemory;

namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

/// What a FakeRawMemory did; shared with the test, so that it can be read
/// after the allocator (which owns the fake) is gone.
struct FakeLedger {
  std::mutex mutex;
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
  std::size_t outstanding_bytes = 0;
  std::map<void*, std::size_t> live;    ///< blocks handed out, with their sizes
  std::uint64_t allocate_calls = 0;     ///< every call, failed ones included
  std::uint64_t failed_allocations = 0; ///< calls that returned nullptr
  std::uint64_t deallocate_calls = 0;
  std::vector<std::size_t> deallocated_sizes;
  std::uint64_t mismatches = 0; ///< deallocations of unknown blocks or with another size
  bool throw_next = false;      ///< the next allocate throws Error(internal)
};

/// Raw device memory from std::malloc, out of memory past ledger->capacity
/// bytes, that checks every deallocation against the allocations.
class FakeRawMemory : public RawDeviceMemory {
public:
  explicit FakeRawMemory(std::shared_ptr<FakeLedger> ledger) : ledger_(std::move(ledger)) {}

  void* allocate(std::size_t bytes) override {
    std::lock_guard<std::mutex> guard{ledger_->mutex};
    ++ledger_->allocate_calls;
    if (ledger_->throw_next) {
      ledger_->throw_next = false;
      troupe::fail(Errc::internal, "the fake device broke");
    }
    if (bytes > ledger_->capacity - ledger_->outstanding_bytes) {
      ++ledger_->failed_allocations;
      return nullptr;
    }
    void* ptr = std::malloc(bytes);
    if (ptr == nullptr) {
      ++ledger_->failed_allocations;
      return nullptr;
    }
    ledger_->outstanding_bytes += bytes;
    ledger_->live.emplace(ptr, bytes);
    return ptr;
  }

  void deallocate(void* ptr, std::size_t bytes) noexcept override {
    std::lock_guard<std::mutex> guard{ledger_->mutex};
    ++ledger_->deallocate_calls;
    ledger_->deallocated_sizes.push_back(bytes);
    const auto it = ledger_->live.find(ptr);
    if (it == ledger_->live.end() || it->second != bytes) {
      ++ledger_->mismatches;
      return; // not ours, or the size is wrong: leak rather than corrupt the heap
    }
    ledger_->outstanding_bytes -= bytes;
    ledger_->live.erase(it);
    std::free(ptr);
  }

private:
  std::shared_ptr<FakeLedger> ledger_;
};

/// A ledger with `capacity` bytes and an allocator of "GPU:0" over it.
struct Fixture {
  explicit Fixture(std::size_t limit_bytes = 0,
                   std::size_t capacity = std::numeric_limits<std::size_t>::max())
    : ledger(std::make_shared<FakeLedger>()) {
    ledger->capacity = capacity;
    alloc = std::make_unique<CachingDeviceAllocator>(
      "GPU:0", std::make_unique<FakeRawMemory>(ledger), limit_bytes);
  }

  std::shared_ptr<FakeLedger> ledger;
  std::unique_ptr<CachingDeviceAllocator> alloc;
};

/// The what() of the Error that `fn` throws, after checking its code.
template <class Fn>
std::string resource_exhausted_message(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    CHECK(e.code() == Errc::resource_exhausted);
    return e.what();
  }
  FAIL("no Error was thrown");
  return {};
}

} // namespace

// -- buckets ------------------------------------------------------------------

TEST_CASE("bucket sizes are 512 bytes at least and four classes per power of two above", "[core]") {
  struct Case {
    std::size_t bytes;
    std::size_t bucket;
  };
  const Case cases[] = {
    {0, 512},
    {1, 512},
    {512, 512},
    {513, 1024},
    {1000, 1024},
    {1024, 1024},
    {1025, 1536},
    {1280, 1536},
    {1281, 1536},
    {1536, 1536},
    {1537, 2048},
    {2048, 2048},
    {2049, 2560},
    {3 * MiB, 3 * MiB},
    {3 * MiB + 1, 3 * MiB + MiB / 2},
    {4 * MiB + 1, 5 * MiB},
  };
  for (const auto& c : cases) {
    CAPTURE(c.bytes);
    CHECK(CachingDeviceAllocator::bucket_size(c.bytes) == c.bucket);
  }
  // From 2 KiB on, the buckets between 2^k and 2^(k+1) are 2^k * {1, 1.25, 1.5, 1.75}.
  for (std::size_t k = 11; k < 40; ++k) {
    const std::size_t p = std::size_t{1} << k;
    CAPTURE(k);
    CHECK(CachingDeviceAllocator::bucket_size(p) == p);
    CHECK(CachingDeviceAllocator::bucket_size(p + 1) == p + p / 4);
    CHECK(CachingDeviceAllocator::bucket_size(p + p / 4 + 1) == p + p / 2);
    CHECK(CachingDeviceAllocator::bucket_size(p + p / 2 + 1) == p + 3 * p / 4);
    CHECK(CachingDeviceAllocator::bucket_size(p + 3 * p / 4 + 1) == 2 * p);
  }
}

TEST_CASE(
  "bucket sizes are monotonic multiples of 512 that waste less than a quarter from 2 KiB on",
  "[core]") {
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 64 * KiB; ++n)
    sizes.push_back(n);
  // A geometric sweep beyond, with neighbours of every point.
  for (double n = 64.0 * KiB; n < 1e15; n *= 1.0137) {
    const auto base = static_cast<std::size_t>(n);
    for (std::size_t d = 0; d < 3; ++d)
      sizes.push_back(base + d);
  }
  std::size_t previous = 0;
  for (const std::size_t n : sizes) {
    const std::size_t bucket = CachingDeviceAllocator::bucket_size(n);
    if (bucket < previous || bucket < n || bucket % 512 != 0) {
      CAPTURE(n, bucket, previous);
      FAIL("bucket_size is not monotonic, too small or not a multiple of 512");
    }
    // The documented bound: bucket - n < max(n / 4, 512), i.e. under 25% from 2 KiB on.
    const std::size_t waste = bucket - n;
    if (n >= 1 && !(waste < 512 || 4 * waste < n)) {
      CAPTURE(n, bucket);
      FAIL("bucket_size wastes too much");
    }
    if (n >= 2048 && !(4 * waste < n)) {
      CAPTURE(n, bucket);
      FAIL("bucket_size wastes 25% or more above 2 KiB");
    }
    previous = bucket;
  }
}

TEST_CASE("bucket sizes saturate instead of overflowing for huge requests", "[core]") {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  constexpr std::size_t top = std::size_t{1} << (std::numeric_limits<std::size_t>::digits - 1);
  CHECK(CachingDeviceAllocator::bucket_size(top) == top);
  CHECK(CachingDeviceAllocator::bucket_size(top + 1) == top + top / 4);
  CHECK(CachingDeviceAllocator::bucket_size(top + 3 * (top / 4)) == top + 3 * (top / 4));
  CHECK(CachingDeviceAllocator::bucket_size(top + 3 * (top / 4) + 1) == max);
  CHECK(CachingDeviceAllocator::bucket_size(max) == max);
}

// -- allocation -----------------------------------------------------------------

TEST_CASE("a freed block is handed out again for a request of the same bucket", "[core]") {
  Fixture f;
  void* a = f.alloc->allocate(1000);
  REQUIRE(a != nullptr);
  std::memset(a, 0xab, 1000);
  f.alloc->deallocate(a);
  auto s = f.alloc->stats();
  CHECK(s.in_use_bytes == 0);
  CHECK(s.cached_bytes == 1024);
  CHECK(s.cached_blocks == 1);

  void* b = f.alloc->allocate(900); // the same 1 KiB bucket
  CHECK(b == a);
  s = f.alloc->stats();
  CHECK(s.allocations == 2);
  CHECK(s.cache_hits == 1);
  CHECK(s.raw_allocations == 1);
  CHECK(s.in_use_bytes == 1024);
  CHECK(s.in_use_blocks == 1);
  CHECK(s.cached_bytes == 0);
  CHECK(s.cached_blocks == 0);

  // Another bucket is a fresh block, while the cached one stays.
  void* c = f.alloc->allocate(2000);
  CHECK(c != b);
  f.alloc->deallocate(b);
  void* d = f.alloc->allocate(1536);
  CHECK(d != b);
  s = f.alloc->stats();
  CHECK(s.allocations == 4);
  CHECK(s.cache_hits == 1);
  CHECK(s.raw_allocations == 3);
  CHECK(s.cached_bytes == 1024);
  CHECK(s.in_use_bytes == 2048 + 1536);
  CHECK(f.ledger->allocate_calls == 3);
  f.alloc->deallocate(c);
  f.alloc->deallocate(d);
  f.alloc->deallocate(nullptr); // ignored, like free(nullptr)
  CHECK(f.alloc->stats().in_use_blocks == 0);
}

TEST_CASE("requests of zero bytes get distinct minimal blocks", "[core]") {
  Fixture f;
  void* a = f.alloc->allocate(0);
  void* b = f.alloc->allocate(0);
  CHECK(a != nullptr);
  CHECK(b != nullptr);
  CHECK(a != b);
  CHECK(f.alloc->stats().in_use_bytes == 1024);
  CHECK(f.ledger->outstanding_bytes == 1024);
  f.alloc->deallocate(a);
  f.alloc->deallocate(b);
}

TEST_CASE("peak_in_use_bytes keeps the high-water mark of the bytes in use", "[core]") {
  Fixture f;
  void* a = f.alloc->allocate(1024);
  void* b = f.alloc->allocate(1024);
  void* c = f.alloc->allocate(1024);
  CHECK(f.alloc->stats().peak_in_use_bytes == 3072);
  f.alloc->deallocate(a);
  f.alloc->deallocate(b);
  void* d = f.alloc->allocate(100);
  auto s = f.alloc->stats();
  CHECK(s.in_use_bytes == 1024 + 512);
  CHECK(s.peak_in_use_bytes == 3072);
  void* e = f.alloc->allocate(4096);
  s = f.alloc->stats();
  CHECK(s.in_use_bytes == 1024 + 512 + 4096);
  CHECK(s.peak_in_use_bytes == 1024 + 512 + 4096);
  for (void* p : {c, d, e})
    f.alloc->deallocate(p);
  s = f.alloc->stats();
  CHECK(s.in_use_bytes == 0);
  CHECK(s.peak_in_use_bytes == 1024 + 512 + 4096);
}

TEST_CASE("the limit releases cached blocks of other buckets to make room", "[core]") {
  Fixture f{8 * KiB};
  CHECK(f.alloc->limit_bytes() == 8 * KiB);
  CHECK(f.alloc->device() == "GPU:0");
  void* a = f.alloc->allocate(4096);
  void* b = f.alloc->allocate(2048);
  f.alloc->deallocate(a);
  f.alloc->deallocate(b);
  REQUIRE(f.alloc->stats().cached_bytes == 6 * KiB);

  // 6 KiB more would hold 12 KiB: the 4 KiB block (the smallest that covers
  // the 4 KiB shortfall) goes back, the 2 KiB one stays.
  void* c = f.alloc->allocate(6 * KiB);
  auto s = f.alloc->stats();
  CHECK(s.in_use_bytes == 6 * KiB);
  CHECK(s.cached_bytes == 2 * KiB);
  CHECK(s.cached_blocks == 1);
  CHECK(s.raw_allocations == 3);
  CHECK(f.ledger->deallocate_calls == 1);
  CHECK(f.ledger->deallocated_sizes == std::vector<std::size_t>{4096});
  CHECK(f.ledger->outstanding_bytes == 8 * KiB);

  // The cached 2 KiB block still serves its own bucket.
  void* d = f.alloc->allocate(2000);
  CHECK(d == b);
  CHECK(f.alloc->stats().cache_hits == 1);
  f.alloc->deallocate(c);
  f.alloc->deallocate(d);
}

TEST_CASE("several cached blocks go back when no single one covers the shortfall", "[core]") {
  Fixture f{8 * KiB};
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i)
    blocks.push_back(f.alloc->allocate(KiB));
  for (void* p : blocks)
    f.alloc->deallocate(p);
  REQUIRE(f.alloc->stats().cached_blocks == 8);
  void* big = f.alloc->allocate(5 * KiB);
  const auto s = f.alloc->stats();
  CHECK(s.in_use_bytes == 5 * KiB);
  CHECK(s.cached_bytes == 3 * KiB);
  CHECK(s.cached_blocks == 3);
  CHECK(s.in_use_bytes + s.cached_bytes <= 8 * KiB);
  CHECK(f.ledger->deallocate_calls == 5);
  f.alloc->deallocate(big);
}

TEST_CASE("a request beyond the limit throws resource_exhausted naming the device, the request "
          "and the bytes in use",
          "[core]") {
  Fixture f{8 * KiB};
  void* a = f.alloc->allocate(6 * KiB);
  void* b = f.alloc->allocate(2 * KiB);
  f.alloc->deallocate(b);
  const auto before = f.alloc->stats();

  const std::string msg = resource_exhausted_message([&] { (void)f.alloc->allocate(3000); });
  CAPTURE(msg);
  CHECK_THAT(msg, Catch::Contains("GPU:0 is out of memory"));
  CHECK_THAT(msg, Catch::Contains("a request of 2.93 KiB (bucket 3.00 KiB)"));
  CHECK_THAT(msg, Catch::Contains("6.00 KiB are in use in 1 block,"));
  CHECK_THAT(msg, Catch::Contains("2.00 KiB cached"));
  CHECK_THAT(msg, Catch::Contains("peak 8.00 KiB"));
  CHECK_THAT(msg, Catch::Contains("limit 8.00 KiB"));
  CHECK_THAT(msg, Catch::Contains("gpu_memory_limit_bytes"));

  // Releasing the cache could not have helped, so it stays; nothing changed.
  const auto after = f.alloc->stats();
  CHECK(after.cached_bytes == before.cached_bytes);
  CHECK(after.in_use_bytes == before.in_use_bytes);
  CHECK(after.allocations == before.allocations);
  CHECK(f.ledger->allocate_calls == 2);

  // A request larger than the whole limit fails on an empty allocator too.
  f.alloc->deallocate(a);
  f.alloc->release_cached();
  const std::string huge =
    resource_exhausted_message([&] { (void)f.alloc->allocate(3 * MiB / 2); });
  CHECK_THAT(huge, Catch::Contains("a request of 1.50 MiB (bucket 1.50 MiB)"));
  CHECK_THAT(huge, Catch::Contains("0 B are in use in 0 blocks, 0 B cached"));
  CHECK(f.alloc->stats().allocations == 2);
}

TEST_CASE("a device out of memory gets its cache back and the request is retried once", "[core]") {
  Fixture f{0, 8 * KiB};
  void* a = f.alloc->allocate(4 * KiB);
  void* b = f.alloc->allocate(4 * KiB);
  f.alloc->deallocate(a);
  f.alloc->deallocate(b);
  REQUIRE(f.ledger->outstanding_bytes == 8 * KiB);

  void* c = f.alloc->allocate(8 * KiB);
  REQUIRE(c != nullptr);
  auto s = f.alloc->stats();
  CHECK(s.cached_bytes == 0);
  CHECK(s.cached_blocks == 0);
  CHECK(s.in_use_bytes == 8 * KiB);
  CHECK(s.raw_allocations == 3);
  CHECK(s.cache_hits == 0);
  CHECK(f.ledger->failed_allocations == 1);
  CHECK(f.ledger->allocate_calls == 4);

  // With nothing cached, there is nothing to retry with.
  const std::string msg = resource_exhausted_message([&] { (void)f.alloc->allocate(1); });
  CAPTURE(msg);
  CHECK_THAT(msg, Catch::Contains("GPU:0 is out of memory: a request of 1 B (bucket 512 B)"));
  CHECK_THAT(msg, Catch::Contains("8.00 KiB are in use in 1 block, 0 B cached"));
  CHECK_THAT(msg, Catch::Contains("no limit"));
  CHECK(f.ledger->allocate_calls == 5);
  s = f.alloc->stats();
  CHECK(s.allocations == 3);
  CHECK(s.in_use_bytes == 8 * KiB);
  f.alloc->deallocate(c);
}

TEST_CASE("a device out of memory even after the retry throws resource_exhausted", "[core]") {
  Fixture f{0, 6 * KiB};
  void* a = f.alloc->allocate(4 * KiB);
  void* b = f.alloc->allocate(KiB);
  f.alloc->deallocate(b);
  const std::string msg = resource_exhausted_message([&] { (void)f.alloc->allocate(4 * KiB); });
  CHECK_THAT(msg, Catch::Contains("4.00 KiB are in use in 1 block"));
  // The cache went back for the retry.
  const auto s = f.alloc->stats();
  CHECK(s.cached_bytes == 0);
  CHECK(f.ledger->failed_allocations == 2);
  CHECK(f.ledger->outstanding_bytes == 4 * KiB);
  f.alloc->deallocate(a);
}

TEST_CASE("other failures of the raw memory propagate and leave the allocator consistent",
          "[core]") {
  Fixture f;
  void* a = f.alloc->allocate(KiB);
  f.ledger->throw_next = true;
  try {
    (void)f.alloc->allocate(2 * KiB);
    FAIL("allocate did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::internal);
    CHECK(std::string(e.what()) == "the fake device broke");
  }
  auto s = f.alloc->stats();
  CHECK(s.allocations == 1);
  CHECK(s.raw_allocations == 1);
  CHECK(s.in_use_bytes == KiB);
  CHECK(s.in_use_blocks == 1);
  void* b = f.alloc->allocate(2 * KiB);
  CHECK(b != nullptr);
  f.alloc->deallocate(a);
  f.alloc->deallocate(b);
  s = f.alloc->stats();
  CHECK(s.in_use_bytes == 0);
  CHECK(s.cached_bytes == 3 * KiB);
}

TEST_CASE("release_cached returns the free blocks to the raw memory", "[core]") {
  Fixture f;
  void* kept = f.alloc->allocate(100);
  std::vector<void*> blocks;
  for (std::size_t bytes : {KiB, 2 * KiB, 2 * KiB, 5 * KiB})
    blocks.push_back(f.alloc->allocate(bytes));
  for (void* p : blocks)
    f.alloc->deallocate(p);
  REQUIRE(f.alloc->stats().cached_blocks == 4);
  REQUIRE(f.ledger->outstanding_bytes == 512 + 10 * KiB);

  f.alloc->release_cached();
  const auto s = f.alloc->stats();
  CHECK(s.cached_bytes == 0);
  CHECK(s.cached_blocks == 0);
  CHECK(s.in_use_bytes == 512);
  CHECK(f.ledger->outstanding_bytes == 512);
  CHECK(f.ledger->deallocate_calls == 4);
  CHECK(f.ledger->mismatches == 0);
  f.alloc->release_cached(); // nothing left: a no-op
  CHECK(f.ledger->deallocate_calls == 4);
  f.alloc->deallocate(kept);
}

TEST_CASE("the destructor returns cached blocks and blocks still in use", "[core]") {
  Fixture f;
  std::vector<void*> blocks;
  for (std::size_t bytes : {std::size_t{0}, KiB, 3 * KiB, 3 * KiB, MiB + 1})
    blocks.push_back(f.alloc->allocate(bytes));
  f.alloc->deallocate(blocks[1]);
  f.alloc->deallocate(blocks[2]);
  REQUIRE(f.ledger->outstanding_bytes > 0);
  f.alloc.reset();
  CHECK(f.ledger->outstanding_bytes == 0);
  CHECK(f.ledger->live.empty());
  CHECK(f.ledger->deallocate_calls == 5);
  CHECK(f.ledger->mismatches == 0);
}

TEST_CASE("a null raw memory is rejected", "[core]") {
  try {
    CachingDeviceAllocator alloc{"GPU:1", nullptr};
    FAIL("the constructor did not throw");
  } catch (const Error& e) {
    CHECK(e.code() == Errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("GPU:1"));
  }
}

TEST_CASE("4 threads allocating and freeing concurrently leave the stats consistent", "[core]") {
  // The limit is above what the threads ever hold at once (4 x 4 blocks of at
  // most 64 KiB), but low enough that the cache gets trimmed to make room.
  constexpr std::size_t limit = 2 * MiB;
  Fixture f{limit};
  constexpr int threads = 4;
  constexpr int iterations = 3000;
  std::vector<std::thread> workers;
  std::vector<int> corrupted(threads, 0);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::uint32_t seed = 12345u + static_cast<std::uint32_t>(t) * 7919u;
      auto next = [&seed] {
        seed = seed * 1664525u + 1013904223u;
        return seed >> 8;
      };
      std::vector<std::pair<unsigned char*, std::size_t>> held;
      for (int i = 0; i < iterations; ++i) {
        if (held.size() < 4 && (held.empty() || next() % 2 == 0)) {
          const std::size_t bytes = 1 + next() % (64 * KiB);
          auto* p = static_cast<unsigned char*>(f.alloc->allocate(bytes));
          // No other thread owns this block now: stamp it and check on release.
          std::memset(p, t + 1, bytes);
          held.emplace_back(p, bytes);
        } else {
          const std::size_t k = next() % held.size();
          auto [p, bytes] = held[k];
          if (p[0] != t + 1 || p[bytes - 1] != t + 1)
            ++corrupted[t];
          f.alloc->deallocate(p);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
      for (auto [p, bytes] : held)
        f.alloc->deallocate(p);
    });
  }
  for (auto& w : workers)
    w.join();

  CHECK(corrupted == std::vector<int>(threads, 0));
  const DeviceMemoryStats s = f.alloc->stats();
  CHECK(s.in_use_bytes == 0);
  CHECK(s.in_use_blocks == 0);
  CHECK(s.allocations > 0);
  CHECK(s.cache_hits > 0);
  CHECK(s.cache_hits + s.raw_allocations == s.allocations);
  CHECK(s.peak_in_use_bytes > 0);
  CHECK(s.peak_in_use_bytes <= limit);
  CHECK(s.cached_bytes <= limit);
  CHECK(s.cached_bytes == f.ledger->outstanding_bytes);
  CHECK(s.cached_blocks == f.ledger->live.size());
  CHECK(f.ledger->allocate_calls == s.raw_allocations);
  CHECK(f.ledger->mismatches == 0);
  f.alloc.reset();
  CHECK(f.ledger->outstanding_bytes == 0);
  CHECK(f.ledger->mismatches == 0);
}

#if defined(__unix__) || defined(__APPLE__)

namespace {

/// Runs `fn` in a forked child; what the child wrote on stderr if it died of
/// SIGABRT, nullopt if it exited otherwise.
template <class Fn>
std::optional<std::string> stderr_of_abort(Fn fn) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    std::signal(SIGABRT, SIG_DFL);
    fn();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof(buf))) != 0;) {
    if (n < 0)
      break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
    return text;
  return std::nullopt;
}

} // namespace

TEST_CASE("deallocating a block twice or a foreign pointer aborts with a message", "[core]") {
  Fixture f;
  void* a = f.alloc->allocate(KiB);
  f.alloc->deallocate(a);
  const auto twice = stderr_of_abort([&] { f.alloc->deallocate(a); });
  REQUIRE(twice.has_value());
  CHECK_THAT(*twice, Catch::Contains("GPU:0"));
  CHECK_THAT(*twice, Catch::Contains("did not hand out"));

  int local = 0;
  const auto foreign = stderr_of_abort([&] { f.alloc->deallocate(&local); });
  REQUIRE(foreign.has_value());
  CHECK_THAT(*foreign, Catch::Contains("GPU:0"));
}

#endif

TEST_CASE("the release barrier runs before cached blocks go back, and only then", "[core]") {
  // Under the limit and on a full device alike: work still queued for the
  // device may name a cached block, so the barrier lets it reach the stream.
  for (const bool by_limit : {true, false}) {
    Fixture f(by_limit ? 4 * KiB : 0, by_limit ? std::numeric_limits<std::size_t>::max() : 4 * KiB);
    int barriers = 0;
    std::size_t deallocations_seen_by_barrier = 0;
    f.alloc->set_release_barrier([&] {
      ++barriers;
      deallocations_seen_by_barrier = f.ledger->deallocate_calls;
    });
    void* a = f.alloc->allocate(2 * KiB);
    f.alloc->deallocate(a);
    void* b = f.alloc->allocate(2 * KiB);  // a cache hit: no barrier
    void* c = f.alloc->allocate(KiB);      // fits beside it: no barrier
    CHECK(barriers == 0);
    f.alloc->deallocate(b);
    void* d = f.alloc->allocate(3 * KiB);  // needs b's block returned first
    CHECK(barriers == 1);
    CHECK(deallocations_seen_by_barrier == 0);  // the barrier ran before the release
    CHECK(f.ledger->deallocate_calls == 1);
    f.alloc->deallocate(c);
    f.alloc->release_cached();
    CHECK(barriers == 2);
    f.alloc->deallocate(d);
    CHECK(f.ledger->mismatches == 0);
  }
}

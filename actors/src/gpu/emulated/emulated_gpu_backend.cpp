#include <troupe/actors/gpu/emulated/emulated_gpu_backend.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <troupe/core/errors.hpp>

namespace troupe::testing {

using internal::GpuCopyKind;

EmulatedGpuBackend::EmulatedGpuBackend(int gpus, std::size_t memory_per_gpu)
  : gpus_(gpus), memory_per_gpu_(memory_per_gpu), deliverer_([this] { deliver(); }) {
}

EmulatedGpuBackend::~EmulatedGpuBackend() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  deliverer_.join();
}

internal::GpuProperties EmulatedGpuBackend::properties(int gpu) {
  std::lock_guard<std::mutex> guard{mutex_};
  internal::GpuProperties out;
  out.name = "Emulated GPU " + std::to_string(gpu);
  out.total_memory = memory_per_gpu_;
  out.free_memory = memory_per_gpu_ - used_[gpu];
  out.compute_capability_major = 9;
  return out;
}

void* EmulatedGpuBackend::allocate_device(int gpu, std::size_t bytes) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (gpu < 0 || gpu >= gpus_)
    fail(Errc::internal, "emulated GPU " + std::to_string(gpu) + " does not exist");
  if (used_[gpu] + bytes > memory_per_gpu_)
    return nullptr;
  auto* ptr = static_cast<std::byte*>(std::malloc(bytes == 0 ? 1 : bytes));
  used_[gpu] += bytes;
  device_blocks_[ptr] = Block{gpu, bytes};
  return ptr;
}

void EmulatedGpuBackend::free_device(int gpu, void* ptr) noexcept {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = device_blocks_.find(static_cast<std::byte*>(ptr));
  if (it == device_blocks_.end() || it->second.gpu != gpu) {
    note("free_device of a block GPU " + std::to_string(gpu) + " did not allocate (or freed twice)");
    return;
  }
  used_[gpu] -= it->second.bytes;
  device_blocks_.erase(it);
  std::free(ptr);
}

void* EmulatedGpuBackend::allocate_pinned(std::size_t bytes) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto* ptr = static_cast<std::byte*>(std::malloc(bytes == 0 ? 1 : bytes));
  pinned_blocks_[ptr] = bytes;
  return ptr;
}

void EmulatedGpuBackend::free_pinned(void* ptr) noexcept {
  std::lock_guard<std::mutex> guard{mutex_};
  if (pinned_blocks_.erase(static_cast<std::byte*>(ptr)) == 0) {
    note("free_pinned of a block that is not pinned (or freed twice)");
    return;
  }
  std::free(ptr);
}

internal::GpuStream EmulatedGpuBackend::create_stream(int gpu) {
  std::lock_guard<std::mutex> guard{mutex_};
  ++streams_created_;
  ++streams_alive_;
  // Any distinct non-null handle will do; the GPU's number plus one is one.
  return reinterpret_cast<internal::GpuStream>(static_cast<std::uintptr_t>(streams_created_) << 8 | (gpu + 1));
}

void EmulatedGpuBackend::destroy_stream(int, internal::GpuStream) noexcept {
  // As cudaStreamDestroy after a synchronize: the stream's callbacks have run.
  std::unique_lock<std::mutex> lock{mutex_};
  idle_.wait(lock, [&] { return completions_.empty() && !delivering_; });
  --streams_alive_;
}

void EmulatedGpuBackend::copy_async(int gpu, internal::GpuStream, void* dst, const void* src, std::size_t bytes,
                                    GpuCopyKind kind, int src_gpu) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (std::exchange(fail_next_copy_, false))
    fail(Errc::internal, "GPU " + std::to_string(gpu) + ": cudaMemcpyAsync failed (emulated failure)");
  ++copies_[kind];
  copied_.notify_all();
  switch (kind) {
    case GpuCopyKind::host_to_device:
      if (!pinned(src, bytes) || gpu_of(dst, bytes) != gpu)
        note("a host-to-device copy needs pinned host memory and memory of GPU " + std::to_string(gpu));
      break;
    case GpuCopyKind::device_to_host:
      if (!pinned(dst, bytes) || gpu_of(src, bytes) != gpu)
        note("a device-to-host copy needs memory of GPU " + std::to_string(gpu) + " and pinned host memory");
      break;
    case GpuCopyKind::device_to_device:
      if (gpu_of(dst, bytes) != gpu || gpu_of(src, bytes) != src_gpu)
        note("a device-to-device copy names the wrong GPUs");
      break;
  }
  std::memcpy(dst, src, bytes);
}

void EmulatedGpuBackend::copy_2d_async(int gpu, internal::GpuStream, void* dst, std::size_t dst_pitch,
                                       const void* src, std::size_t src_pitch, std::size_t width, std::size_t rows) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (rows == 0 || width == 0)
    return;
  // cudaMemcpy2DAsync's rule: pitches at least the width.
  const std::size_t dst_span = (rows - 1) * dst_pitch + width;
  const std::size_t src_span = (rows - 1) * src_pitch + width;
  if (width > dst_pitch || width > src_pitch || gpu_of(dst, dst_span) != gpu || gpu_of(src, src_span) != gpu) {
    note("a 2D copy with a pitch below its width, or rows outside GPU " + std::to_string(gpu) + "'s memory");
    return;
  }
  ++copies_[GpuCopyKind::device_to_device];
  for (std::size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<std::byte*>(dst) + r * dst_pitch, static_cast<const std::byte*>(src) + r * src_pitch,
                width);
}

void EmulatedGpuBackend::zero_async(int gpu, internal::GpuStream, void* dst, std::size_t bytes) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (gpu_of(dst, bytes) != gpu)
    note("zeroing memory that is not GPU " + std::to_string(gpu) + "'s");
  std::memset(dst, 0, bytes);
}

void EmulatedGpuBackend::notify_when_done(int, internal::GpuStream, std::function<void(const std::string&)> done) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    completions_.push_back([done = std::move(done), error = stream_error_] { done(error); });
  }
  wake_.notify_all();
}

internal::GpuEvent EmulatedGpuBackend::create_event(int gpu) {
  std::lock_guard<std::mutex> guard{mutex_};
  const int id = next_event_++;
  events_[id] = Event{gpu, false};
  return reinterpret_cast<internal::GpuEvent>(static_cast<std::intptr_t>(id));
}

void EmulatedGpuBackend::destroy_event(int, internal::GpuEvent event) noexcept {
  std::lock_guard<std::mutex> guard{mutex_};
  if (events_.erase(static_cast<int>(reinterpret_cast<std::intptr_t>(event))) == 0)
    note("an event destroyed twice, or never created");
}

void EmulatedGpuBackend::record_event(int gpu, internal::GpuStream, internal::GpuEvent event) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = events_.find(static_cast<int>(reinterpret_cast<std::intptr_t>(event)));
  if (it == events_.end() || it->second.gpu != gpu)
    note("an event recorded on a GPU other than its own, or after it was destroyed");
  else
    it->second.recorded = true;
}

void EmulatedGpuBackend::wait_event(int, internal::GpuStream, internal::GpuEvent event) {
  // Work runs when it is enqueued here, so a recorded event is complete; one
  // not yet recorded is what CUDA would silently not wait for.
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = events_.find(static_cast<int>(reinterpret_cast<std::intptr_t>(event)));
  if (it == events_.end() || !it->second.recorded)
    note("a stream waits on an event that was not recorded yet (CUDA would not wait)");
}

int EmulatedGpuBackend::events_alive() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return static_cast<int>(events_.size());
}

void EmulatedGpuBackend::deliver() {
  std::unique_lock<std::mutex> lock{mutex_};
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || (!completions_.empty() && !held_); });
    if (completions_.empty())
      return;
    auto next = std::move(completions_.front());
    completions_.pop_front();
    delivering_ = true;
    lock.unlock();
    next();
    next = nullptr;
    lock.lock();
    delivering_ = false;
    idle_.notify_all();
  }
}

int EmulatedGpuBackend::gpu_of(const void* ptr, std::size_t bytes) const {
  const auto* p = static_cast<const std::byte*>(ptr);
  auto it = device_blocks_.upper_bound(p);
  if (it == device_blocks_.begin())
    return -1;
  --it;
  return p + bytes <= it->first + it->second.bytes ? it->second.gpu : -1;
}

bool EmulatedGpuBackend::pinned(const void* ptr, std::size_t bytes) const {
  const auto* p = static_cast<const std::byte*>(ptr);
  auto it = pinned_blocks_.upper_bound(p);
  if (it == pinned_blocks_.begin())
    return false;
  --it;
  return p + bytes <= it->first + it->second;
}

void EmulatedGpuBackend::note(const std::string& problem) {
  misuse_ += problem + "\n";
}

std::size_t EmulatedGpuBackend::device_bytes_held() const {
  std::lock_guard<std::mutex> guard{mutex_};
  std::size_t total = 0;
  for (const auto& [gpu, bytes] : used_)
    total += bytes;
  return total;
}

std::size_t EmulatedGpuBackend::pinned_bytes_held() const {
  std::lock_guard<std::mutex> guard{mutex_};
  std::size_t total = 0;
  for (const auto& [ptr, bytes] : pinned_blocks_)
    total += bytes;
  return total;
}

int EmulatedGpuBackend::streams_created() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return streams_created_;
}

int EmulatedGpuBackend::streams_alive() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return streams_alive_;
}

bool EmulatedGpuBackend::wait_for_copies(GpuCopyKind kind, int count, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock{mutex_};
  return copied_.wait_for(lock, timeout, [&] { return copies_[kind] >= count; });
}

int EmulatedGpuBackend::copies(GpuCopyKind kind) const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = copies_.find(kind);
  return it == copies_.end() ? 0 : it->second;
}

std::string EmulatedGpuBackend::misuse() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return misuse_;
}

void EmulatedGpuBackend::fail_next_copy() {
  std::lock_guard<std::mutex> guard{mutex_};
  fail_next_copy_ = true;
}

void EmulatedGpuBackend::hold_completions(bool held) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    held_ = held;
  }
  wake_.notify_all();
}

void EmulatedGpuBackend::fail_streams_from_now(std::string error) {
  std::lock_guard<std::mutex> guard{mutex_};
  stream_error_ = std::move(error);
}

} // namespace troupe::testing

#include <troupe/core/tensor.hpp>
#include <troupe/core/denormals.hpp>

#include <atomic>

#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <type_traits>

#include <troupe/core/device_memory.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/host_allocator.hpp>

namespace troupe {

namespace detail {

/// The bytes behind one or more Tensor handles: from the host allocator, or
/// from a device's memory (a GPU's caching allocator), which the buffer keeps
/// alive until it is freed.
class Buffer {
public:
  explicit Buffer(std::size_t size)
    : data_(static_cast<std::byte*>(internal::allocate_host(size))), size_(size) {}

  Buffer(std::size_t size, std::shared_ptr<internal::DeviceMemory> memory)
    : data_(static_cast<std::byte*>(memory->allocate(size))), size_(size), memory_(std::move(memory)) {}

  /// Memory troupe did not allocate (Tensor::from_external): `release` runs
  /// instead of a deallocation; `memory` (null on the host) serves its copies.
  Buffer(std::byte* data, std::size_t size, std::shared_ptr<internal::DeviceMemory> memory,
         std::function<void()> release)
    : data_(data), size_(size), memory_(std::move(memory)), release_(std::move(release)), external_(true) {}

  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  ~Buffer() {
    if (external_) {
      if (release_) // none: the caller frees its memory itself, after every handle
        release_();
    } else if (memory_)
      memory_->deallocate(data_);
    else
      internal::deallocate_host(data_, size_);
  }

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The device memory holding the bytes; null for host memory.
  [[nodiscard]] internal::DeviceMemory* memory() const noexcept { return memory_.get(); }
  [[nodiscard]] const std::shared_ptr<internal::DeviceMemory>& shared_memory() const noexcept { return memory_; }

private:
  std::byte* data_;
  std::size_t size_;
  std::shared_ptr<internal::DeviceMemory> memory_;
  std::function<void()> release_; ///< for external memory: what frees it (may be empty)
  bool external_ = false;         ///< troupe did not allocate the bytes: never free them itself
};

const DeviceSpec* intern_device(const DeviceSpec& spec) {
  // A deque never moves its elements, so the returned pointers stay valid;
  // it is never destroyed, so they stay valid during static destruction too.
  static std::mutex mutex;
  static auto& devices = *new std::deque<DeviceSpec>;
  std::lock_guard<std::mutex> guard{mutex};
  for (const auto& device : devices)
    if (device == spec)
      return &device;
  return &devices.emplace_back(spec);
}

} // namespace detail

namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

/// Float to integer without undefined behaviour: NaN becomes 0 and values
/// beyond the range saturate, for uint8 as for the signed types (-3.0 -> 0,
/// 300.0 -> 255). The result TensorFlow's CPU cast gives out of range is
/// unspecified, so any defined choice will do; clamping is also what image
/// code casting pixel values back to uint8 wants.
template <class To, class From>
To float_to_int(From value) {
  if (std::isnan(value))
    return 0;
  // max + 1 (2^31, 2^63 or 2^8) is exact in float and double; max itself is not.
  constexpr From upper = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * 2;
  if (value >= upper)
    return std::numeric_limits<To>::max();
  if (value <= static_cast<From>(std::numeric_limits<To>::min()))
    return std::numeric_limits<To>::min();
  return static_cast<To>(value);
}

/// One element converted between any two element types, as tf.cast does.
template <class To, class From>
To convert(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (is_half_v<From>) {
    return convert<To>(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != From{0};
  } else if constexpr (is_half_v<To>) {
    return To{static_cast<float>(value)};
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_int<To>(value);
  } else {
    // Integer to narrower integer keeps the low bits (modulo 2^bits), as
    // tf.cast does: int32 300 -> uint8 44, int32 -1 -> uint8 255.
    return static_cast<To>(value);
  }
}

/// Converts `count` elements of `from_dtype` at `from` into `count` To values at `to`.
template <class To>
void convert_into(const std::byte* from, DType from_dtype, To* to, std::size_t count) {
  visit_dtype(from_dtype, [&](auto tag) {
    using From = decltype(tag);
    const auto* src = reinterpret_cast<const From*>(from);
    for (std::size_t i = 0; i < count; ++i)
      to[i] = convert<To>(src[i]);
  });
}

void require_valid(const Tensor& tensor, const char* operation) {
  if (!tensor.valid())
    fail(Errc::invalid_argument,
         std::string{operation}
           + ": called on an empty Tensor handle (default-constructed); create it with a "
             "constructor or a factory such as Tensor::zeros first");
}

void require_non_negative(const Shape& shape, const char* operation) {
  for (int64_t dim : shape.dims())
    if (dim < 0)
      fail(Errc::invalid_argument,
           std::string{operation} + ": shape " + shape.to_string() + " has a negative dimension");
}

/// The bytes of `shape` x `dtype`; Error(invalid_argument) when they overflow.
std::size_t checked_bytes(const Shape& shape, DType dtype, const char* operation) {
  std::size_t bytes = size_of(dtype);
  for (int64_t dim : shape.dims())
    if (__builtin_mul_overflow(bytes, static_cast<std::size_t>(dim), &bytes))
      fail(Errc::invalid_argument, std::string{operation} + ": a " + std::string(name(dtype))
                                     + " tensor of shape " + shape.to_string() + " does not fit in memory");
  return bytes;
}

} // namespace

// -- construction -------------------------------------------------------------

Tensor::Tensor(std::shared_ptr<detail::Buffer> buffer, std::byte* data, Shape shape, DType dtype,
               const DeviceSpec* device)
  : buffer_(std::move(buffer)), data_(data), shape_(std::move(shape)), dtype_(dtype),
    device_(device), on_host_(buffer_ == nullptr || buffer_->memory() == nullptr) {}

Tensor::Tensor(float value) : Tensor(scalar_from_bytes(&value, DType::float32)) {}
Tensor::Tensor(double value) : Tensor(scalar_from_bytes(&value, DType::float64)) {}
Tensor::Tensor(int32_t value) : Tensor(scalar_from_bytes(&value, DType::int32)) {}
Tensor::Tensor(int64_t value) : Tensor(scalar_from_bytes(&value, DType::int64)) {}
Tensor::Tensor(uint8_t value) : Tensor(scalar_from_bytes(&value, DType::uint8)) {}
Tensor::Tensor(bool value) : Tensor(scalar_from_bytes(&value, DType::bool_)) {}
Tensor::Tensor(float16 value) : Tensor(scalar_from_bytes(&value, DType::float16)) {}
Tensor::Tensor(bfloat16 value) : Tensor(scalar_from_bytes(&value, DType::bfloat16)) {}

Tensor Tensor::scalar_from_bytes(const void* bytes, DType dtype) {
  Tensor result = empty(Shape{}, dtype);
  std::memcpy(result.data_, bytes, size_of(dtype));
  return result;
}

// -- factories ----------------------------------------------------------------

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, Shape shape) {
  if (shape.num_elements() != static_cast<int64_t>(values.size()))
    fail(Errc::invalid_argument, "from_vector: shape " + shape.to_string() + " holds "
                                   + std::to_string(shape.num_elements()) + " elements but "
                                   + std::to_string(values.size())
                                   + " values were given; pass a shape with "
                                   + std::to_string(values.size()) + " elements");
  Tensor result = empty(shape, dtype_of<T>());
  auto* out = reinterpret_cast<T*>(result.data_);
  // std::vector<bool> packs bits, so copy element by element rather than memcpy.
  for (std::size_t i = 0; i < values.size(); ++i)
    out[i] = values[i];
  return result;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, const DeviceSpec& device) {
  require_non_negative(shape, "Tensor::empty");
  const auto bytes = checked_bytes(shape, dtype, "Tensor::empty");
  if (auto memory = internal::device_memory_for(device)) {
    // A GPU tensor names its device in the local short form, however it was
    // spelled ("/job:localhost/.../device:GPU:1" and "/gpu:1" give "GPU:1").
    const auto* local = detail::intern_device(DeviceSpec::local("GPU", device.device_index().value_or(0)));
    auto buffer = std::make_shared<detail::Buffer>(bytes, std::move(memory));
    std::byte* data = buffer->data();
    return Tensor{std::move(buffer), data, shape, dtype, local};
  }
  auto buffer = std::make_shared<detail::Buffer>(bytes);
  std::byte* data = buffer->data();
  return Tensor{std::move(buffer), data, shape, dtype, detail::intern_device(device)};
}

Tensor Tensor::from_external(void* data, const Shape& shape, DType dtype, std::function<void()> release,
                             const DeviceSpec& device) {
  require_non_negative(shape, "Tensor::from_external");
  const auto bytes = checked_bytes(shape, dtype, "Tensor::from_external");
  if (data == nullptr && bytes > 0)
    fail(Errc::invalid_argument, "Tensor::from_external: the data pointer is null for a " + std::string{name(dtype)}
                                   + " tensor of shape " + shape.to_string() + "; pass the address of its "
                                   + std::to_string(bytes) + " bytes");
  // troupe's kernels read elements as their type: an address that is not a
  // multiple of the element size would be undefined behaviour there.
  if (reinterpret_cast<std::uintptr_t>(data) % size_of(dtype) != 0)
    fail(Errc::invalid_argument, "Tensor::from_external: the data pointer is not aligned to its "
                                   + std::string{name(dtype)} + " elements (" + std::to_string(size_of(dtype))
                                   + " bytes); copy the values into aligned memory, or let troupe allocate "
                                     "(Tensor::empty)");
  auto memory = internal::device_memory_for(device);
  const auto* interned = memory ? detail::intern_device(DeviceSpec::local("GPU", device.device_index().value_or(0)))
                                : detail::intern_device(device);
  auto* bytes_at = static_cast<std::byte*>(data);
  auto buffer = std::make_shared<detail::Buffer>(bytes_at, bytes, std::move(memory), std::move(release));
  return Tensor{std::move(buffer), bytes_at, shape, dtype, interned};
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor result = empty(shape, dtype);
  // Zero bits are zero (or false) in every dtype.
  std::memset(result.data_, 0, result.nbytes());
  return result;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, std::string_view device) {
  Tensor result = empty(shape, dtype, DeviceSpec::from_string(device));
  if (result.on_host_)
    std::memset(result.data_, 0, result.nbytes());
  else if (result.nbytes() > 0)
    result.buffer_->memory()->fill_zero(result.data_, result.nbytes());
  return result;
}

Tensor Tensor::ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype) {
  Tensor result = empty(shape, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T converted = convert<T>(value);
    auto* out = reinterpret_cast<T*>(result.data_);
    for (int64_t i = 0; i < result.num_elements(); ++i)
      out[i] = converted;
  });
  return result;
}

const DeviceSpec& Tensor::default_device() {
  static const DeviceSpec& cpu0 = *detail::intern_device(DeviceSpec::local("CPU", 0));
  return cpu0;
}

// -- properties ---------------------------------------------------------------

std::size_t Tensor::nbytes() const noexcept {
  return static_cast<std::size_t>(num_elements()) * size_of(dtype_);
}

const DeviceSpec& Tensor::device() const noexcept {
  return device_ != nullptr ? *device_ : default_device();
}

// -- element access -----------------------------------------------------------

std::byte* Tensor::mutable_raw_data() {
  require_valid(*this, "mutable_data");
  if (!on_host_)
    fail_not_on_host("mutable_data");
  return mutable_device_data();
}

std::byte* Tensor::mutable_device_data() {
  require_valid(*this, "mutable_device_data");
  if (!on_host_ && buffer_.use_count() > 1) {
    // The same copy-on-write, made on the device.
    const std::size_t bytes = nbytes();
    auto copy = std::make_shared<detail::Buffer>(bytes, buffer_->shared_memory());
    if (bytes > 0)
      copy->memory()->copy_from_device(copy->data(), *buffer_->memory(), data_, bytes);
    data_ = copy->data();
    buffer_ = std::move(copy);
  } else if (buffer_.use_count() > 1) {
    // Another handle shares the bytes: give this handle its own copy of its
    // view, so the write stays invisible to the others.
    const std::size_t bytes = nbytes();
    auto copy = std::make_shared<detail::Buffer>(bytes);
    if (bytes > 0)
      std::memcpy(copy->data(), data_, bytes);
    data_ = copy->data();
    buffer_ = std::move(copy);
  } else {
    // The last other handle may have been released by another thread right
    // before: order its reads before our writes (use_count is a relaxed load).
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return data_;
}

template <class T>
T Tensor::item() const {
  require_valid(*this, "item");
  if (!on_host_)
    fail_not_on_host("item");
  if (num_elements() != 1)
    fail(Errc::invalid_argument, "item: a tensor of shape " + shape_.to_string() + " has "
                                   + std::to_string(num_elements())
                                   + " elements; item() needs exactly one (use to_vector())");
  T result;
  convert_into(data_, dtype_, &result, 1);
  return result;
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  require_valid(*this, "to_vector");
  if (!on_host_)
    fail_not_on_host("to_vector");
  const auto count = static_cast<std::size_t>(num_elements());
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> has no data() to convert into.
    std::vector<T> result;
    result.reserve(count);
    visit_dtype(dtype_, [&](auto tag) {
      using From = decltype(tag);
      const auto* src = reinterpret_cast<const From*>(data_);
      for (std::size_t i = 0; i < count; ++i)
        result.push_back(convert<bool>(src[i]));
    });
    return result;
  } else {
    std::vector<T> result(count);
    convert_into(data_, dtype_, result.data(), count);
    return result;
  }
}

// -- views --------------------------------------------------------------------

Tensor Tensor::reshape(const Shape& shape) const {
  require_valid(*this, "reshape");
  require_non_negative(shape, "reshape");
  if (shape.num_elements() != num_elements())
    fail(Errc::invalid_argument, "reshape: cannot reshape a tensor of shape " + shape_.to_string()
                                   + " (" + std::to_string(num_elements())
                                   + " elements) into shape " + shape.to_string() + " ("
                                   + std::to_string(shape.num_elements()) + " elements)");
  return Tensor{buffer_, data_, shape, dtype_, device_};
}

Tensor Tensor::slice(int64_t begin, int64_t end) const {
  require_valid(*this, "slice");
  if (rank() == 0)
    fail(Errc::invalid_argument,
         "slice: cannot slice a scalar (shape ()) along axis 0; reshape it to rank 1 first");
  const int64_t rows = shape_[0];
  if (begin < 0 || begin > end || end > rows)
    fail(Errc::out_of_range, "slice: rows [" + std::to_string(begin) + ", " + std::to_string(end)
                               + ") are out of range for axis 0 of size " + std::to_string(rows)
                               + " (shape " + shape_.to_string()
                               + "); need 0 <= begin <= end <= " + std::to_string(rows));
  const std::size_t row_bytes = rows == 0 ? 0 : nbytes() / static_cast<std::size_t>(rows);
  return Tensor{buffer_, data_ + static_cast<std::size_t>(begin) * row_bytes,
                shape_.with_dim(0, end - begin), dtype_, device_};
}

Tensor Tensor::on_device(const DeviceSpec& device) const {
  require_valid(*this, "on_device");
  if (!on_host_)
    fail(Errc::not_supported, "on_device: this tensor is in " + this->device().short_name()
                                + " memory; move it with to(\"" + device.to_string() + "\"), which copies");
  // The bytes live in host memory; tagging them with a GPU would lie about
  // where they are. troupe's TPU cores are emulated on the host, so they may.
  if (device.device_type() && !device.is_cpu() && device.device_type() != "TPU")
    fail(Errc::not_supported, "on_device: " + device.to_string()
                                + " is not a host device; a Tensor's bytes live in host "
                                  "memory, so only CPU devices (and the emulated TPU cores) can share them");
  return Tensor{buffer_, data_, shape_, dtype_, detail::intern_device(device)};
}

Tensor Tensor::cast(DType dtype) const {
  const ScopedFlushDenormals flush_denormals;
  require_valid(*this, "cast");
  if (dtype == dtype_)
    return *this;
  if (!on_host_)
    fail_not_on_host("cast");
  Tensor result = empty(shape_, dtype, device());
  visit_dtype(dtype, [&](auto tag) {
    using To = decltype(tag);
    convert_into(data_, dtype_, reinterpret_cast<To*>(result.data_),
                 static_cast<std::size_t>(num_elements()));
  });
  return result;
}

// -- placement ------------------------------------------------------------------

Tensor Tensor::to(std::string_view device) const {
  return to(DeviceSpec::from_string(device));
}

Tensor Tensor::to(const DeviceSpec& device) const {
  require_valid(*this, "to");
  auto* from = buffer_->memory();
  auto target = internal::device_memory_for(device);
  if (!target) {
    if (on_host_)
      return on_device(device);
    Tensor result = empty(shape_, dtype_, device);
    if (nbytes() > 0)
      from->copy_to_host(result.data_, data_, nbytes());
    return result;
  }
  if (target.get() == from)
    return *this;
  Tensor result = empty(shape_, dtype_, device);
  if (nbytes() == 0)
    return result;
  if (on_host_)
    target->copy_from_host(result.data_, buffer_, data_, nbytes());
  else
    target->copy_from_device(result.data_, *from, data_, nbytes());
  return result;
}

void Tensor::fail_not_on_host(const char* operation) const {
  fail(Errc::failed_precondition, std::string{operation} + ": this " + std::string{name(dtype_)}
                                    + " tensor of shape " + shape_.to_string() + " is in "
                                    + device().short_name()
                                    + " memory, which the host cannot read; copy it to the host "
                                      "first with .to(\"CPU:0\")");
}

void Tensor::check_dtype(DType expected) const {
  require_valid(*this, "data");
  if (!on_host_)
    fail_not_on_host("data");
  if (expected != dtype_)
    fail(Errc::dtype_mismatch, "expected a " + std::string{name(expected)}
                                 + " tensor but this tensor of shape " + shape_.to_string()
                                 + " holds " + std::string{name(dtype_)}
                                 + "; cast() it or read it with its own element type");
}

// -- explicit instantiations ------------------------------------------------------

template Tensor Tensor::from_vector<bool>(const std::vector<bool>&, Shape);
template Tensor Tensor::from_vector<int32_t>(const std::vector<int32_t>&, Shape);
template Tensor Tensor::from_vector<int64_t>(const std::vector<int64_t>&, Shape);
template Tensor Tensor::from_vector<float16>(const std::vector<float16>&, Shape);
template Tensor Tensor::from_vector<bfloat16>(const std::vector<bfloat16>&, Shape);
template Tensor Tensor::from_vector<float>(const std::vector<float>&, Shape);
template Tensor Tensor::from_vector<double>(const std::vector<double>&, Shape);
template Tensor Tensor::from_vector<uint8_t>(const std::vector<uint8_t>&, Shape);

template bool Tensor::item<bool>() const;
template int32_t Tensor::item<int32_t>() const;
template int64_t Tensor::item<int64_t>() const;
template float16 Tensor::item<float16>() const;
template bfloat16 Tensor::item<bfloat16>() const;
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template uint8_t Tensor::item<uint8_t>() const;

template std::vector<bool> Tensor::to_vector<bool>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<float16> Tensor::to_vector<float16>() const;
template std::vector<bfloat16> Tensor::to_vector<bfloat16>() const;
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;

} // namespace troupe

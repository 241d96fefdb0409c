#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <troupe/core/device_spec.hpp>
#include <troupe/core/dtype.hpp>
#include <troupe/core/shape.hpp>

// DLPack's managed tensor (dlpack/dlpack.h, Debian's libdlpack-dev).
struct DLManagedTensor;

namespace troupe {

namespace detail {
class Buffer;
/// The process-wide interned copy of `spec` (devices are few and live forever),
/// so that a Tensor carries its device as one pointer.
const DeviceSpec* intern_device(const DeviceSpec& spec);
} // namespace detail

/// A dense n-dimensional array on one device, as tf.Tensor.
///
/// A Tensor is a cheap handle: dtype, shape, device and a reference-counted,
/// immutable buffer. Copying a Tensor (or sending it to an actor in the same
/// process) never copies its bytes. `mutable_data()` copies the buffer first
/// when another handle shares it (copy-on-write), so a write is never seen
/// through another handle. Handles may be used from any thread; a buffer is
/// written only through its sole handle.
///
/// A tensor on a GPU holds device memory, which the host cannot read: element
/// access (data(), item(), to_vector(), cast()) is Error(failed_precondition)
/// naming the device and the fix, `to("CPU:0")`. Printing copies to the host.
class Tensor {
public:
  /// An empty handle: `valid()` is false. Most operations on it throw Error(invalid_argument).
  Tensor() = default;

  /// Rank-0 tensors from C++ scalars: float -> float32, double -> float64,
  /// int32_t -> int32, int64_t -> int64, uint8_t -> uint8, bool -> bool.
  /// (`char` and `short` promote to int, so they make int32 tensors.)
  explicit Tensor(float value);
  explicit Tensor(double value);
  explicit Tensor(int32_t value);
  explicit Tensor(int64_t value);
  explicit Tensor(uint8_t value);
  explicit Tensor(bool value);
  explicit Tensor(float16 value);
  explicit Tensor(bfloat16 value);

  // -- factories ----------------------------------------------------------------

  /// A tensor holding `values` with `shape` (default: rank 1 of values.size()).
  /// Throws Error(invalid_argument) when the shape does not hold exactly that many elements.
  template <class T>
  [[nodiscard]] static Tensor from_vector(const std::vector<T>& values, Shape shape);
  template <class T>
  [[nodiscard]] static Tensor from_vector(const std::vector<T>& values) {
    return from_vector(values, Shape{static_cast<int64_t>(values.size())});
  }

  /// A tensor over `data`, memory the caller owns, without a copy: `shape`
  /// elements of `dtype`, row-major and contiguous, in the memory of `device`
  /// (host memory for a CPU device, that GPU's memory for "GPU:1").
  /// `release` runs once, when the last handle of these bytes goes (it may be
  /// empty when the caller keeps the memory alive longer than every handle).
  /// troupe writes into the memory only through the sole handle (copy on
  /// write, as for every Tensor); the caller must not change it while a
  /// handle is in use. Error(invalid_argument) for a null pointer to a
  /// non-empty tensor or one not aligned to its elements.
  [[nodiscard]] static Tensor from_external(void* data, const Shape& shape, DType dtype,
                                            std::function<void()> release,
                                            const DeviceSpec& device = default_device());

  /// DLPack (the tensor exchange of PyTorch, TensorFlow, JAX, CuPy, NumPy):
  /// a tensor over `tensor`'s memory, without a copy, which takes ownership:
  /// its deleter runs when the last handle goes. CPU memory (and CUDA host
  /// memory) becomes a CPU:0 tensor, CUDA memory of card d a tensor of that
  /// card's first logical GPU. Row-major, contiguous data only (strides may
  /// be null or the compact ones). A tensor it cannot take (a dtype troupe
  /// lacks, vector lanes, strides, a device) is Error(invalid_argument)
  /// naming it, and stays the caller's: its deleter is not called.
  [[nodiscard]] static Tensor from_dlpack(DLManagedTensor* tensor);
  /// This tensor as DLPack, without a copy: the returned tensor holds a
  /// handle of these bytes until the consumer calls its deleter (exactly
  /// once). GPU memory is exported after its device ran everything queued
  /// on it. DLPack 0.6 has no bool: a bool tensor is Error(invalid_argument)
  /// (cast it to uint8). The consumer must not write into the bytes while
  /// troupe handles of them are in use.
  [[nodiscard]] DLManagedTensor* to_dlpack() const;

  /// Uninitialised contents (for kernels that write every element).
  [[nodiscard]] static Tensor empty(const Shape& shape, DType dtype,
                                    const DeviceSpec& device = default_device());
  [[nodiscard]] static Tensor zeros(const Shape& shape, DType dtype);
  /// Zeros in the memory of `device` ("CPU:0", "GPU:1", "/gpu:0"); a GPU that
  /// no Runtime of this process serves is Error(not_found) naming the GPUs there are.
  [[nodiscard]] static Tensor zeros(const Shape& shape, DType dtype, std::string_view device);
  [[nodiscard]] static Tensor ones(const Shape& shape, DType dtype);
  /// Every element `value` converted to `dtype`.
  [[nodiscard]] static Tensor full(const Shape& shape, double value, DType dtype);

  /// "CPU:0" of this process.
  [[nodiscard]] static const DeviceSpec& default_device();

  // -- properties ---------------------------------------------------------------

  [[nodiscard]] bool valid() const noexcept { return buffer_ != nullptr; }
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  [[nodiscard]] int rank() const noexcept { return shape_.rank(); }
  [[nodiscard]] int64_t num_elements() const noexcept { return shape_.num_elements(); }
  [[nodiscard]] std::size_t nbytes() const noexcept;
  [[nodiscard]] const DeviceSpec& device() const noexcept;
  /// Whether the host can address the bytes (CPU devices and the emulated TPU
  /// cores); false for GPU memory.
  [[nodiscard]] bool on_host() const noexcept { return on_host_; }

  // -- element access -----------------------------------------------------------

  /// Read-only elements; throws Error(dtype_mismatch) when T is not the dtype.
  template <class T>
  [[nodiscard]] const T* data() const {
    check_dtype(dtype_of<T>());
    return reinterpret_cast<const T*>(data_);
  }
  /// Host-readable bytes; Error(failed_precondition) for a tensor in GPU memory.
  [[nodiscard]] const std::byte* raw_data() const {
    if (!on_host_)
      fail_not_on_host("raw_data");
    return data_;
  }
  /// The address of the bytes in the memory of device(), on the host or not:
  /// for kernels and copies that run on that device.
  [[nodiscard]] const std::byte* device_data() const noexcept { return data_; }
  /// Writable device_data(): copies the buffer first (on its device) when
  /// another handle shares it.
  [[nodiscard]] std::byte* mutable_device_data();

  /// Writable elements. Copies the buffer first when another handle shares it.
  template <class T>
  [[nodiscard]] T* mutable_data() {
    check_dtype(dtype_of<T>());
    return reinterpret_cast<T*>(mutable_raw_data());
  }
  [[nodiscard]] std::byte* mutable_raw_data();

  /// The single element of a one-element tensor, converted to T as cast() does.
  template <class T>
  [[nodiscard]] T item() const;

  /// All elements in row-major order, converted to T.
  template <class T>
  [[nodiscard]] std::vector<T> to_vector() const;

  // -- placement --------------------------------------------------------------------

  /// This tensor in the memory of `device` (tf.identity under tf.device): the
  /// same handle when it is already there, a view for another host device,
  /// else a copy (host to GPU, GPU to host, GPU to GPU) made by the GPU's
  /// device actor. Blocks the caller (or suspends its fiber) until the bytes
  /// are there. Error(not_found) for a device that no Runtime serves.
  [[nodiscard]] Tensor to(std::string_view device) const;
  [[nodiscard]] Tensor to(const DeviceSpec& device) const;

  // -- views (zero-copy) ----------------------------------------------------------

  /// The same bytes with another shape of as many elements.
  [[nodiscard]] Tensor reshape(const Shape& shape) const;
  /// Rows [begin, end) along axis 0, sharing the buffer.
  [[nodiscard]] Tensor slice(int64_t begin, int64_t end) const;
  /// The same bytes tagged with another host device (CPU devices and the
  /// emulated TPU cores share host memory); a GPU is Error(not_supported).
  [[nodiscard]] Tensor on_device(const DeviceSpec& device) const;
  /// Elements converted to `dtype` (a copy; the same handle when dtype matches).
  /// Floats to integers truncate toward zero, NaN becomes 0 and values beyond
  /// the integer range saturate (to 0 and 255 for uint8); integers to integers
  /// keep the low bits, as static_cast and tf.cast do (300 -> 44, -1 -> 255 for
  /// uint8); anything to bool is `value != 0`.
  [[nodiscard]] Tensor cast(DType dtype) const;

  /// True when both handles view the same buffer.
  [[nodiscard]] bool shares_buffer_with(const Tensor& other) const noexcept {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }
  /// Number of handles sharing this buffer (0 for an empty handle).
  [[nodiscard]] long use_count() const noexcept { return buffer_.use_count(); }

private:
  Tensor(std::shared_ptr<detail::Buffer> buffer, std::byte* data, Shape shape, DType dtype,
         const DeviceSpec* device);
  void check_dtype(DType expected) const;
  [[noreturn]] void fail_not_on_host(const char* operation) const;
  [[nodiscard]] static Tensor scalar_from_bytes(const void* bytes, DType dtype);

  std::shared_ptr<detail::Buffer> buffer_;
  std::byte* data_ = nullptr;
  Shape shape_;
  DType dtype_ = DType::float32;
  const DeviceSpec* device_ = nullptr;
  bool on_host_ = true;
};

/// Prints TensorFlow's eager form with numpy's value formatting:
/// `<Tensor: shape=(3,), dtype=int32, value=[1 2 3]>`.
std::ostream& operator<<(std::ostream& out, const Tensor& tensor);

/// The printed form of `tensor` as a string.
[[nodiscard]] std::string to_string(const Tensor& tensor);

/// numpy's str() of the values alone: "[1 2 3]", "6.0", "[[1 2]\n [3 4]]".
[[nodiscard]] std::string format_values(const Tensor& tensor);

} // namespace troupe

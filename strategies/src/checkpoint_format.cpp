#include <troupe/strategies/checkpoint_format.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <unistd.h>

#include <troupe/core/crc32c.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

constexpr char magic[8] = {'T', 'R', 'O', 'U', 'P', 'E', 'C', 'K'};
constexpr uint32_t format_version = 1;
constexpr uint32_t max_rank = 254;

} // namespace

std::string quote(const std::string& path) {
  return "\"" + path + "\"";
}

std::string describe(DType dtype, const Shape& shape) {
  return std::string(name(dtype)) + " " + shape.to_string();
}

// -- writing ------------------------------------------------------------------------

namespace {

/// Appends to a file descriptor through a buffer, keeping the CRC-32C of
/// everything written. Large blocks bypass the buffer.
class Writer {
public:
  Writer(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  void put(const void* data, std::size_t size) {
    crc_ = internal::crc32c_extend(crc_, data, size);
    if (size >= buffer_limit) {
      flush();
      write_all(data, size);
      return;
    }
    buffer_.append(static_cast<const char*>(data), size);
    if (buffer_.size() >= buffer_limit)
      flush();
  }
  template <class T>
  void put_le(T value) {
    unsigned char bytes[sizeof(T)];
    for (std::size_t i = 0; i < sizeof(T); ++i)
      bytes[i] = static_cast<unsigned char>(static_cast<uint64_t>(value) >> (8 * i));
    put(bytes, sizeof(T));
  }
  void flush() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  [[nodiscard]] uint32_t crc() const noexcept { return crc_; }

private:
  static constexpr std::size_t buffer_limit = std::size_t{1} << 20;

  void write_all(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        fail(Errc::failed_precondition, "Checkpoint::save: writing " + quote(path_) + " failed: " + std::strerror(errno));
      p += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  int fd_;
  std::string path_;
  std::string buffer_;
  uint32_t crc_ = 0;
};

} // namespace

void encode_checkpoint(int fd, const std::string& path,
                       const std::vector<std::pair<std::string, Tensor>>& entries) {
  Writer out(fd, path);
  out.put(magic, sizeof magic);
  out.put_le<uint32_t>(format_version);
  out.put_le<uint32_t>(static_cast<uint32_t>(entries.size()));
  for (const auto& [key, saved] : entries) {
    // Variables of GPU replicas are copied to the host to be written.
    const Tensor value = saved.to("CPU:0");
    out.put_le<uint32_t>(static_cast<uint32_t>(key.size()));
    out.put(key.data(), key.size());
    out.put_le<uint8_t>(static_cast<uint8_t>(value.dtype()));
    out.put_le<uint32_t>(static_cast<uint32_t>(value.rank()));
    for (int64_t d : value.shape().dims())
      out.put_le<int64_t>(d);
    out.put_le<uint64_t>(value.nbytes());
    out.put(value.raw_data(), value.nbytes());
    out.put_le<uint32_t>(internal::crc32c(value.raw_data(), value.nbytes()));
  }
  out.put_le<uint32_t>(out.crc());
  out.flush();
}

// -- reading ------------------------------------------------------------------------

namespace {

/// Reads the format with bounds checks; every failure is Error(data_loss) naming the file.
class Reader {
public:
  Reader(const std::string& data, std::string path) : data_(data), path_(std::move(path)) {}

  [[noreturn]] void corrupt(const std::string& what) const {
    fail(Errc::data_loss, "Checkpoint::restore: " + quote(path_) + " is not a valid troupe checkpoint: " + what);
  }

  const char* take(std::size_t size, const std::string& what) {
    if (size > data_.size() - offset_)
      corrupt("the file is truncated or corrupted: " + what + " needs " + std::to_string(size)
              + " bytes at offset " + std::to_string(offset_) + " but the file ends at "
              + std::to_string(data_.size()));
    const char* p = data_.data() + offset_;
    offset_ += size;
    return p;
  }
  template <class T>
  T get_le(const std::string& what) {
    const auto* p = reinterpret_cast<const unsigned char*>(take(sizeof(T), what));
    uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return static_cast<T>(v);
  }
  [[nodiscard]] std::size_t offset() const noexcept { return offset_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return data_.size() - offset_; }

private:
  const std::string& data_;
  std::string path_;
  std::size_t offset_ = 0;
};

/// Whether `shape` has exactly `elements` elements, without computing a
/// product that dimensions read from a corrupt file could overflow (a shape
/// of 2^33 x 2^33 wraps around to 0 in Shape::num_elements).
bool holds_elements(const Shape& shape, uint64_t elements) {
  const auto& dims = shape.dims();
  if (std::find(dims.begin(), dims.end(), 0) != dims.end())
    return elements == 0;
  uint64_t product = 1;
  for (int64_t d : dims) {
    if (product > elements / static_cast<uint64_t>(d))
      return false;
    product *= static_cast<uint64_t>(d);
  }
  return product == elements;
}

} // namespace

std::map<std::string, CheckpointEntry> parse_checkpoint(const std::string& data,
                                                        const std::string& path) {
  Reader in(data, path);
  if (data.size() < sizeof magic || std::memcmp(data.data(), magic, sizeof magic) != 0)
    in.corrupt(data.size() < sizeof magic && std::memcmp(data.data(), magic, data.size()) == 0
                 ? "the file is truncated: it ends inside the header (" + std::to_string(data.size()) + " bytes)"
                 : "bad magic: it does not start with \"TROUPECK\"");
  (void)in.take(sizeof magic, "the magic");
  const auto version = in.get_le<uint32_t>("the version");
  if (version != format_version)
    in.corrupt("it has format version " + std::to_string(version) + " but this troupe reads version "
               + std::to_string(format_version));
  const auto count = in.get_le<uint32_t>("the variable count");
  std::map<std::string, CheckpointEntry> entries;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string which = "variable " + std::to_string(i + 1) + " of " + std::to_string(count);
    const auto name_len = in.get_le<uint32_t>("the name length of " + which);
    std::string key(in.take(name_len, "the name of " + which), name_len);
    const std::string label = which + " ('" + key + "')";
    const auto code = in.get_le<uint8_t>("the dtype of " + label);
    if (code > static_cast<uint8_t>(last_dtype))
      in.corrupt(label + " has an unknown dtype code " + std::to_string(code));
    const auto dtype = static_cast<DType>(code);
    const auto rank = in.get_le<uint32_t>("the rank of " + label);
    if (rank > max_rank)
      in.corrupt(label + " has rank " + std::to_string(rank));
    std::vector<int64_t> dims;
    for (uint32_t d = 0; d < rank; ++d) {
      dims.push_back(in.get_le<int64_t>("the shape of " + label));
      if (dims.back() < 0)
        in.corrupt(label + " has a negative dimension " + std::to_string(dims.back()));
    }
    Shape shape(std::move(dims));
    const auto nbytes = in.get_le<uint64_t>("the byte count of " + label);
    // Checked without multiplying first, so huge corrupt dimensions cannot overflow.
    const uint64_t elements = nbytes / size_of(dtype);
    if (nbytes % size_of(dtype) != 0 || !holds_elements(shape, elements))
      in.corrupt(label + " of " + describe(dtype, shape) + " says it has " + std::to_string(nbytes) + " bytes");
    const char* bytes = in.take(nbytes, "the data of " + label);
    const auto stored = in.get_le<uint32_t>("the checksum of " + label);
    const auto actual = internal::crc32c(bytes, nbytes);
    if (stored != actual)
      in.corrupt("the data of " + label + " fails its checksum (CRC-32C " + std::to_string(actual)
                 + ", the file says " + std::to_string(stored) + "): the file is corrupted");
    Tensor value = Tensor::empty(shape, dtype);
    if (nbytes > 0)
      std::memcpy(value.mutable_raw_data(), bytes, nbytes);
    if (!entries.emplace(key, CheckpointEntry{dtype, shape, std::move(value)}).second)
      in.corrupt("it holds two variables named '" + key + "'");
  }
  const std::size_t body = in.offset();
  const auto stored = in.get_le<uint32_t>("the file checksum");
  if (in.remaining() != 0)
    in.corrupt(std::to_string(in.remaining()) + " unexpected bytes follow the file checksum");
  const auto actual = internal::crc32c(data.data(), body);
  if (stored != actual)
    in.corrupt("the file fails its checksum (CRC-32C " + std::to_string(actual) + ", the file says "
               + std::to_string(stored) + "): the file is corrupted");
  return entries;
}

} // namespace troupe::internal

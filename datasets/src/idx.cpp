#include <troupe/datasets/idx.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <sys/stat.h>
#include <zlib.h>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/file_reader.hpp>

namespace troupe {

namespace {

/// An IDX element type: its code, the bytes per stored value, and the dtype it becomes.
struct IdxType {
  unsigned char code;
  const char* name;
  std::size_t stored_bytes;
  DType dtype;
};

constexpr std::array<IdxType, 6> idx_types{{
  {0x08, "ubyte", 1, DType::uint8},
  {0x09, "sbyte", 1, DType::int32},
  {0x0b, "short", 2, DType::int32},
  {0x0c, "int", 4, DType::int32},
  {0x0d, "float", 4, DType::float32},
  {0x0e, "double", 8, DType::float64},
}};

// The most that deflate can compress: 1032 to 1. A gzip'ed body claiming more
// than that is truncated (or its header is corrupt), known before allocating.
constexpr uint64_t max_deflate_ratio = 1032;

std::string hex_bytes(const unsigned char* bytes, std::size_t size) {
  std::string text;
  for (std::size_t i = 0; i < size; ++i) {
    std::array<char, 4> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", bytes[i]);
    text += (i > 0 ? " " : "") + std::string(hex.data());
  }
  return text;
}

struct GzCloser {
  void operator()(gzFile file) const noexcept { gzclose(file); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

/// Reads a plain or gzip'ed file through zlib, which passes plain files through.
class IdxReader {
public:
  explicit IdxReader(const std::string& path) : path_(path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
      fail(Errc::not_found,
           "read_idx: cannot open " + internal::quoted(path) + ": " + std::strerror(errno));
    if (S_ISDIR(info.st_mode))
      fail(Errc::not_found,
           "read_idx: cannot open " + internal::quoted(path) + ": " + std::strerror(EISDIR));
    file_size_ = static_cast<uint64_t>(info.st_size);
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_)
      fail(Errc::not_found, "read_idx: cannot open " + internal::quoted(path) + ": "
                              + (errno != 0 ? std::strerror(errno) : "out of memory"));
    gzbuffer(file_.get(), 1u << 20);
  }

  /// Reads up to `size` bytes; fewer only at the end of the data.
  std::size_t read(void* dst, std::size_t size) {
    auto* out = static_cast<unsigned char*>(dst);
    std::size_t done = 0;
    while (done < size) {
      // gzread takes an unsigned int count and returns an int.
      const auto request = static_cast<unsigned>(std::min<std::size_t>(size - done, 1u << 30));
      const int n = gzread(file_.get(), out + done, request);
      if (n < 0) {
        int code = Z_OK;
        const char* message = gzerror(file_.get(), &code);
        fail(Errc::data_loss, "read_idx: cannot decompress " + internal::quoted(path_) + ": "
                                + (code == Z_ERRNO ? std::strerror(errno) : message));
      }
      if (n == 0)
        break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  /// True when the file starts with gzip's magic bytes (known after the first read).
  [[nodiscard]] bool compressed() const { return gzdirect(file_.get()) == 0; }
  [[nodiscard]] uint64_t file_size() const noexcept { return file_size_; }

private:
  std::string path_;
  uint64_t file_size_ = 0;
  GzFile file_;
};

[[noreturn]] void truncated(const std::string& path, const std::string& what, uint64_t expected,
                            uint64_t found) {
  fail(Errc::data_loss, "read_idx: " + internal::quoted(path) + " is truncated: " + what + " needs "
                          + std::to_string(expected) + " bytes, found " + std::to_string(found));
}

/// sbyte and short values (big-endian) widened to int32.
void widen(const unsigned char* stored, int32_t* out, std::size_t count, std::size_t width) {
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char* p = stored + i * width;
    out[i] = width == 1 ? static_cast<int8_t>(p[0])
                        : static_cast<int16_t>(static_cast<uint16_t>((p[0] << 8) | p[1]));
  }
}

/// Big-endian values of `width` bytes to host order, in place.
void to_host_order(std::byte* data, std::size_t count, std::size_t width) {
  if constexpr (std::endian::native == std::endian::big)
    return;
  for (std::size_t i = 0; i < count; ++i) {
    std::byte* p = data + i * width;
    if (width == 2) {
      uint16_t v;
      std::memcpy(&v, p, 2);
      v = __builtin_bswap16(v);
      std::memcpy(p, &v, 2);
    } else if (width == 4) {
      uint32_t v;
      std::memcpy(&v, p, 4);
      v = __builtin_bswap32(v);
      std::memcpy(p, &v, 4);
    } else if (width == 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      v = __builtin_bswap64(v);
      std::memcpy(p, &v, 8);
    }
  }
}

} // namespace

Tensor read_idx(const std::string& path) {
  IdxReader reader(path);
  std::array<unsigned char, 4> magic{};
  std::size_t got = reader.read(magic.data(), magic.size());
  if (got < magic.size())
    truncated(path, "the IDX magic number", magic.size(), got);
  if (magic[0] != 0 || magic[1] != 0)
    fail(Errc::invalid_argument,
         "read_idx: " + internal::quoted(path) + " is not an IDX file: magic bytes "
           + hex_bytes(magic.data(), magic.size()) + ", expected 00 00 <type> <rank>");
  const auto type = std::find_if(idx_types.begin(), idx_types.end(),
                                 [&](const IdxType& t) { return t.code == magic[2]; });
  if (type == idx_types.end())
    fail(Errc::invalid_argument, "read_idx: " + internal::quoted(path)
                                   + " has unknown IDX type code 0x" + hex_bytes(&magic[2], 1)
                                   + "; expected 08 (ubyte), 09 (sbyte), 0b (short), 0c (int), "
                                     "0d (float) or 0e (double)");

  const int rank = magic[3];
  std::vector<unsigned char> dim_bytes(static_cast<std::size_t>(rank) * 4);
  got = reader.read(dim_bytes.data(), dim_bytes.size());
  if (got < dim_bytes.size())
    truncated(path, "the header (" + std::to_string(rank) + " dimensions)", dim_bytes.size(), got);
  std::vector<int64_t> dims(static_cast<std::size_t>(rank));
  uint64_t count = 1;
  bool overflow = false;
  for (int d = 0; d < rank; ++d) {
    const unsigned char* p = &dim_bytes[static_cast<std::size_t>(d) * 4];
    const uint32_t dim =
      (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    dims[static_cast<std::size_t>(d)] = dim;
    overflow = overflow || (dim != 0 && count > (uint64_t{1} << 48) / dim);
    count *= dim;
  }
  const Shape shape(std::move(dims));
  const std::string body = "the data of shape " + shape.to_string() + " (" + type->name + ")";
  const uint64_t header = magic.size() + dim_bytes.size();
  const uint64_t expected = count * type->stored_bytes;

  // Check the claimed size against what the file can hold before allocating it.
  const uint64_t available = reader.file_size() > header ? reader.file_size() - header : 0;
  if (overflow || (reader.compressed() && expected / max_deflate_ratio > reader.file_size()))
    fail(Errc::data_loss, "read_idx: " + internal::quoted(path) + " claims " + body
                            + ", more than its " + std::to_string(reader.file_size())
                            + " bytes can hold; the header is corrupt");
  if (!reader.compressed() && expected > available)
    truncated(path, body, expected, available);

  Tensor result = Tensor::empty(shape, type->dtype);
  std::byte* out = result.mutable_raw_data();
  if (type->stored_bytes == size_of(type->dtype)) {
    got = reader.read(out, expected);
    if (got < expected)
      truncated(path, body, expected, got);
    to_host_order(out, count, type->stored_bytes);
  } else {
    // sbyte and short widen to int32 through a staging buffer.
    std::vector<unsigned char> stored(expected);
    got = reader.read(stored.data(), stored.size());
    if (got < expected)
      truncated(path, body, expected, got);
    widen(stored.data(), reinterpret_cast<int32_t*>(out), count, type->stored_bytes);
  }
  // Bytes past the data mean the header does not describe the file (a
  // corrupted rank or dimension): refuse rather than return part of it.
  unsigned char extra = 0;
  if (reader.read(&extra, 1) != 0)
    fail(Errc::data_loss, "read_idx: " + internal::quoted(path) + " has bytes after " + body
                            + ": its header does not describe the file (a corrupted rank or dimension?)");
  return result;
}

IdxExamples read_idx_examples(const std::string& images_path, const std::string& labels_path) {
  IdxExamples examples{read_idx(images_path), read_idx(labels_path)};
  const auto& images = examples.images.shape();
  const auto& labels = examples.labels.shape();
  if (labels.rank() != 1)
    fail(Errc::invalid_argument, "read_idx_examples: the labels file " + internal::quoted(labels_path)
                                   + " holds shape " + labels.to_string()
                                   + ", not one label per example (rank 1); is it an images file?");
  if (images.rank() < 1 || images[0] != labels[0])
    fail(Errc::invalid_argument,
         "read_idx_examples: " + internal::quoted(images_path) + " holds "
           + (images.rank() < 1 ? std::string("a scalar") : std::to_string(images[0]) + " images") + " but "
           + internal::quoted(labels_path) + " holds " + std::to_string(labels[0])
           + " labels; every image needs its label: pass the images and labels files of the same split");
  return examples;
}

} // namespace troupe

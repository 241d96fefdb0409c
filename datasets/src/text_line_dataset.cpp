#include <troupe/datasets/text_line_dataset.hpp>

#include <cstring>
#include <optional>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/datasets/file_reader.hpp>
#include <troupe/datasets/file_source.hpp>

namespace troupe {

namespace {

constexpr const char* who = "TextLineDataset";

Tensor make_bytes(const std::byte* data, std::size_t size) {
  Tensor result = Tensor::empty(Shape{static_cast<int64_t>(size)}, DType::uint8);
  if (size > 0)
    std::memcpy(result.mutable_raw_data(), data, size);
  return result;
}

/// Splits one file into lines.
class LineReader {
public:
  explicit LineReader(const std::string& path) : file_(who, path) {}

  /// The next line without its "\n" or "\r\n", or nothing at the end of the file.
  std::optional<Tensor> next() {
    pending_.clear();
    for (;;) {
      const std::span<const std::byte> chunk = file_.peek();
      if (chunk.empty()) {
        // A last line without a newline is still a line (TensorFlow keeps a
        // lone trailing "\r" there, as do we).
        if (pending_.empty())
          return std::nullopt;
        return make_bytes(pending_.data(), pending_.size());
      }
      const void* newline = std::memchr(chunk.data(), '\n', chunk.size());
      if (newline == nullptr) {
        // The line goes on past the buffer: collect it.
        pending_.insert(pending_.end(), chunk.begin(), chunk.end());
        file_.consume(chunk.size());
        continue;
      }
      const auto length =
        static_cast<std::size_t>(static_cast<const std::byte*>(newline) - chunk.data());
      Tensor line;
      if (pending_.empty()) {
        // The common case: the whole line is in the buffer, copied once.
        std::size_t size = length;
        if (size > 0 && chunk[size - 1] == std::byte{'\r'})
          --size;
        line = make_bytes(chunk.data(), size);
      } else {
        pending_.insert(pending_.end(), chunk.begin(), chunk.begin() + length);
        if (pending_.back() == std::byte{'\r'})
          pending_.pop_back();
        line = make_bytes(pending_.data(), pending_.size());
      }
      file_.consume(length + 1);
      return line;
    }
  }

private:
  internal::FileReader file_;
  std::vector<std::byte> pending_;
};

} // namespace

TextLineDataset::TextLineDataset(std::vector<std::string> filenames)
  : Dataset(std::make_shared<internal::FileSourceNode<LineReader>>(who, std::move(filenames))) {}

Tensor bytes_tensor(std::string_view text) {
  return make_bytes(reinterpret_cast<const std::byte*>(text.data()), text.size());
}

std::string bytes_to_string(const Tensor& bytes) {
  if (!bytes.valid() || bytes.dtype() != DType::uint8 || bytes.rank() != 1)
    fail(Errc::invalid_argument,
         "bytes_to_string: expected a rank-1 uint8 tensor of bytes (as TextLineDataset and "
         "TFRecordDataset yield), got "
           + (bytes.valid() ? "shape " + bytes.shape().to_string() + " and dtype "
                                + std::string(name(bytes.dtype()))
                            : std::string("an empty handle")));
  return {reinterpret_cast<const char*>(bytes.raw_data()), bytes.nbytes()};
}

} // namespace troupe

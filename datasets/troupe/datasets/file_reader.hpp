#pragma once

// Buffered sequential reading of one file, shared by the file-format sources.
// Internal to troupe_datasets.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::internal {

/// Reads one file front to back through a large buffer (one read(2) per
/// `buffer_size` bytes), tracking the byte offset for error messages. Reads
/// of at least `direct_threshold` bytes go straight into the caller's memory
/// (a large record lands in its tensor without a copy). Errors
/// throw Error naming `who` (the dataset's name), the file and the offset:
/// not_found when the file cannot be opened, data_loss when a read fails.
class FileReader {
public:
  static constexpr std::size_t default_buffer_size = std::size_t{1} << 20;
  /// Reads of at least this many bytes bypass the buffer.
  static constexpr std::size_t direct_threshold = std::size_t{64} << 10;
  /// The bytes a direct read brings into the buffer after the caller's (a page).
  static constexpr std::size_t direct_tail = std::size_t{4} << 10;

  FileReader(std::string who, std::string path, std::size_t buffer_size = default_buffer_size);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  // -- reading ------------------------------------------------------------------------------

  /// Copies up to `size` bytes into `dst`; fewer only at the end of the file.
  [[nodiscard]] std::size_t read(void* dst, std::size_t size);

  /// The buffered bytes not consumed yet, refilling the buffer when none are
  /// left; empty at the end of the file. Valid until the next call.
  [[nodiscard]] std::span<const std::byte> peek();

  /// Marks the first `size` bytes of peek() as consumed.
  void consume(std::size_t size) noexcept;

  // -- properties ---------------------------------------------------------------------------

  /// Bytes consumed since the start of the file.
  [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
  /// The file's size when it is a regular file (nothing for pipes and devices).
  [[nodiscard]] std::optional<uint64_t> size() const noexcept { return size_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
  /// read(2) into `dst`, retrying on EINTR; 0 at the end of the file.
  std::size_t read_some(std::byte* dst, std::size_t size);
  /// readv(2) into `dst` and then the (empty) buffer; returns the bytes put in `dst`.
  std::size_t read_direct(std::byte* dst, std::size_t size);
  [[noreturn]] void read_failed(int error) const;

  std::string who_;
  std::string path_;
  int fd_ = -1;
  std::optional<uint64_t> size_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0; // first unconsumed byte in buffer_
  std::size_t end_ = 0;   // one past the last buffered byte
  uint64_t offset_ = 0;
};

/// `"path"` with quotes, as error messages name files.
[[nodiscard]] std::string quoted(const std::string& path);

/// `Name(["a", "b"])`: how a file source describes itself.
[[nodiscard]] std::string describe_files(std::string_view name,
                                         const std::vector<std::string>& files);

} // namespace troupe::internal

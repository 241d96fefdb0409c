#include <troupe/datasets/file_reader.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

FileReader::FileReader(std::string who, std::string path, std::size_t buffer_size)
  : who_(std::move(who)), path_(std::move(path)), capacity_(std::max<std::size_t>(buffer_size, 1)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    fail(Errc::not_found, who_ + ": cannot open " + quoted(path_) + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd_, &info) == 0) {
    if (S_ISDIR(info.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      fail(Errc::not_found, who_ + ": cannot open " + quoted(path_) + ": " + std::strerror(EISDIR));
    }
    if (S_ISREG(info.st_mode)) {
      size_ = static_cast<uint64_t>(info.st_size);
      // Read-ahead sized for a sequential scan; only a hint.
      (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
  }
  // A file smaller than the buffer needs no more than its size.
  if (size_ && *size_ < capacity_)
    capacity_ = std::max<std::size_t>(static_cast<std::size_t>(*size_), 1);
  buffer_ = std::make_unique_for_overwrite<std::byte[]>(capacity_);
}

FileReader::~FileReader() {
  if (fd_ >= 0)
    ::close(fd_);
}

std::size_t FileReader::read(void* dst, std::size_t size) {
  auto* out = static_cast<std::byte*>(dst);
  std::size_t done = 0;
  while (done < size) {
    if (begin_ < end_) {
      const std::size_t n = std::min(size - done, end_ - begin_);
      std::memcpy(out + done, buffer_.get() + begin_, n);
      begin_ += n;
      offset_ += n;
      done += n;
      continue;
    }
    if (size - done >= direct_threshold) {
      // A large read goes straight into the caller's memory, saving a copy
      // through the buffer; the same readv(2) brings the next few bytes (a
      // record's footer, the next header) into the buffer.
      const std::size_t n = read_direct(out + done, size - done);
      if (n == 0)
        break;
      offset_ += n;
      done += n;
      continue;
    }
    if (peek().empty())
      break;
  }
  return done;
}

std::span<const std::byte> FileReader::peek() {
  if (begin_ == end_) {
    begin_ = 0;
    end_ = read_some(buffer_.get(), capacity_);
  }
  return {buffer_.get() + begin_, end_ - begin_};
}

void FileReader::consume(std::size_t size) noexcept {
  size = std::min(size, end_ - begin_);
  begin_ += size;
  offset_ += size;
}

std::size_t FileReader::read_direct(std::byte* dst, std::size_t size) {
  constexpr std::size_t max_request = std::size_t{1} << 30;
  std::array<iovec, 2> parts{};
  parts[0] = {dst, std::min(size, max_request)};
  parts[1] = {buffer_.get(), std::min(capacity_, direct_tail)};
  for (;;) {
    const ssize_t n = ::readv(fd_, parts.data(), static_cast<int>(parts.size()));
    if (n >= 0) {
      const auto got = static_cast<std::size_t>(n);
      begin_ = 0;
      end_ = got > parts[0].iov_len ? got - parts[0].iov_len : 0;
      return std::min(got, parts[0].iov_len);
    }
    if (errno != EINTR)
      read_failed(errno);
  }
}

void FileReader::read_failed(int error) const {
  fail(Errc::data_loss, who_ + ": cannot read " + quoted(path_) + " at byte offset "
                          + std::to_string(offset_) + ": " + std::strerror(error));
}

std::size_t FileReader::read_some(std::byte* dst, std::size_t size) {
  // Large requests are split so that one read(2) stays below the 2 GiB that
  // Linux transfers at most per call.
  constexpr std::size_t max_request = std::size_t{1} << 30;
  for (;;) {
    const ssize_t n = ::read(fd_, dst, std::min(size, max_request));
    if (n >= 0)
      return static_cast<std::size_t>(n);
    if (errno != EINTR)
      read_failed(errno);
  }
}

std::string quoted(const std::string& path) {
  return '"' + path + '"';
}

std::string describe_files(std::string_view name, const std::vector<std::string>& files) {
  std::string text = std::string(name) + "([";
  for (std::size_t i = 0; i < files.size(); ++i)
    text += (i > 0 ? ", " : "") + quoted(files[i]);
  return text + "])";
}

} // namespace troupe::internal

#pragma once

// For fuzz targets whose parser reads a file by path: the fuzz input as a
// file that lives in memory (memfd), rewritten for every input.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace troupe::fuzz {

/// One in-memory regular file, named by "/proc/self/fd/<n>" so that
/// parsers open it as any other path (and fstat it as a regular file).
class FuzzFile {
public:
  FuzzFile() : fd_(memfd_create("troupe-fuzz", 0)) {
    if (fd_ < 0)
      std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }

  ~FuzzFile() { ::close(fd_); }

  FuzzFile(const FuzzFile&) = delete;
  FuzzFile& operator=(const FuzzFile&) = delete;

  /// Replaces the file's contents with `data`; returns its path.
  const std::string& hold(const uint8_t* data, std::size_t size) {
    if (::ftruncate(fd_, 0) != 0)
      std::abort();
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0)
        std::abort();
      done += static_cast<std::size_t>(n);
    }
    return path_;
  }

private:
  int fd_;
  std::string path_;
};

} // namespace troupe::fuzz

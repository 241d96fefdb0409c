#include <troupe/strategies/checkpoint_files.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <troupe/core/errors.hpp>
#include <troupe/strategies/checkpoint_format.hpp>

namespace troupe::internal {

namespace {

Errc errc_of(int error) {
  return error == ENOENT || error == ENOTDIR ? Errc::not_found : Errc::failed_precondition;
}

void write_file(const std::string& tmp, const std::vector<std::pair<std::string, Tensor>>& entries) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    fail(errc_of(error), "Checkpoint::save: cannot create " + quote(tmp) + ": " + std::strerror(error));
  }
  try {
    encode_checkpoint(fd, tmp, entries);
    // The data must be on disk before the rename makes it the checkpoint.
    if (::fsync(fd) != 0)
      fail(Errc::failed_precondition, "Checkpoint::save: flushing " + quote(tmp) + " failed: " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    fail(Errc::failed_precondition, "Checkpoint::save: closing " + quote(tmp) + " failed: " + std::strerror(error));
  }
}

void sync_directory_of(const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return; // the rename happened; durability of the directory entry is best effort
  (void)::fsync(fd);
  ::close(fd);
}

} // namespace

void write_checkpoint_file(const std::string& path,
                           const std::vector<std::pair<std::string, Tensor>>& entries) {
  const std::string tmp = path + ".tmp";
  write_file(tmp, entries);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    fail(errc_of(error), "Checkpoint::save: cannot rename " + quote(tmp) + " to " + quote(path) + ": "
                           + std::strerror(error) + "; " + quote(path) + " is unchanged");
  }
  sync_directory_of(path);
}

std::string read_checkpoint_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR)
      fail(Errc::not_found, "Checkpoint::restore: checkpoint " + quote(path) + " does not exist");
    fail(Errc::failed_precondition, "Checkpoint::restore: cannot open " + quote(path) + ": " + std::strerror(error));
  }
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    fail(Errc::invalid_argument, "Checkpoint::restore: " + quote(path) + " is a directory, not a checkpoint file");
  }
  data.reserve(static_cast<std::size_t>(st.st_size));
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      fail(Errc::failed_precondition, "Checkpoint::restore: reading " + quote(path) + " failed: "
                                        + std::strerror(error));
    }
    if (n == 0)
      break;
    data.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return data;
}

} // namespace troupe::internal

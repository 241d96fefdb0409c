#include <troupe/datasets/tfrecord_writer.hpp>

#include <array>
#include <cerrno>
#include <cstring>

#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/core/crc32c.hpp>
#include <troupe/datasets/file_reader.hpp>

namespace troupe {

namespace {

void store_le(unsigned char* out, uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i)
    out[i] = static_cast<unsigned char>(value >> (8 * i));
}

} // namespace

TFRecordWriter::TFRecordWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr)
    fail(Errc::not_found,
         "TFRecordWriter: cannot create " + internal::quoted(path_) + ": " + std::strerror(errno));
  // Large records go straight through; small ones collect in a 1 MiB buffer.
  std::setvbuf(file_, nullptr, _IOFBF, std::size_t{1} << 20);
}

TFRecordWriter::~TFRecordWriter() {
  if (file_ == nullptr)
    return;
  if (std::fclose(file_) != 0) {
    TROUPE_LOG(error, "data") << "TFRecordWriter: closing " << internal::quoted(path_)
                              << " failed: " << std::strerror(errno)
                              << "; call close() to see this as an error";
  }
  file_ = nullptr;
}

void TFRecordWriter::write(std::string_view record) {
  if (file_ == nullptr)
    fail(Errc::failed_precondition,
         "TFRecordWriter: write() on " + internal::quoted(path_) + " after close()");
  std::array<unsigned char, 12> header{};
  store_le(header.data(), record.size(), 8);
  store_le(header.data() + 8, internal::crc32c_mask(internal::crc32c(header.data(), 8)), 4);
  std::array<unsigned char, 4> footer{};
  store_le(footer.data(), internal::crc32c_mask(internal::crc32c(record.data(), record.size())), 4);
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size()
      || std::fwrite(record.data(), 1, record.size(), file_) != record.size()
      || std::fwrite(footer.data(), 1, footer.size(), file_) != footer.size())
    fail(Errc::data_loss, "TFRecordWriter: cannot write to " + internal::quoted(path_) + ": "
                            + std::strerror(errno));
}

void TFRecordWriter::write(const Tensor& record) {
  if (!record.valid() || record.dtype() != DType::uint8 || record.rank() != 1) {
    std::string got = record.valid() ? "shape " + record.shape().to_string() + " and dtype "
                                         + std::string(name(record.dtype()))
                                     : "an empty handle";
    fail(Errc::invalid_argument, "TFRecordWriter::write: a record is a rank-1 uint8 tensor of "
                                 "its bytes (use bytes_tensor()), got "
                                   + got);
  }
  write(std::string_view(reinterpret_cast<const char*>(record.raw_data()), record.nbytes()));
}

void TFRecordWriter::flush() {
  if (file_ == nullptr)
    return;
  if (std::fflush(file_) != 0)
    fail(Errc::data_loss, "TFRecordWriter: cannot write to " + internal::quoted(path_) + ": "
                            + std::strerror(errno));
}

void TFRecordWriter::close() {
  if (file_ == nullptr)
    return;
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0)
    fail(Errc::data_loss, "TFRecordWriter: cannot write to " + internal::quoted(path_) + ": "
                            + std::strerror(errno));
}

} // namespace troupe

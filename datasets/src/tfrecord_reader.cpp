#include <troupe/datasets/tfrecord_reader.hpp>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include <troupe/core/crc32c.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

constexpr const char* who = "TFRecordDataset";
constexpr std::size_t header_bytes = 12; // uint64 length, masked CRC of the length
constexpr std::size_t footer_bytes = 4;  // masked CRC of the data

uint64_t load_le(const unsigned char* p, std::size_t bytes) {
  uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i)
    value |= uint64_t{p[i]} << (8 * i);
  return value;
}

std::string hex32(uint32_t value) {
  std::array<char, 16> text{};
  std::snprintf(text.data(), text.size(), "0x%08" PRIx32, value);
  return text.data();
}

} // namespace

TFRecordReader::TFRecordReader(const std::string& path) : file_(who, path) {}

std::optional<Tensor> TFRecordReader::next() {
  const uint64_t start = file_.offset();
  std::array<unsigned char, header_bytes> header{};
  std::size_t got = file_.read(header.data(), header.size());
  if (got == 0)
    return std::nullopt;
  if (got < header.size())
    truncated(start, header.size(), got, "bytes of record header (length and its CRC)");
  const uint64_t length = load_le(header.data(), 8);
  check_crc(start, "length", static_cast<uint32_t>(load_le(header.data() + 8, 4)),
            crc32c(header.data(), 8));

  // A regular file tells how much is left: a length beyond it is truncation,
  // found out before allocating the record. A pipe or a decompressed stream
  // does not: its record grows by what arrives, a piece at a time, so that
  // a length field (protected by a CRC anyone can compute) never sizes an
  // allocation by itself.
  Tensor record;
  const auto size = file_.size();
  if (size && *size >= file_.offset()) {
    const uint64_t left = *size - file_.offset();
    if (left < length)
      truncated(start, length, left, "bytes of data");
    record = Tensor::empty(Shape{static_cast<int64_t>(length)}, DType::uint8);
    got = file_.read(record.mutable_raw_data(), length);
  } else {
    constexpr uint64_t piece = uint64_t{64} << 20;
    std::vector<std::byte> bytes;
    for (got = 0; got < length;) {
      const auto want = static_cast<std::size_t>(std::min(piece, length - got));
      bytes.resize(static_cast<std::size_t>(got) + want);
      const std::size_t n = file_.read(bytes.data() + got, want);
      got += n;
      if (n < want)
        break;
    }
    record = Tensor::empty(Shape{static_cast<int64_t>(got)}, DType::uint8);
    if (got > 0)
      std::memcpy(record.mutable_raw_data(), bytes.data(), static_cast<std::size_t>(got));
  }
  if (got < length)
    truncated(start, length, got, "bytes of data");
  const std::byte* data = record.raw_data();
  std::array<unsigned char, footer_bytes> footer{};
  got = file_.read(footer.data(), footer.size());
  if (got < footer.size())
    truncated(start, footer.size(), got, "bytes of data CRC");
  check_crc(start, "data", static_cast<uint32_t>(load_le(footer.data(), 4)), crc32c(data, length));
  return record;
}

void TFRecordReader::truncated(uint64_t start, uint64_t expected, uint64_t found, const char* what) const {
  fail(Errc::data_loss, std::string(who) + ": truncated record at byte offset " + std::to_string(start)
                          + " of " + quoted(file_.path()) + ": expected " + std::to_string(expected) + " "
                          + what + ", found " + std::to_string(found)
                          + " (the file was cut short, or is still being written)");
}

void TFRecordReader::check_crc(uint64_t start, const char* what, uint32_t stored, uint32_t crc) const {
  const uint32_t computed = crc32c_mask(crc);
  if (stored == computed)
    return;
  std::string message = std::string(who) + ": corrupted record at byte offset " + std::to_string(start) + " of "
                        + quoted(file_.path()) + ": " + what + " CRC mismatch (stored " + hex32(stored)
                        + ", computed " + hex32(computed) + ")";
  if (start == 0 && std::string_view(what) == "length")
    message += "; is it a TFRecord file? (compressed TFRecord files are not supported)";
  fail(Errc::data_loss, message);
}

} // namespace troupe::internal

#pragma once

// Reading the records of one TFRecord file, TFRecordDataset's per-file
// reader; internal to troupe_datasets (not installed), and the entry point
// of the TFRecord fuzz target (fuzz/tfrecord_fuzz.cpp).

#include <cstdint>
#include <optional>
#include <string>

#include <troupe/core/tensor.hpp>
#include <troupe/datasets/file_reader.hpp>

namespace troupe::internal {

/// Reads the records of one file front to back, checking both CRCs of each
/// (the framing tfrecord_dataset.hpp describes). Errors throw Error naming
/// the file and the record's byte offset: not_found for a missing file,
/// data_loss for a truncated record or a CRC mismatch.
class TFRecordReader {
public:
  explicit TFRecordReader(const std::string& path);

  /// The next record's bytes as a rank-1 uint8 tensor, or nothing at the end
  /// of the file.
  [[nodiscard]] std::optional<Tensor> next();

private:
  [[noreturn]] void truncated(uint64_t start, uint64_t expected, uint64_t found, const char* what) const;
  void check_crc(uint64_t start, const char* what, uint32_t stored, uint32_t crc) const;

  FileReader file_;
};

} // namespace troupe::internal

// TFRecord files as TFRecordDataset reads them: every record of the file,
// each length and data CRC checked, until the end or the first Error.

#include <cstddef>
#include <cstdint>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/tfrecord_reader.hpp>

#include "fuzz_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static troupe::fuzz::FuzzFile file;
  try {
    troupe::internal::TFRecordReader reader(file.hold(data, size));
    while (reader.next()) {
    }
  } catch (const troupe::Error&) {
  }
  return 0;
}

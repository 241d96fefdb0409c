#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <troupe/datasets/dataset.hpp>

namespace troupe {

/// The records of TFRecord files, in file order (tf.data.TFRecordDataset).
///
/// Each record is framed as TensorFlow writes it: uint64 length, masked
/// CRC-32C of the length, the data, masked CRC-32C of the data (all little
/// endian). Records are yielded as rank-1 uint8 tensors of their bytes (TF:
/// string scalars). A missing file, a truncated record or a CRC mismatch is
/// Error(not_found / data_loss) naming the file and the byte offset.
class TFRecordDataset : public Dataset {
public:
  explicit TFRecordDataset(std::vector<std::string> filenames);
  explicit TFRecordDataset(const std::string& filename)
    : TFRecordDataset(std::vector<std::string>{filename}) {}
  /// `TFRecordDataset({"a", "b"})`, which the two constructors above make ambiguous.
  explicit TFRecordDataset(std::initializer_list<std::string> filenames)
    : TFRecordDataset(std::vector<std::string>(filenames)) {}
};

} // namespace troupe

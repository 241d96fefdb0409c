#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace troupe {

class Tensor;

/// Writes a TFRecord file (tf.io.TFRecordWriter). Records are flushed by
/// flush() and close(); the destructor closes. Errors (cannot create, disk
/// full) throw Error naming the file.
class TFRecordWriter {
public:
  explicit TFRecordWriter(const std::string& path);
  ~TFRecordWriter();
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;

  /// Appends one record.
  void write(std::string_view record);
  /// Appends the bytes of a rank-1 uint8 tensor (as TFRecordDataset yields them).
  void write(const Tensor& record);
  void flush();
  void close();

private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

} // namespace troupe

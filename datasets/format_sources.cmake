# Sources of the file formats (TFRecord, text lines, IDX, list_files).
# crc32c.hpp, file_reader.hpp and tfrecord_reader.hpp are internal (not installed).
set(troupe_datasets_format_sources
  file_reader.cpp
  idx.cpp
  list_files.cpp
  text_line_dataset.cpp
  tfrecord_dataset.cpp
  tfrecord_reader.cpp
  tfrecord_writer.cpp)

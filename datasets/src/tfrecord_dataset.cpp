#include <troupe/datasets/tfrecord_dataset.hpp>

#include <troupe/datasets/file_source.hpp>
#include <troupe/datasets/tfrecord_reader.hpp>

namespace troupe {

namespace {

constexpr const char* who = "TFRecordDataset";

} // namespace

TFRecordDataset::TFRecordDataset(std::vector<std::string> filenames)
  : Dataset(std::make_shared<internal::FileSourceNode<internal::TFRecordReader>>(who, std::move(filenames))) {}

} // namespace troupe

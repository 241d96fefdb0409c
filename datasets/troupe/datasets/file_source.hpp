#pragma once

// A dataset source that reads files one after another with a per-file Reader
// (TFRecordDataset, TextLineDataset). Internal to troupe_datasets.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/datasets/dataset_node.hpp>
#include <troupe/datasets/file_reader.hpp>

namespace troupe::internal {

/// Yields `Reader(path).next()` for each file in turn. Reader: constructible
/// from a path, `std::optional<Tensor> next()` (nothing at the end of its file).
/// On an error the iterator moves on to the next file, as TensorFlow's
/// ignore_errors() would, so a caller that catches the error can continue.
template <class Reader>
class FileSourceIterator final : public detail::ElementIterator {
public:
  explicit FileSourceIterator(std::shared_ptr<const std::vector<std::string>> files)
    : files_(std::move(files)) {}

  std::optional<Element> next() override {
    for (;;) {
      if (!reader_) {
        if (next_file_ == files_->size())
          return std::nullopt;
        reader_.emplace((*files_)[next_file_++]);
      }
      try {
        if (auto item = reader_->next())
          return Element(std::move(*item));
      } catch (...) {
        reader_.reset();
        throw;
      }
      reader_.reset();
    }
  }

private:
  std::shared_ptr<const std::vector<std::string>> files_;
  std::size_t next_file_ = 0;
  std::optional<Reader> reader_;
};

/// The source node: the file list, rank-1 uint8 elements, and the hooks FILE
/// auto-sharding uses (source_files, with_source_files).
template <class Reader>
class FileSourceNode final : public detail::DatasetNode,
                             public std::enable_shared_from_this<FileSourceNode<Reader>> {
public:
  FileSourceNode(const char* who, std::vector<std::string> files)
    : who_(who), files_(std::make_shared<const std::vector<std::string>>(std::move(files))) {}

  std::unique_ptr<detail::ElementIterator> iterator() const override {
    return std::make_unique<FileSourceIterator<Reader>>(files_);
  }

  ElementSpec element_spec() const override {
    return ElementSpec{{TensorSpec{Shape{-1}, DType::uint8}}, false};
  }

  std::string describe() const override { return describe_files(who_, *files_); }

  std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> /*input*/) const override {
    return this->shared_from_this();
  }

  std::vector<std::string> source_files() const override { return *files_; }

  std::shared_ptr<const detail::DatasetNode>
  with_source_files(std::vector<std::string> files) const override {
    return std::make_shared<FileSourceNode>(who_, std::move(files));
  }

private:
  const char* who_;
  std::shared_ptr<const std::vector<std::string>> files_;
};

} // namespace troupe::internal

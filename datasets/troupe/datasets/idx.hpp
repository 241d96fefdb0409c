#pragma once

#include <string>

#include <troupe/core/tensor.hpp>

namespace troupe {

/// Reads an IDX file (the MNIST family's format: magic 0x0000TTRR with type
/// TT and rank RR, big-endian dimensions, then the data), plain or gzip'ed
/// (by content, not name). unsigned-byte data gives a uint8 tensor; int32 an
/// int32 tensor; float32 and float64 theirs (int8 and int16 widen to int32).
/// A missing file, a wrong magic number, a truncated body or bytes after the
/// data (a header that does not describe the file) is Error naming the file
/// and what was expected.
[[nodiscard]] Tensor read_idx(const std::string& path);

/// A labelled set read from two IDX files: example k is images[k] with labels[k].
struct IdxExamples {
  Tensor images; ///< [n, ...]
  Tensor labels; ///< [n]
};

/// Reads the images file and the labels file of one split (e.g.
/// "train-images-idx3-ubyte.gz" and "train-labels-idx1-ubyte.gz"). Labels of
/// another rank than 1, or counts that differ (the test split's labels with
/// the training images), are Error naming both files and both counts; any
/// error of read_idx is raised as there.
[[nodiscard]] IdxExamples read_idx_examples(const std::string& images_path, const std::string& labels_path);

/// Where Debian's dataset-fashion-mnist package installs the data, and the
/// file names in it ("train-images-idx3-ubyte.gz", ...).
inline constexpr const char* fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";

} // namespace troupe

#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <troupe/datasets/dataset.hpp>

namespace troupe {

/// The lines of text files, in file order (tf.data.TextLineDataset).
///
/// TensorFlow yields each line as a string scalar; troupe has no string dtype
/// and yields a rank-1 uint8 tensor of the line's bytes, without the line
/// ending ("\n" or "\r\n"); bytes_to_string() turns it back into text.
/// A missing or unreadable file is Error(not_found / data_loss) naming it,
/// raised when iteration reaches it.
class TextLineDataset : public Dataset {
public:
  explicit TextLineDataset(std::vector<std::string> filenames);
  explicit TextLineDataset(const std::string& filename)
    : TextLineDataset(std::vector<std::string>{filename}) {}
  /// `TextLineDataset({"a", "b"})`, which the two constructors above make ambiguous.
  explicit TextLineDataset(std::initializer_list<std::string> filenames)
    : TextLineDataset(std::vector<std::string>(filenames)) {}
};

/// A rank-1 uint8 tensor of `text`'s bytes.
[[nodiscard]] Tensor bytes_tensor(std::string_view text);
/// The bytes of a rank-1 uint8 tensor as a string; Error(invalid_argument) for other tensors.
[[nodiscard]] std::string bytes_to_string(const Tensor& bytes);

} // namespace troupe

// Dataset::list_files: the one Dataset factory defined outside dataset.cpp,
// beside the other file sources.

#include <troupe/datasets/dataset.hpp>

#include <algorithm>
#include <atomic>
#include <random>

#include <glob.h>

#include <troupe/core/errors.hpp>
#include <troupe/datasets/file_reader.hpp>
#include <troupe/datasets/text_line_dataset.hpp>

namespace troupe {

namespace {

/// The sorted paths matching `pattern` (byte order, as TensorFlow's matching_files).
std::vector<std::string> match(const std::string& pattern) {
  glob_t matches{};
  const int status = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &matches);
  std::vector<std::string> files;
  if (status == 0)
    files.assign(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
  ::globfree(&matches);
  if (status == GLOB_NOMATCH || (status == 0 && files.empty()))
    fail(Errc::not_found, "list_files: no files match " + internal::quoted(pattern)
                            + "; check the directory and the pattern (*, ?, [...])");
  if (status != 0)
    fail(Errc::not_found,
         "list_files: cannot search for " + internal::quoted(pattern)
           + (status == GLOB_NOSPACE ? ": out of memory" : ": a directory could not be read"));
  std::sort(files.begin(), files.end());
  return files;
}

/// splitmix64: a small generator whose output is the same on every platform
/// (std::shuffle's is not), so a seed gives the same order everywhere.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t operator()() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, bound), without modulo bias.
  uint64_t below(uint64_t bound) {
    const uint64_t limit = -bound % bound; // 2^64 mod bound
    for (;;) {
      const uint64_t x = (*this)();
      if (x >= limit)
        return x % bound;
    }
  }

private:
  uint64_t state_;
};

class FileNameIterator final : public detail::ElementIterator {
public:
  FileNameIterator(std::shared_ptr<const std::vector<std::string>> files,
                   std::vector<std::size_t> order)
    : files_(std::move(files)), order_(std::move(order)) {}

  std::optional<Element> next() override {
    if (next_ == order_.size())
      return std::nullopt;
    return Element(bytes_tensor((*files_)[order_[next_++]]));
  }

private:
  std::shared_ptr<const std::vector<std::string>> files_;
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
};

/// The matched file names, globbed once when the dataset is created. With
/// shuffle, each pass (each iterator) has its own order, as TensorFlow
/// reshuffles every epoch; with a seed, pass k has the same order every run.
class ListFilesNode final : public detail::DatasetNode,
                            public std::enable_shared_from_this<ListFilesNode> {
public:
  ListFilesNode(std::string pattern, bool shuffle, std::optional<uint64_t> seed)
    : pattern_(std::move(pattern)),
      files_(std::make_shared<const std::vector<std::string>>(match(pattern_))), shuffle_(shuffle),
      seed_(seed), base_seed_(seed ? *seed : std::random_device{}()) {}
  /// The same matched files, shuffled from `base_seed`.
  ListFilesNode(const ListFilesNode& drew, uint64_t base_seed)
    : pattern_(drew.pattern_), files_(drew.files_), shuffle_(drew.shuffle_), seed_(drew.seed_),
      base_seed_(base_seed) {}

  std::unique_ptr<detail::ElementIterator> iterator() const override {
    std::vector<std::size_t> order(files_->size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    if (shuffle_) {
      const uint64_t pass = passes_.fetch_add(1, std::memory_order_relaxed);
      SplitMix64 generator(base_seed_ ^ (pass * 0xd1342543de82ef95ull));
      for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[generator.below(i)]);
    }
    return std::make_unique<FileNameIterator>(files_, std::move(order));
  }

  ElementSpec element_spec() const override {
    return ElementSpec{{TensorSpec{Shape{-1}, DType::uint8}}, false};
  }

  std::string describe() const override {
    return "list_files(" + internal::quoted(pattern_) + ", shuffle=" + (shuffle_ ? "true" : "false")
           + ", seed=" + (seed_ ? std::to_string(*seed_) : "None") + ")";
  }

  std::shared_ptr<const detail::DatasetNode>
  with_input(std::shared_ptr<const detail::DatasetNode> /*input*/) const override {
    return shared_from_this();
  }

  std::shared_ptr<const detail::DatasetNode> with_drawn_seed(uint64_t seed) const override {
    if (!shuffle_ || seed_)
      return nullptr;
    return std::make_shared<ListFilesNode>(*this, seed);
  }

private:
  std::string pattern_;
  std::shared_ptr<const std::vector<std::string>> files_;
  bool shuffle_;
  std::optional<uint64_t> seed_;
  uint64_t base_seed_;
  mutable std::atomic<uint64_t> passes_{0};
};

} // namespace

Dataset Dataset::list_files(const std::string& pattern, bool shuffle,
                            std::optional<uint64_t> seed) {
  return Dataset(std::make_shared<ListFilesNode>(pattern, shuffle, seed));
}

} // namespace troupe

#pragma once

// The lazy graph behind a Dataset. Public only because Dataset's templates
// (map, filter) build nodes; applications use Dataset.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <troupe/datasets/dataset_options.hpp>
#include <troupe/datasets/element.hpp>
#include <troupe/datasets/tensor_spec.hpp>

namespace troupe::detail {

/// One pass over a dataset's elements. Not thread-safe: one consumer at a time
/// (an input actor, or the thread iterating a Dataset).
class ElementIterator {
public:
  virtual ~ElementIterator();
  /// The next element, or nothing at the end. Errors (a corrupt file, a
  /// failing map function) throw, naming the input and the fix.
  virtual std::optional<Element> next() = 0;
};

/// One source or transformation of a dataset: immutable, shared by every
/// Dataset value built on it.
class DatasetNode {
public:
  virtual ~DatasetNode();

  /// A fresh pass from the start (repeat, shuffle and iteration call this).
  [[nodiscard]] virtual std::unique_ptr<ElementIterator> iterator() const = 0;

  /// The spec of the elements. The default runs one element through a fresh
  /// iterator; sources and shape-preserving transformations answer directly.
  [[nodiscard]] virtual ElementSpec element_spec() const;

  /// "range(0, 6, 1)", "batch(4, drop_remainder=false)": for logs and errors.
  [[nodiscard]] virtual std::string describe() const = 0;

  /// The node this one transforms (nullptr for sources).
  [[nodiscard]] virtual std::shared_ptr<const DatasetNode> input() const { return nullptr; }

  /// This transformation applied to another input (for rewriting a pipeline,
  /// e.g. inserting a shard after a file source). Sources return themselves.
  [[nodiscard]] virtual std::shared_ptr<const DatasetNode>
  with_input(std::shared_ptr<const DatasetNode> input) const = 0;

  /// The files a reader source reads, in order (empty for other nodes).
  [[nodiscard]] virtual std::vector<std::string> source_files() const { return {}; }

  /// A reader source that reads only `files` (for FILE auto-sharding); others return nullptr.
  [[nodiscard]] virtual std::shared_ptr<const DatasetNode>
  with_source_files(std::vector<std::string> files) const {
    (void)files;
    return nullptr;
  }

  /// For a node that drew a random seed of its own when it was built (an
  /// unseeded shuffle or list_files): the same node with `seed` in place of
  /// that draw, so that workers reading one pipeline in lockstep can agree on
  /// its order. nullptr for every other node.
  [[nodiscard]] virtual std::shared_ptr<const DatasetNode> with_drawn_seed(uint64_t seed) const {
    (void)seed;
    return nullptr;
  }

  /// Options set with with_options() on this node or its inputs.
  [[nodiscard]] virtual DatasetOptions options() const;
};

} // namespace troupe::detail

#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <troupe/datasets/dataset_node.hpp>
#include <troupe/datasets/dataset_options.hpp>
#include <troupe/datasets/element.hpp>
#include <troupe/datasets/tensor_spec.hpp>

namespace troupe {

/// A lazy input pipeline (tf.data.Dataset): a source and a chain of
/// transformations, evaluated only when iterated.
///
/// A Dataset is an immutable value; each transformation returns a new one.
/// Iterate it as a plain C++ range (`for (const Element& e : ds)`), which
/// runs the pipeline on the calling thread; a distributed dataset runs it in
/// an input actor that prefetches. Bad arguments throw Error(invalid_argument)
/// naming the argument and the fix; a failure while reading (a missing or
/// corrupt file) throws when the element is reached.
class Dataset {
public:
  /// Wraps a node; applications use the factories below.
  explicit Dataset(std::shared_ptr<const detail::DatasetNode> node);

  // -- sources ----------------------------------------------------------------------

  /// int64 scalars start, start + step, ... below stop (above it for negative steps).
  [[nodiscard]] static Dataset range(int64_t stop);
  [[nodiscard]] static Dataset range(int64_t start, int64_t stop, int64_t step = 1);
  /// One element: `element` itself.
  [[nodiscard]] static Dataset from_tensors(Element element);
  /// One element per row of axis 0 of each component (all components need the same row count).
  [[nodiscard]] static Dataset from_tensor_slices(Element element);
  /// The file names matching `pattern` (a glob; `*`, `?`, `[...]` in the last path
  /// parts), shuffled with `seed` unless shuffle is false. No match is an error.
  [[nodiscard]] static Dataset list_files(const std::string& pattern, bool shuffle = true,
                                          std::optional<uint64_t> seed = std::nullopt);

  // -- transformations ------------------------------------------------------------------

  /// Stacks `batch_size` consecutive elements along a new axis 0; the last batch
  /// may be smaller unless `drop_remainder`. batch_size must be positive.
  [[nodiscard]] Dataset batch(int64_t batch_size, bool drop_remainder = false) const;
  /// Every `num_shards`-th element starting at `index` (0 <= index < num_shards).
  [[nodiscard]] Dataset shard(int64_t num_shards, int64_t index) const;
  /// The dataset `count` times (-1: forever).
  [[nodiscard]] Dataset repeat(int64_t count = -1) const;
  /// Shuffles through a buffer of `buffer_size` elements. With a seed the order is
  /// deterministic; each pass (repeat) reshuffles unless reshuffle_each_iteration is false.
  [[nodiscard]] Dataset shuffle(int64_t buffer_size, std::optional<uint64_t> seed = std::nullopt,
                                bool reshuffle_each_iteration = true) const;
  /// Applies `fn` to each element. `fn` takes the element (or a `const Tensor&`
  /// for single-tensor elements, or one `const Tensor&` per component of a
  /// tuple) and returns a Tensor, an Element, or a std::tuple of Tensors.
  template <class Fn>
  [[nodiscard]] Dataset map(Fn&& fn) const;
  /// Keeps the elements for which `predicate` returns true (a bool or a bool scalar tensor).
  template <class Fn>
  [[nodiscard]] Dataset filter(Fn&& predicate) const;
  /// The first `count` elements (-1: all).
  [[nodiscard]] Dataset take(int64_t count) const;
  /// All but the first `count` elements (-1: none).
  [[nodiscard]] Dataset skip(int64_t count) const;
  /// (index, element) tuples, the index an int64 scalar counting from `start`.
  /// A tuple element is flattened into the tuple, (index, a, b), where TensorFlow
  /// nests it as (index, (a, b)): an Element cannot hold a tuple inside a tuple.
  [[nodiscard]] Dataset enumerate(int64_t start = 0) const;
  /// Prepares up to `buffer_size` elements ahead when run by an input actor
  /// (a no-op when iterated on the calling thread). buffer_size must be positive,
  /// or -1 for AUTOTUNE (tf.data.AUTOTUNE; troupe picks 2).
  [[nodiscard]] Dataset prefetch(int64_t buffer_size) const;
  /// The same elements with `options` attached (auto-sharding, determinism).
  [[nodiscard]] Dataset with_options(const DatasetOptions& options) const;

  // -- properties ----------------------------------------------------------------------

  [[nodiscard]] ElementSpec element_spec() const;
  [[nodiscard]] DatasetOptions options() const;
  [[nodiscard]] const std::shared_ptr<const detail::DatasetNode>& node() const noexcept { return node_; }
  /// The pipeline, source first: "range(0, 4, 1) -> batch(2, drop_remainder=false)".
  [[nodiscard]] std::string describe() const;

  // -- iteration --------------------------------------------------------------------------

  /// An input iterator over the elements; runs the pipeline on the calling thread.
  class Iterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Element;
    using difference_type = std::ptrdiff_t;
    using pointer = const Element*;
    using reference = const Element&;

    Iterator() = default;
    explicit Iterator(std::shared_ptr<detail::ElementIterator> source);
    const Element& operator*() const { return *current_; }
    const Element* operator->() const { return &*current_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& a, std::default_sentinel_t) { return !a.current_; }

  private:
    std::shared_ptr<detail::ElementIterator> source_;
    std::optional<Element> current_;
  };

  [[nodiscard]] Iterator begin() const;
  [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

private:
  using MapFunction = std::function<Element(const Element&)>;
  using Predicate = std::function<bool(const Element&)>;
  [[nodiscard]] Dataset map_element(MapFunction fn) const;
  [[nodiscard]] Dataset filter_element(Predicate predicate) const;

  std::shared_ptr<const detail::DatasetNode> node_;
};

namespace detail {

/// Turns what a map function returned into an Element.
template <class R>
Element to_element(R&& value) {
  using V = std::remove_cvref_t<R>;
  if constexpr (std::is_same_v<V, Element> || std::is_same_v<V, Tensor>)
    return Element(std::forward<R>(value));
  else if constexpr (std::is_arithmetic_v<V>)
    return Element(Tensor(value));
  else
    return Element::tuple(value);
}

/// Calls `fn` with the element as it accepts it: the Element, its single
/// tensor, or its tuple components as separate arguments.
template <class Fn>
decltype(auto) call_with_element(Fn& fn, const Element& e) {
  if constexpr (std::is_invocable_v<Fn&, const Element&>)
    return fn(e);
  else if constexpr (std::is_invocable_v<Fn&, const Tensor&, const Tensor&>)
    return fn(e[0], e[1]);
  else if constexpr (std::is_invocable_v<Fn&, const Tensor&, const Tensor&, const Tensor&>)
    return fn(e[0], e[1], e[2]);
  else
    static_assert(sizeof(Fn) == 0, "Dataset::map/filter: the function must take an Element, a "
                                   "const Tensor&, or one const Tensor& per tuple component (2 or 3)");
}

/// A bool, or a bool scalar tensor, as a bool.
bool predicate_value(const Tensor& value);
inline bool predicate_value(bool value) { return value; }

} // namespace detail

template <class Fn>
Dataset Dataset::map(Fn&& fn) const {
  return map_element([f = std::forward<Fn>(fn)](const Element& e) mutable {
    return detail::to_element(detail::call_with_element(f, e));
  });
}

template <class Fn>
Dataset Dataset::filter(Fn&& predicate) const {
  return filter_element([f = std::forward<Fn>(predicate)](const Element& e) mutable {
    return detail::predicate_value(detail::call_with_element(f, e));
  });
}

} // namespace troupe

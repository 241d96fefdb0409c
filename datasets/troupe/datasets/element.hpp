#pragma once

#include <cstddef>
#include <initializer_list>
#include <iosfwd>
#include <tuple>
#include <vector>

#include <troupe/core/tensor.hpp>
#include <troupe/datasets/fwd.hpp>

namespace troupe {

/// One element of a Dataset: a Tensor, or a tuple of Tensors (features, labels).
///
/// A single-tensor element converts to `const Tensor&`, so functions written
/// for tensors (`[](const Tensor& x) { return x * 2; }`) accept it directly.
class Element {
public:
  Element() = default;
  /// A single-tensor element.
  Element(Tensor tensor); // NOLINT: implicit on purpose, as tf.data treats a tensor as an element
  /// A tuple element of `components` (also of one component: `(x,)`).
  static Element tuple(std::vector<Tensor> components);
  /// A tuple element from a std::tuple of Tensors.
  template <class... Ts>
  static Element tuple(const std::tuple<Ts...>& components) {
    return std::apply([](const auto&... t) { return tuple(std::vector<Tensor>{Tensor(t)...}); }, components);
  }

  // -- properties -------------------------------------------------------------------

  [[nodiscard]] bool valid() const noexcept { return !components_.empty(); }
  [[nodiscard]] bool is_tuple() const noexcept { return tuple_; }
  [[nodiscard]] std::size_t size() const noexcept { return components_.size(); }
  [[nodiscard]] const std::vector<Tensor>& components() const noexcept { return components_; }

  /// Component `i`; Error(out_of_range) naming i and the size.
  [[nodiscard]] const Tensor& operator[](std::size_t i) const;

  /// The tensor of a single-tensor element; Error(invalid_argument) for a tuple,
  /// naming its size and how to index it.
  [[nodiscard]] const Tensor& tensor() const;
  operator const Tensor&() const { return tensor(); } // NOLINT: see the class comment

  friend bool operator==(const Element& a, const Element& b);

private:
  std::vector<Tensor> components_;
  bool tuple_ = false;
};

/// A tensor prints as a Tensor; a tuple as Python prints one: `(<Tensor ...>, <Tensor ...>)`.
std::ostream& operator<<(std::ostream& out, const Element& element);

} // namespace troupe

#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/fwd.hpp>

namespace troupe {

/// One value per replica of a strategy (tf.distribute.DistributedValues).
/// `values()[i]` belongs to replica i; strategy.run passes each replica its own.
template <class T>
class DistributedValues {
public:
  DistributedValues() = default;
  explicit DistributedValues(std::vector<T> values) : values_(std::move(values)) {}

  [[nodiscard]] const std::vector<T>& values() const noexcept { return values_; }
  [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }

  /// Replica `replica`'s value; Error(out_of_range) naming the replica and the count.
  [[nodiscard]] const T& operator[](int replica) const {
    if (replica < 0 || static_cast<std::size_t>(replica) >= values_.size())
      fail(Errc::out_of_range, "replica " + std::to_string(replica) + " is out of range: these values have "
                                 + std::to_string(values_.size()) + " replicas");
    return values_[static_cast<std::size_t>(replica)];
  }

protected:
  std::vector<T> values_;
};

/// Values that may differ per replica (tf.distribute's PerReplica).
template <class T>
class PerReplica : public DistributedValues<T> {
public:
  using DistributedValues<T>::DistributedValues;
  static constexpr const char* type_name = "PerReplica";
};

/// Values kept equal on every replica (tf.distribute's Mirrored).
template <class T>
class Mirrored : public DistributedValues<T> {
public:
  using DistributedValues<T>::DistributedValues;
  static constexpr const char* type_name = "Mirrored";
};

namespace detail {

/// True for PerReplica, Mirrored and DistributedValues.
template <class T>
struct is_distributed : std::false_type {};
template <class T>
struct is_distributed<PerReplica<T>> : std::true_type {};
template <class T>
struct is_distributed<Mirrored<T>> : std::true_type {};
template <class T>
struct is_distributed<DistributedValues<T>> : std::true_type {};

template <class D>
std::ostream& print_distributed(std::ostream& out, const D& value) {
  out << D::type_name << ":{\n";
  for (std::size_t i = 0; i < value.size(); ++i) {
    out << "  " << i << ": " << value.values()[i];
    out << (i + 1 < value.size() ? ",\n" : "\n");
  }
  return out << "}";
}

} // namespace detail

/// Prints TensorFlow's form:
/// PerReplica:{
///   0: <Tensor: shape=(), dtype=float32, value=6.0>,
///   1: <Tensor: shape=(), dtype=float32, value=6.0>
/// }
template <class T>
std::ostream& operator<<(std::ostream& out, const PerReplica<T>& value) {
  return detail::print_distributed(out, value);
}
template <class T>
std::ostream& operator<<(std::ostream& out, const Mirrored<T>& value) {
  return detail::print_distributed(out, value);
}

/// A list of distributed values prints as Python prints a list: `[PerReplica:{...}, PerReplica:{...}]`.
template <class T>
std::ostream& operator<<(std::ostream& out, const std::vector<PerReplica<T>>& values) {
  out << "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out << (i > 0 ? ", " : "") << values[i];
  return out << "]";
}

/// Local results print as Python prints a tuple of tensors: `(<Tensor ...>,\n <Tensor ...>)`.
std::ostream& operator<<(std::ostream& out, const std::vector<Tensor>& values);

/// Local results of a list-valued result: `([<Tensor ...>, <Tensor ...>], [...])`.
std::ostream& operator<<(std::ostream& out, const std::vector<std::vector<Tensor>>& values);

/// A tuple result prints as Python prints a tuple: `(PerReplica:{...}, PerReplica:{...})`.
template <class... Ts>
std::ostream& operator<<(std::ostream& out, const std::tuple<Ts...>& values) {
  out << "(";
  std::apply([&](const auto&... v) {
    std::size_t i = 0;
    ((out << (i++ > 0 ? ", " : "") << v), ...);
  }, values);
  return out << ")";
}

} // namespace troupe

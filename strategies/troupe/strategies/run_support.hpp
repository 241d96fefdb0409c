#pragma once

// How strategy.run maps a function's arguments to replicas and its results
// back to distributed values. Public only because Strategy::run is a template.

#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <troupe/core/errors.hpp>
#include <troupe/core/tensor.hpp>
#include <troupe/strategies/distributed_values.hpp>

namespace troupe::detail {

/// Replica `replica`'s view of a run() argument: its component of a
/// distributed value, or the argument itself.
template <class A>
decltype(auto) unwrap(const A& arg, int replica) {
  if constexpr (is_distributed<A>::value)
    return arg[replica];
  else
    return (arg);
}

template <class A>
using unwrapped_t = decltype(unwrap(std::declval<const A&>(), 0));

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

// -- results -------------------------------------------------------------------

/// Scalars become rank-0 tensors (as tf.function converts them), tensors stay,
/// lists and tuples are normalised element by element.
template <class R>
auto normalize(R&& value) {
  using V = std::remove_cvref_t<R>;
  if constexpr (std::is_arithmetic_v<V>) {
    if constexpr (std::is_same_v<V, bool>)
      return Tensor(value);
    else if constexpr (std::is_floating_point_v<V>)
      return std::is_same_v<V, float> ? Tensor(static_cast<float>(value)) : Tensor(static_cast<double>(value));
    else if constexpr (sizeof(V) <= 4)
      return Tensor(static_cast<int32_t>(value));
    else
      return Tensor(static_cast<int64_t>(value));
  } else if constexpr (std::is_same_v<V, Tensor>) {
    return Tensor(std::forward<R>(value));
  } else if constexpr (is_vector<V>::value) {
    using E = decltype(normalize(std::declval<typename V::value_type>()));
    std::vector<E> out;
    out.reserve(value.size());
    for (auto& v : value)
      out.push_back(normalize(std::move(v)));
    return out;
  } else if constexpr (requires { std::tuple_size<V>::value; }) {
    return std::apply([](auto&&... v) { return std::make_tuple(normalize(std::move(v))...); },
                      std::forward<R>(value));
  } else {
    static_assert(sizeof(V) == 0, "strategy.run: fn must return a Tensor, a scalar, a std::vector "
                                  "or std::tuple of these, or nothing");
  }
}

template <class R>
using normalized_t = decltype(normalize(std::declval<R>()));

template <class N>
struct Regrouped {
  using type = PerReplica<N>;
};
template <class E>
struct Regrouped<std::vector<E>> {
  using type = std::vector<typename Regrouped<E>::type>;
};
template <class... Es>
struct Regrouped<std::tuple<Es...>> {
  using type = std::tuple<typename Regrouped<Es>::type...>;
};

/// Turns one normalised result per replica into the result's structure with a
/// PerReplica at each leaf. Lists must have the same length on every replica.
template <class N>
typename Regrouped<N>::type regroup(std::vector<N> per_replica) {
  if constexpr (std::is_same_v<N, Tensor>) {
    return PerReplica<Tensor>(std::move(per_replica));
  } else if constexpr (is_vector<N>::value) {
    using E = typename N::value_type;
    const auto length = per_replica.front().size();
    for (std::size_t r = 0; r < per_replica.size(); ++r)
      if (per_replica[r].size() != length)
        fail(Errc::invalid_argument,
             "strategy.run: replica 0 returned a list of " + std::to_string(length) + " values but replica "
               + std::to_string(r) + " returned " + std::to_string(per_replica[r].size())
               + "; every replica must return the same structure");
    typename Regrouped<N>::type out;
    out.reserve(length);
    for (std::size_t j = 0; j < length; ++j) {
      std::vector<E> column;
      column.reserve(per_replica.size());
      for (auto& r : per_replica)
        column.push_back(std::move(r[j]));
      out.push_back(regroup(std::move(column)));
    }
    return out;
  } else {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto column = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        std::vector<std::tuple_element_t<K, N>> values;
        values.reserve(per_replica.size());
        for (auto& r : per_replica)
          values.push_back(std::move(std::get<K>(r)));
        return regroup(std::move(values));
      };
      return typename Regrouped<N>::type(column(std::integral_constant<std::size_t, I>{})...);
    }(std::make_index_sequence<std::tuple_size_v<N>>{});
  }
}

} // namespace troupe::detail

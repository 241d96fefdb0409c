#pragma once

#include <cstddef>
#include <cstdint>
#include <concepts>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <troupe/core/tensor.hpp>
#include <troupe/strategies/distributed_values.hpp>

namespace troupe {

/// Writes the arguments and results of scheduled functions as bytes: they
/// travel to a worker (perhaps in another process) and back.
class ClosureWriter {
public:
  void raw(const void* data, std::size_t size);
  void count(std::size_t n);
  void tensor(const Tensor& t);
  [[nodiscard]] std::vector<uint8_t> take() noexcept { return std::move(out_); }

private:
  std::vector<uint8_t> out_;
};

/// Reads what a ClosureWriter wrote. Every length is checked against the
/// bytes that remain before anything is allocated; a short or corrupt
/// buffer is Error(data_loss) naming `what` ("the arguments of 'step'").
class ClosureReader {
public:
  ClosureReader(const std::vector<uint8_t>& bytes, std::string what);
  void raw(void* data, std::size_t size);
  /// A count of elements of at least `min_element_bytes` each.
  [[nodiscard]] std::size_t count(std::size_t min_element_bytes);
  [[nodiscard]] Tensor tensor();
  /// Error(data_loss) unless every byte was read.
  void expect_end() const;
  [[nodiscard]] const std::string& what() const noexcept { return what_; }

private:
  const std::vector<uint8_t>& bytes_;
  std::size_t pos_ = 0;
  std::string what_;
};

/// How a value of type T crosses to a worker and back: scalars, bool,
/// std::string, Tensor, std::vector, std::pair and PerReplica/Mirrored of
/// those. Specialize it for your own argument or result types:
///
///     template <> struct troupe::ClosureCodec<MyStats> {
///       static void encode(ClosureWriter& w, const MyStats& s) { ... }
///       static MyStats decode(ClosureReader& r) { ... }
///     };
template <class T, class Enable = void>
struct ClosureCodec {};

/// Whether values of T can cross to a worker and back (ClosureCodec<T> has encode and decode).
template <class T>
concept closure_codable = requires(ClosureWriter& w, ClosureReader& r, const T& x) {
  ClosureCodec<T>::encode(w, x);
  { ClosureCodec<T>::decode(r) } -> std::convertible_to<T>;
};

template <class T>
struct ClosureCodec<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static void encode(ClosureWriter& w, const T& x) { w.raw(&x, sizeof x); }
  static T decode(ClosureReader& r) {
    T x{};
    r.raw(&x, sizeof x);
    return x;
  }
};

template <>
struct ClosureCodec<std::string> {
  static void encode(ClosureWriter& w, const std::string& x) {
    w.count(x.size());
    w.raw(x.data(), x.size());
  }
  static std::string decode(ClosureReader& r) {
    std::string x(r.count(1), '\0');
    r.raw(x.data(), x.size());
    return x;
  }
};

template <>
struct ClosureCodec<Tensor> {
  static void encode(ClosureWriter& w, const Tensor& x) { w.tensor(x); }
  static Tensor decode(ClosureReader& r) { return r.tensor(); }
};

template <class T>
struct ClosureCodec<std::vector<T>> {
  static void encode(ClosureWriter& w, const std::vector<T>& xs) {
    w.count(xs.size());
    for (const auto& x : xs)
      ClosureCodec<T>::encode(w, x);
  }
  static std::vector<T> decode(ClosureReader& r) {
    std::vector<T> xs;
    const std::size_t n = r.count(1);
    xs.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      xs.push_back(ClosureCodec<T>::decode(r));
    return xs;
  }
};

template <class A, class B>
struct ClosureCodec<std::pair<A, B>> {
  static void encode(ClosureWriter& w, const std::pair<A, B>& x) {
    ClosureCodec<A>::encode(w, x.first);
    ClosureCodec<B>::encode(w, x.second);
  }
  static std::pair<A, B> decode(ClosureReader& r) {
    A a = ClosureCodec<A>::decode(r);
    B b = ClosureCodec<B>::decode(r);
    return {std::move(a), std::move(b)};
  }
};

template <class T>
struct ClosureCodec<PerReplica<T>> {
  static void encode(ClosureWriter& w, const PerReplica<T>& x) { ClosureCodec<std::vector<T>>::encode(w, x.values()); }
  static PerReplica<T> decode(ClosureReader& r) { return PerReplica<T>(ClosureCodec<std::vector<T>>::decode(r)); }
};

template <class T>
struct ClosureCodec<Mirrored<T>> {
  static void encode(ClosureWriter& w, const Mirrored<T>& x) { ClosureCodec<std::vector<T>>::encode(w, x.values()); }
  static Mirrored<T> decode(ClosureReader& r) { return Mirrored<T>(ClosureCodec<std::vector<T>>::decode(r)); }
};

} // namespace troupe

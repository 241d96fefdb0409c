#pragma once

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

#include <troupe/strategies/closure_codec.hpp>
#include <troupe/strategies/per_worker.hpp>

namespace troupe {

/// \cond internal
// Not API (the reference leaves it out).
namespace internal {
struct RegisteredFunction;

/// Registers `invoke` under `name` in this process (FunctionRegistry).
[[nodiscard]] std::shared_ptr<const RegisteredFunction>
register_remote_function(std::string name, std::type_index signature,
                         std::function<std::vector<uint8_t>(const std::vector<uint8_t>&)> invoke);
/// The running worker's per-worker resource `id` of type `type` (named `type_name` in errors).
[[nodiscard]] std::shared_ptr<void> worker_resource(uint64_t id, std::type_index type, const char* type_name);
/// Error(failed_precondition): a per-worker argument outside a worker.
[[noreturn]] void fail_no_worker(const std::string& function);
/// Error(data_loss): a value sent for a parameter that only a PerWorker argument can fill.
[[noreturn]] void fail_not_codable(const std::string& what);
/// How arguments travel: a value, or the id of a per-worker resource.
enum class ArgumentKind : uint8_t { value = 0, per_worker = 1 };

template <class F>
struct signature_of : signature_of<decltype(&F::operator())> {};
template <class C, class R, class... P>
struct signature_of<R (C::*)(P...) const> {
  using type = R(P...);
};
template <class C, class R, class... P>
struct signature_of<R (C::*)(P...)> {
  using type = R(P...);
};
template <class R, class... P>
struct signature_of<R (*)(P...)> {
  using type = R(P...);
};

/// A decoded argument, kept alive while the function runs: a value, or the
/// worker's own component of a PerWorker argument.
template <class P>
struct ArgumentHolder {
  using Value = std::decay_t<P>;
  std::shared_ptr<Value> held;

  static ArgumentHolder read(ClosureReader& r) {
    auto kind = ClosureCodec<uint8_t>::decode(r);
    if (kind == static_cast<uint8_t>(ArgumentKind::per_worker)) {
      const auto id = ClosureCodec<uint64_t>::decode(r);
      return {std::static_pointer_cast<Value>(worker_resource(id, typeid(Value), typeid(Value).name()))};
    }
    if constexpr (closure_codable<Value>)
      return {std::make_shared<Value>(ClosureCodec<Value>::decode(r))};
    else
      fail_not_codable(r.what());
  }
};

} // namespace internal
/// \endcond

template <class Signature>
class RemoteFunction;

/// A function that a ClusterCoordinator can schedule on its workers, found
/// there by `name` (make one with troupe::remote_function).
template <class R, class... P>
class RemoteFunction<R(P...)> {
public:
  using Result = std::decay_t<R>;

  RemoteFunction(std::string name, std::shared_ptr<const internal::RegisteredFunction> registration)
    : name_(std::move(name)), registration_(std::move(registration)) {}

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::shared_ptr<const internal::RegisteredFunction>& registration() const noexcept {
    return registration_;
  }

private:
  std::string name_;
  std::shared_ptr<const internal::RegisteredFunction> registration_;
};

/// Registers `fn` under `name` in this process, so that a worker of this
/// process runs it when a coordinator schedules `name`: across processes,
/// call it the same way in every process of the cluster. The parameters are
/// values (Tensor, scalars, std::string, std::vector, ... see ClosureCodec) or
/// `T&` for a PerWorker<T> argument (a worker's dataset iterator); the result
/// is a value or void. Registering a name again replaces the function (the
/// earlier handle then fails at schedule).
template <class Fn>
auto remote_function(std::string name, Fn fn) {
  using Signature = typename internal::signature_of<std::decay_t<Fn>>::type;
  static_assert(std::is_void_v<typename std::function<Signature>::result_type>
                  || closure_codable<std::decay_t<typename std::function<Signature>::result_type>>,
                "remote_function: the function's result cannot travel back to the coordinator; return a Tensor, "
                "scalar, std::string, std::vector, PerReplica, or specialize troupe::ClosureCodec for it");
  return [&]<class R, class... P>(std::type_identity<R(P...)>) {
    auto invoke = [fn = std::move(fn), name](const std::vector<uint8_t>& bytes) mutable -> std::vector<uint8_t> {
      ClosureReader reader(bytes, "the arguments of function '" + name + "'");
      // Read in order: a braced list sequences its elements.
      std::tuple<internal::ArgumentHolder<P>...> held{internal::ArgumentHolder<P>::read(reader)...};
      reader.expect_end();
      ClosureWriter writer;
      std::apply(
        [&](auto&... holder) {
          if constexpr (std::is_void_v<R>) {
            std::invoke(fn, *holder.held...);
          } else {
            ClosureCodec<std::decay_t<R>>::encode(writer, std::invoke(fn, *holder.held...));
          }
        },
        held);
      return writer.take();
    };
    auto registration = internal::register_remote_function(name, typeid(Signature), std::move(invoke));
    return RemoteFunction<R(P...)>(name, std::move(registration));
  }(std::type_identity<Signature>{});
}

} // namespace troupe

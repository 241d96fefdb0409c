#pragma once

#include <memory>

#include <troupe/strategies/context_frame.hpp>

namespace troupe {

/// The RAII form of `with strategy.scope():`. While it lives, the calling
/// thread is in the strategy's cross-replica context. Scopes of one strategy
/// nest; entering another strategy's scope inside it, or any scope inside a
/// replica function, is Error(failed_precondition) with TensorFlow's wording.
/// Destroy scopes in reverse order of creation, on the thread that made them.
class StrategyScope {
public:
  explicit StrategyScope(Strategy& strategy);
  ~StrategyScope();
  StrategyScope(StrategyScope&& other) noexcept;
  StrategyScope(const StrategyScope&) = delete;
  StrategyScope& operator=(const StrategyScope&) = delete;
  StrategyScope& operator=(StrategyScope&&) = delete;

private:
  std::unique_ptr<detail::ContextFrame> frame_;
  detail::ContextFrame* previous_ = nullptr;
};

/// The replica context of the calling replica function. Outside any strategy
/// it is the default replica context (one replica; collectives return their
/// input). In cross-replica context (inside strategy.scope(), outside run)
/// TensorFlow returns None; troupe throws Error(failed_precondition) — test
/// with in_cross_replica_context() first.
[[nodiscard]] ReplicaContext& get_replica_context();

/// True inside strategy.scope() (and merge_call), outside replica functions.
[[nodiscard]] bool in_cross_replica_context() noexcept;

/// The current strategy: the scope's or replica's, else the default strategy.
[[nodiscard]] Strategy& get_strategy();

/// True inside a strategy's scope or replica function.
[[nodiscard]] bool has_strategy() noexcept;

} // namespace troupe

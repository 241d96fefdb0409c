#pragma once

#include <troupe/strategies/fwd.hpp>

namespace troupe::detail {

/// Where the calling code runs: under `strategy`, in replica context of
/// `replica` or (replica == nullptr) in cross-replica context. No frame
/// installed means the default strategy's context (TensorFlow's default state).
struct ContextFrame {
  Strategy* strategy = nullptr;
  ReplicaContext* replica = nullptr;
  /// Cross-replica context inside merge_call's function (strategy.run is refused there).
  bool in_merge_call = false;
};

/// The frame of the calling thread or fiber (nullptr: default context).
[[nodiscard]] ContextFrame* current_context_frame() noexcept;

/// Installs `frame` for the current scope and restores the previous frame on
/// destruction (used by scopes and merge_call).
class FrameInstaller {
public:
  explicit FrameInstaller(ContextFrame* frame) noexcept;
  ~FrameInstaller();
  FrameInstaller(const FrameInstaller&) = delete;
  FrameInstaller& operator=(const FrameInstaller&) = delete;

private:
  ContextFrame* previous_;
};

/// Throws TensorFlow's errors unless the caller may use `strategy` in
/// cross-replica context (no strategy, or `strategy` itself outside replica context).
void require_cross_replica(const Strategy& strategy, const char* method);

/// Throws TensorFlow's errors unless the caller is in `strategy`'s scope
/// (its cross-replica context): outside any scope 'Need to be inside "with
/// strategy.scope()"' (the default strategy needs no scope), then as
/// require_cross_replica. Variable creation requires it.
void require_strategy_scope(const Strategy& strategy, const char* method);

} // namespace troupe::detail

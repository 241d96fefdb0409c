#pragma once

#include <cstdint>

namespace troupe {

/// A value with one component per worker, each made on its worker when a
/// scheduled function first needs it (TF's PerWorkerValues): what
/// ClusterCoordinator::create_per_worker_dataset(...).iterator() returns. Pass
/// it to ClusterCoordinator::schedule where the function takes a `T&`: each
/// worker's function gets that worker's own component, which lives on across
/// the functions the worker runs (a restarted worker makes it anew).
template <class T>
class PerWorker {
public:
  PerWorker() = default;
  explicit PerWorker(uint64_t resource_id) noexcept : resource_id_(resource_id) {}

  /// Which per-worker resource of this process it is (1, 2, ...).
  [[nodiscard]] uint64_t resource_id() const noexcept { return resource_id_; }

private:
  uint64_t resource_id_ = 0;
};

} // namespace troupe

#pragma once

#include <memory>
#include <string>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/collectives/communication_options.hpp>
#include <troupe/net/fwd.hpp>
#include <troupe/strategies/strategy.hpp>

namespace troupe {

/// Synchronous data parallelism across the workers of a cluster
/// (tf.distribute.MultiWorkerMirroredStrategy): every worker process runs the
/// same program on a Runtime built from its cluster resolver; each worker runs
/// one replica per local device, and collectives combine all replicas of all
/// workers (local reduce, then ring or halving-doubling between workers, then
/// local share).
///
/// - num_replicas_in_sync() counts every worker's replicas; the replica ids of
///   worker k are k x local replicas + local id (the chief is worker 0).
/// - run() returns this worker's replicas' values; experimental_local_results
///   too. reduce() and gather() combine every worker's values.
/// - Distributed datasets are sharded across workers (AutoShardPolicy).
/// - Every worker must create the same strategies and call run, reduce and
///   gather the same number of times, in the same order, as in TensorFlow; a
///   worker that diverges, dies or freezes fails the collectives of the others
///   with an Error naming it (never a hang).
class MultiWorkerMirroredStrategy final : public Strategy {
public:
  /// `devices`: this worker's replica devices; empty means every GPU, else
  /// every logical CPU device of the runtime (TensorFlow takes CPU:0 only;
  /// logical CPU devices are troupe's way to run several replicas per worker).
  /// A Runtime without a cluster (no TF_CONFIG) makes a single worker.
  /// Error(failed_precondition) on a ps or evaluator task.
  ///
  /// Blocks until every worker has created its strategy of the same position
  /// among its multi-worker strategies (single-worker strategies do not
  /// count), and compares with them the replicas per worker, the
  /// CommunicationOptions (except timeout_seconds) and the
  /// TROUPE_RING_CHUNK_KIB / TROUPE_HALVING_DOUBLING_MAX_KIB knobs: a
  /// difference is Error(failed_precondition) on every worker, naming each
  /// setting, worker and value; a worker that does not come fails the others
  /// after TROUPE_COLLECTIVE_TIMEOUT_SECONDS, naming it.
  explicit MultiWorkerMirroredStrategy(Runtime& runtime, CommunicationOptions options = {},
                                       const std::vector<std::string>& devices = {});

  /// The resolver the runtime joined the cluster with (null without one).
  [[nodiscard]] const ClusterResolver* cluster_resolver() const noexcept override { return resolver_.get(); }

private:
  std::shared_ptr<const ClusterResolver> resolver_;
};

} // namespace troupe

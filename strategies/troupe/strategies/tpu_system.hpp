#pragma once

#include <optional>

#include <troupe/strategies/tpu_topology.hpp>

namespace troupe {

class Runtime;
class TPUClusterResolver;

/// Initializes the emulated TPU system of `rt`, as
/// tf.tpu.experimental.initialize_tpu_system(resolver), and returns its Topology
/// (Topology::emulated_slice of the runtime's slice cores over its hosts).
///
/// Checks that `rt` has TPU cores (Error(not_found) naming
/// RuntimeOptions.logical_tpu_cores otherwise) and that `resolver` describes the
/// runtime's own cluster and task: a TF_CONFIG slice needs the runtime of
/// that task (Runtime(resolver, options)), a local one a runtime of one
/// process (Error(invalid_argument) otherwise). Records the topology's
/// TopologyProto bytes in the runtime (initialized_tpu_topology) and connects
/// the resolver (num_accelerators(), tpu_topology()).
///
/// As TensorFlow, a second call initializes again (with a warning that
/// TPU-resident state may be lost); the emulated slice does not change, so it
/// returns an equal Topology.
Topology initialize_tpu_system(Runtime& rt, TPUClusterResolver& resolver);

/// Forgets the TPU system of `rt` (tf.tpu.experimental.shutdown_tpu_system):
/// initialized_tpu_topology(rt) is nullopt until the next initialize_tpu_system.
/// Nothing happens when it was not initialized.
void shutdown_tpu_system(Runtime& rt);

/// The Topology initialize_tpu_system recorded for `rt`; nullopt before it or
/// after shutdown_tpu_system (for TPUStrategy's "initialize the TPU system
/// first" check).
[[nodiscard]] std::optional<Topology> initialized_tpu_topology(const Runtime& rt);

} // namespace troupe

#pragma once

namespace troupe {

/// What experimental_distribute_values_from_function tells its function
/// (tf.distribute.experimental.ValueContext).
struct ValueContext {
  int replica_id_in_sync_group = 0;
  int num_replicas_in_sync = 1;
};

} // namespace troupe

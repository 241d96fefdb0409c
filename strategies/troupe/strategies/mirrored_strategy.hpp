#pragma once

#include <string>
#include <vector>

#include <troupe/actors/fwd.hpp>
#include <troupe/collectives/communication_options.hpp>
#include <troupe/strategies/strategy.hpp>

namespace troupe {

/// Synchronous data parallelism over the devices of one worker
/// (tf.distribute.MirroredStrategy): one replica per device, collectives
/// between them in shared memory.
class MirroredStrategy final : public Strategy {
public:
  /// `devices` in any TensorFlow spelling ("CPU:0", "/gpu:1"); empty means
  /// all GPUs, else "CPU:0". Unknown or duplicate devices are Error naming them.
  explicit MirroredStrategy(Runtime& runtime, const std::vector<std::string>& devices = {},
                            CommunicationOptions options = {});
};

} // namespace troupe

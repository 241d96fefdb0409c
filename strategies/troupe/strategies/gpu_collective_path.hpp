#pragma once

// How a multi-worker strategy's GPU tensors cross workers: NCCL when every
// worker can run it, else the host's ring (internal: not installed).

#include <string>
#include <utility>
#include <vector>

#include <troupe/collectives/communication_options.hpp>
#include <troupe/core/device_spec.hpp>

namespace troupe::internal {

/// What this worker's replicas on `devices` can do, as it tells the others
/// at the strategy's creation: "nccl", "cpu" (no GPU replica), or "host:
/// <why NCCL cannot run here>".
[[nodiscard]] std::string gpu_collective_capability(const std::vector<DeviceSpec>& devices);

/// Whether GPU tensors go through the host's ring, from every worker's
/// capability ((task, capability), every worker in the same order, so all
/// decide alike): NCCL only when every worker with GPU replicas can run it
/// and none runs on the CPU, as AUTO's rule is TensorFlow's; RING always
/// takes the host. Throws Error(not_supported) naming each worker that
/// cannot and why, when `implementation` is NCCL.
[[nodiscard]] bool gpu_tensors_through_host(CommunicationImplementation implementation,
                                            const std::vector<std::pair<std::string, std::string>>& capabilities);

} // namespace troupe::internal

#pragma once

// The messages a CollectiveGroupActor accepts (collective_group_actor.hpp),
// besides the link's LinkFrameMsg and PeerLostMsg (net/link/link_messages.hpp).
// They carry closures and shared plans, so they never leave the process: CAF
// is told they are local-only (CAF_ALLOW_UNSAFE_MESSAGE_TYPE) rather than
// given inspect overloads. Messages that cross processes live in type-ID
// blocks (core/type_ids.hpp, net/bootstrap/cluster_types.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>

#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/collectives/collective_key.hpp>

namespace troupe::internal {

/// Replica -> group: my part of collective `key`.
struct ContributionMsg {
  CollectiveKey key;
  int replica = 0;
  CollectiveFingerprint fingerprint;
  std::shared_ptr<CollectiveRequest> request;
};

/// Replica -> group: part `part` of `key` is reduced (or failed with `failure`).
struct PartDoneMsg {
  CollectiveKey key;
  size_t part = 0;
  std::string failure;
};

/// Replica -> group: my function for run `run` returned after issuing
/// `issued` collectives (`failure` is its error text when it threw).
struct ReplicaFinishedMsg {
  uint64_t run = 0;
  int replica = 0;
  uint32_t issued = 0;
  std::string failure;
};

/// Group -> itself: check deadlines and stall warnings.
struct DeadlineTickMsg {};

/// A replica's fiber or device actor -> group: its NCCL group of collective
/// `key` on communicator `name` failed with `why`; the other local ranks are
/// aborted, the other workers told, the next collective makes another
/// communicator.
struct NcclCommunicatorFailedMsg {
  CollectiveKey key;
  std::string name;
  std::string why;
};

} // namespace troupe::internal

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ContributionMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::PartDoneMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::ReplicaFinishedMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::DeadlineTickMsg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(troupe::internal::NcclCommunicatorFailedMsg)

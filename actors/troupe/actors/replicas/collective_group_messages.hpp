#pragma once

// The messages a CollectiveGroupActor accepts (collective_group_actor.hpp),
// besides the link's LinkFrameMsg and PeerLostMsg (net/link/link_messages.hpp),
// and its typed handle. They never leave the process (a contribution carries
// its tensors in shared memory): none has a type ID, and the contribution's
// inspect() refuses serialisation (core/local_only.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/meta/type_name.hpp>
#include <caf/typed_actor.hpp>

#include <troupe/actors/replicas/replica_handle.hpp>
#include <troupe/collectives/collective_fingerprint.hpp>
#include <troupe/collectives/collective_key.hpp>
#include <troupe/collectives/collective_key_inspect.hpp>
#include <troupe/core/local_only.hpp>
#include <troupe/net/link/link_messages.hpp>

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

/// Whichever thread dropped them -> group: the links no longer hold the
/// frames in-place collective `key` sent out of its caller's memory
/// (CrossWorkerCollectives::on_frames_released).
struct FramesReleasedMsg {
  CollectiveKey key;
};

/// A replica's fiber or device actor -> group: its NCCL group of collective
/// `key` on communicator `name` failed with `why`; the other local ranks are
/// aborted, the other workers told, the next collective makes another
/// communicator.
struct NcclCommunicatorFailedMsg {
  CollectiveKey key;
  std::string name;
  std::string why;
};

// Local-only: the request's tensors are shared with the replica.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ContributionMsg& x) {
  std::string fingerprint = x.fingerprint.describe();
  return inspect_local_only(f, "troupe::ContributionMsg", x.key, x.replica, fingerprint);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PartDoneMsg& x) {
  return f(caf::meta::type_name("troupe::PartDoneMsg"), x.key, x.part, x.failure);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ReplicaFinishedMsg& x) {
  return f(caf::meta::type_name("troupe::ReplicaFinishedMsg"), x.run, x.replica, x.issued, x.failure);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DeadlineTickMsg&) {
  return f(caf::meta::type_name("troupe::DeadlineTickMsg"));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, FramesReleasedMsg& x) {
  return f(caf::meta::type_name("troupe::FramesReleasedMsg"), x.key);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NcclCommunicatorFailedMsg& x) {
  return f(caf::meta::type_name("troupe::NcclCommunicatorFailedMsg"), x.key, x.name, x.why);
}

/// What a collective group accepts (CollectiveGroupActor): its replicas'
/// contributions and reports, its timer, NCCL failures, and its link's frames
/// and verdicts.
using CollectiveGroupActorHandle = caf::typed_actor<
  caf::reacts_to<LinkFrameMsg>, caf::reacts_to<PeerLostMsg>, caf::reacts_to<ContributionMsg>,
  caf::reacts_to<ReplicaFinishedMsg>, caf::reacts_to<PartDoneMsg>, caf::reacts_to<DeadlineTickMsg>,
  caf::reacts_to<NcclCommunicatorFailedMsg>, caf::reacts_to<FramesReleasedMsg>>;

} // namespace troupe::internal

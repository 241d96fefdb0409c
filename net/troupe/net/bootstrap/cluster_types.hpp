#pragma once

// Messages between the node actors of a cluster's processes (over CAF's
// middleman), with their type-ID block. Include only from .cpp files.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

#include <troupe/core/bounded_field.hpp>
#include <troupe/core/type_ids.hpp>
#include <troupe/net/bootstrap/node_actor_handle.hpp>

namespace caf {
class actor_system_config;
} // namespace caf

namespace troupe::internal {

/// The handshake between two tasks: who the sender is, which cluster it
/// believes in and where its data plane listens. The cluster token was proven
/// before (net/auth, ControlPlaneGate); a task refuses a hello whose cluster
/// spec fingerprint differs from its own.
struct HelloMsg {
  int32_t rank = -1;         ///< the sender's member index (ClusterMembers): its collective rank, if it has one
  std::string task;          ///< "worker:1"
  uint64_t spec_fingerprint = 0;
  uint16_t data_port = 0;    ///< 0 for a parameter server, which has no data plane
  int32_t pid = 0;
  std::string host;          ///< where the sender's data plane listens
  NodeActorHandle node;      ///< the sender's node actor, which the receiver monitors
  /// In a reply: the cluster had formed and took the asking process back as a
  /// restart of its task (Handshake::admits_restart); it then dials every
  /// member itself, since none will dial it.
  bool rejoined = false;
  /// What the sender offers for a UCX data plane (DataPlaneUcxOfferMsg):
  /// its worker's address and nonce, empty when it offers none (then
  /// `ucx_error` says why), and its shared-memory domain.
  std::vector<uint8_t> ucx_address;
  std::vector<uint8_t> ucx_nonce;
  std::string ucx_error;
  std::string shm_domain;
  std::string transport; ///< its TROUPE_TRANSPORT
  /// The sender reads other members' memory (net/link/cross_memory.hpp): a
  /// member is read only when both sides do, so that neither lends to one
  /// that cannot read it.
  bool cross_memory = false;

  /// Bounds for the decoder: a UCX worker address of shared-memory
  /// transports is a few hundred bytes.
  static constexpr size_t max_ucx_bytes = 4096;
  static constexpr size_t max_text_bytes = 1024;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HelloMsg& x) {
  return f(caf::meta::type_name("troupe::HelloMsg"), x.rank, x.task, x.spec_fingerprint,
           x.data_port, x.pid, x.host, x.node, x.rejoined,
           bounded(x.ucx_address, HelloMsg::max_ucx_bytes, "a hello's UCX address"),
           bounded(x.ucx_nonce, HelloMsg::max_ucx_bytes, "a hello's UCX nonce"),
           bounded(x.ucx_error, HelloMsg::max_text_bytes, "a hello's UCX error"),
           bounded(x.shm_domain, HelloMsg::max_text_bytes, "a hello's shared-memory domain"),
           bounded(x.transport, HelloMsg::max_text_bytes, "a hello's transport"), x.cross_memory);
}

/// Task -> the node actor of another task (request): the actor published
/// there under `name` (ClusterNode::publish), answered once it is published;
/// an error when the name is longer than max_name_bytes or too many lookups
/// wait there already.
struct NodeLookupMsg {
  std::string name;

  /// Names are short words ("parameter_server"); longer ones are refused.
  static constexpr size_t max_name_bytes = 256;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeLookupMsg& x) {
  return f(caf::meta::type_name("troupe::NodeLookupMsg"), x.name);
}

/// Task -> the node actor of every other member (request, answered with
/// true): this task's program is ending because its job failed, and why.
/// Said before its bye, so that each member's verdict on it
/// (TaskLostMsg::job_error) names the cause instead of a plain "it shut
/// down". The receiver takes the sender's rank from the connection it came
/// on, never from the message.
struct NodeFarewellMsg {
  std::string job_error;

  /// An error text, as the coordinator's (max_error_text_bytes).
  static constexpr size_t max_job_error_bytes = 64 * 1024;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeFarewellMsg& x) {
  return f(caf::meta::type_name("troupe::NodeFarewellMsg"),
           bounded(x.job_error, NodeFarewellMsg::max_job_error_bytes, "a farewell's job error"));
}

/// Registers the core types and the cluster messages with `cfg` (every
/// process of a cluster must: CAF drops unregistered remote messages).
void add_cluster_types(caf::actor_system_config& cfg);

} // namespace troupe::internal

CAF_BEGIN_TYPE_ID_BLOCK(troupe_cluster, caf::id_block::troupe_core::end)
  CAF_ADD_TYPE_ID(troupe_cluster, (troupe::internal::HelloMsg))
  CAF_ADD_TYPE_ID(troupe_cluster, (troupe::internal::NodeLookupMsg))
  CAF_ADD_TYPE_ID(troupe_cluster, (troupe::internal::NodeFarewellMsg))
CAF_END_TYPE_ID_BLOCK(troupe_cluster)

#include <troupe/net/handshake.hpp>

namespace troupe::internal {

uint64_t Handshake::hash_token(const std::string& cluster_token) {
  // FNV-1a of a domain-separated string: equal tokens give equal hashes on every platform.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : "troupe-cluster-token:" + cluster_token)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Handshake::refusal(const PeerClaim& claim, bool taken) const {
  const auto& me = task_names_.at(static_cast<size_t>(rank_));
  const auto who = claim.task.empty() ? "rank " + std::to_string(claim.rank) : "task " + claim.task;
  if (claim.token_hash != token_hash_)
    return "its cluster token differs from task " + me
           + "'s (every task of a cluster must have the same TROUPE_CLUSTER_TOKEN)";
  if (claim.spec_fingerprint && *claim.spec_fingerprint != spec_fingerprint_)
    return "its cluster spec differs from task " + me + "'s (every task must get the same TF_CONFIG \"cluster\")";
  const bool known = claim.rank > rank_ && static_cast<size_t>(claim.rank) < task_names_.size()
                     && (claim.task.empty() || task_names_[static_cast<size_t>(claim.rank)] == claim.task);
  if (!known)
    return "it claims to be " + who + ", which is not a task that connects to " + me;
  if (taken)
    return who + " already joined; two processes were started as the same task";
  return {};
}

} // namespace troupe::internal

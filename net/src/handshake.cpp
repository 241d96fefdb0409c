#include <troupe/net/handshake.hpp>

namespace troupe::internal {

bool Handshake::admits_restart(const PeerClaim& claim, const std::optional<RankHolder>& holder, bool formed) const {
  // Only on the control plane (the claim names its task), only once every
  // member joined, and only in place of a process that is gone.
  if (!formed || !holder || !holder->gone || restartable_job_.empty() || claim.task.empty())
    return false;
  if (!claim.key_proven || claim.tls_differs || !claim.spec_fingerprint || *claim.spec_fingerprint != spec_fingerprint_)
    return false;
  const bool in_range = claim.rank >= 0 && static_cast<size_t>(claim.rank) < task_names_.size();
  return in_range && claim.rank != rank_ && task_names_[static_cast<size_t>(claim.rank)] == claim.task
         && claim.task.rfind(restartable_job_ + ":", 0) == 0;
}

std::string Handshake::refusal(const PeerClaim& claim, const std::optional<RankHolder>& holder, bool formed) const {
  if (admits_restart(claim, holder, formed))
    return {};
  const auto& me = task_names_.at(static_cast<size_t>(rank_));
  const bool in_range = claim.rank >= 0 && static_cast<size_t>(claim.rank) < task_names_.size();
  const auto who = claim.task.empty() ? "rank " + std::to_string(claim.rank) : "task " + claim.task;
  if (!claim.key_proven)
    return "its cluster token differs from task " + me
           + "'s (every task of a cluster must have the same TROUPE_CLUSTER_TOKEN)";
  if (claim.tls_differs)
    return "its TROUPE_TLS differs from task " + me + "'s (set TROUPE_TLS alike on every task)";
  if (claim.spec_fingerprint && *claim.spec_fingerprint != spec_fingerprint_)
    return "its cluster spec differs from task " + me + "'s (every task must get the same TF_CONFIG \"cluster\")";
  const bool names_match = claim.task.empty() || (in_range && task_names_[static_cast<size_t>(claim.rank)] == claim.task);
  if (claim.rank == rank_ && names_match)
    return "it claims to be " + who + ", which this process is: two processes were started as task " + me
           + " (give every process its own TF_CONFIG task index or rank)";
  // A lower rank too where tasks rejoin: a restarted worker dials every member.
  const bool connects_here = claim.rank > rank_ || (!restartable_job_.empty() && claim.rank != rank_);
  if (holder && connects_here && in_range && names_match) {
    const auto first = holder->pid != 0 ? "the process with pid " + std::to_string(holder->pid) : "another process";
    if (holder->gone)
      return who + " already joined this cluster as " + first
             + ", which has since left or been lost; a formed cluster does not take a restarted task back"
             + (restartable_job_.empty() ? std::string{}
                                         : " (only a " + restartable_job_ + " task rejoins, once every task joined)")
             + ": restart every task of the cluster";
    return who + " is already taken by " + first + ", which joined first: two processes were started as "
           + (claim.task.empty() ? who : claim.task) + " (give every process its own TF_CONFIG task index or rank)";
  }
  const bool known = claim.rank > rank_ && in_range && names_match;
  if (!known)
    return "it claims to be " + who + ", which is not a task that connects to " + me;
  return {};
}

bool Handshake::of_other_cluster(const PeerClaim& claim) const {
  return !claim.key_proven || claim.tls_differs || (claim.spec_fingerprint && *claim.spec_fingerprint != spec_fingerprint_);
}

bool Handshake::dooms_the_cluster(const PeerClaim& claim, const std::optional<RankHolder>& holder) const {
  // Any member not joined yet, lower ones included: a refused process
  // presents itself to every member (ClusterNode), and none of them can form
  // the cluster without the task it claims to be.
  const bool awaited = !holder && claim.rank >= 0 && claim.rank != rank_
                       && static_cast<size_t>(claim.rank) < task_names_.size()
                       && (claim.task.empty() || task_names_[static_cast<size_t>(claim.rank)] == claim.task);
  return of_other_cluster(claim) && awaited;
}

} // namespace troupe::internal

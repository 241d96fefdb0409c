#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace troupe::internal {

/// What a process presents when it connects to a task: on the control plane
/// (the node actor's hello, or the claim of a dialer the gate refused) and on
/// each data connection (the rank it proved in net/auth's handshake).
struct PeerClaim {
  int rank = -1;
  std::string task;                         ///< "worker:1"; empty on the data plane (rank only)
  bool key_proven = true;                   ///< false: it failed net/auth's proof (another cluster token)
  std::optional<uint64_t> spec_fingerprint; ///< control plane only
  bool tls_differs = false;                 ///< it runs with another TROUPE_TLS (net/auth's handshake said so)
};

/// The process that already holds a rank, for the refusal of a second claim.
struct RankHolder {
  int pid = 0;       ///< 0 when unknown (the data plane knows ranks only)
  bool gone = false; ///< it joined, then left or was lost
};

/// The one place that decides whether a connecting process may join this
/// task: the cluster token proven, the same cluster spec, and a rank that connects to
/// this one (only higher ranks do) and is not taken yet. One exception: once
/// the cluster formed, a task of the job named by admit_restarted() whose
/// earlier process left or was lost may join again, from any rank (it dials
/// every member itself, since the others formed already).
class Handshake {
public:
  Handshake(int rank, std::vector<std::string> task_names, uint64_t spec_fingerprint)
    : rank_(rank), task_names_(std::move(task_names)), spec_fingerprint_(spec_fingerprint) {}

  /// Empty when `claim` may join; otherwise why not, for the log and the refused process.
  /// `holder`: the process that joined as that rank before, if any.
  /// `formed`: this task has seen every member join (a restart is taken back only then).
  [[nodiscard]] std::string refusal(const PeerClaim& claim, const std::optional<RankHolder>& holder,
                                    bool formed = false) const;

  /// Whether refusal() admits `claim` as a restarted process of a task whose
  /// earlier process is gone (the members then treat it as rejoining).
  [[nodiscard]] bool admits_restart(const PeerClaim& claim, const std::optional<RankHolder>& holder,
                                    bool formed) const;

  /// Tasks of `job` ("worker" in a cluster with parameter servers, whose
  /// coordinator goes on with the workers it has) may rejoin a formed cluster
  /// after their process left or was lost; other tasks never do.
  void admit_restarted(std::string job) { restartable_job_ = std::move(job); }

  /// As above; `taken`: some process (unknown which) joined as that rank.
  [[nodiscard]] std::string refusal(const PeerClaim& claim, bool taken) const {
    return refusal(claim, taken ? std::optional<RankHolder>(RankHolder{}) : std::nullopt);
  }

  /// Whether `claim` is refused because its process belongs to another
  /// cluster (token or spec differ) while it claims a member that has not
  /// joined yet (of a higher rank, which dials this task, or of a lower one,
  /// which a refused process also presents itself to). Such a process was
  /// started as that task with the wrong settings: the right one will not
  /// come, so this task fails at once rather than waiting out
  /// TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS.
  [[nodiscard]] bool dooms_the_cluster(const PeerClaim& claim, const std::optional<RankHolder>& holder) const;

  /// Whether `claim` carries another cluster token or spec than this task's.
  [[nodiscard]] bool of_other_cluster(const PeerClaim& claim) const;

private:
  int rank_;
  std::vector<std::string> task_names_;
  uint64_t spec_fingerprint_;
  std::string restartable_job_; ///< empty: no task rejoins
};

} // namespace troupe::internal

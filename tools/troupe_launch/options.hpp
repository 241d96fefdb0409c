#pragma once

#include <string>
#include <vector>

namespace troupe::launch {

/// troupe-launch's command line.
struct Options {
  // -- local mode: every task is a child of this process ------------------------
  int workers = 2;
  int ps = 0;                     ///< parameter servers; > 0 implies `chief` (the coordinator)
  bool chief = false;             ///< one "chief" task besides the workers (TF's layout)
  bool evaluator = false;         ///< one "evaluator" task, outside the cluster as in TF
  bool tls = false;               ///< TROUPE_TLS=1 for every task (TLS keyed by the run's token)
  std::string host = "127.0.0.1"; ///< where the tasks listen; must be this machine
  double grace_seconds = 10;      ///< after the first failure, before SIGTERM
  double timeout_seconds = 0;     ///< whole-cluster deadline; 0: none
  int gpus_per_worker = 0;        ///< GPUs of this machine for each chief and worker; 0: untouched

  // -- rank mode (--attach): one rank of mpirun or srun --------------------------
  bool attach = false;
  int base_port = 23456;          ///< port of local rank 0 on every host
  std::vector<std::string> hosts; ///< --hosts: one per rank, or one for all ranks

  // -- both ---------------------------------------------------------------------
  bool help = false;
  std::vector<std::string> program; ///< the program and its arguments
};

/// Parses the arguments after argv[0]. Options end at `--` or at the first
/// argument that does not start with `-`; everything after belongs to the
/// program. Throws std::invalid_argument naming the flag, the value and the
/// fix (the caller exits with status 2).
[[nodiscard]] Options parse_options(const std::vector<std::string>& args);

/// The text `--help` prints.
[[nodiscard]] std::string usage();

} // namespace troupe::launch

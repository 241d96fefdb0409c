#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace troupe {

/// One runtime knob: its environment variable, default and meaning.
struct KnobInfo {
  const char* env;
  const char* default_value;
  const char* help;
};

/// Every runtime knob, read once from the environment (NCCL's param.h idea).
/// An unparsable value is Error(invalid_argument) naming the variable, the
/// value and what it accepts.
struct Knobs {
  std::string log_level;                  ///< TROUPE_LOG
  std::string log_components;             ///< TROUPE_LOG_COMPONENTS
  double collective_timeout_seconds;      ///< TROUPE_COLLECTIVE_TIMEOUT_SECONDS
  double stall_warning_seconds;           ///< TROUPE_STALL_WARNING_SECONDS
  std::size_t flight_recorder_entries;    ///< TROUPE_FLIGHT_RECORDER_ENTRIES
  std::string flight_recorder_dir;        ///< TROUPE_FLIGHT_RECORDER_DIR (empty: log only)
  std::string trace_path;                 ///< TROUPE_TRACE (empty: no timeline)
  std::size_t fiber_stack_bytes;          ///< TROUPE_FIBER_STACK_KIB (in KiB)
  std::size_t local_reduce_split_bytes;   ///< TROUPE_LOCAL_REDUCE_SPLIT_BYTES
  std::size_t host_cache_bytes;           ///< TROUPE_HOST_CACHE_MIB (in MiB)
  std::size_t idle_polls;                 ///< TROUPE_IDLE_POLLS
  double cluster_init_timeout_seconds;    ///< TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS
  double peer_heartbeat_seconds;          ///< TROUPE_PEER_HEARTBEAT_SECONDS
  double peer_timeout_seconds;            ///< TROUPE_PEER_TIMEOUT_SECONDS
  std::size_t data_port_offset;           ///< TROUPE_DATA_PORT_OFFSET (0 = any free port)
  std::string cluster_token;              ///< TROUPE_CLUSTER_TOKEN, or the first line of TROUPE_CLUSTER_TOKEN_FILE
  bool allow_unauthenticated;             ///< TROUPE_ALLOW_UNAUTHENTICATED
  double handshake_timeout_seconds;       ///< TROUPE_HANDSHAKE_TIMEOUT_SECONDS
  bool tls;                               ///< TROUPE_TLS
  std::string transport;                  ///< TROUPE_TRANSPORT: tcp, ucx or auto
  std::size_t ucx_spin_us;                ///< TROUPE_UCX_SPIN_US
  std::size_t ring_chunk_bytes;           ///< TROUPE_RING_CHUNK_KIB (in KiB)
  std::size_t direct_exchange_max_bytes;  ///< TROUPE_DIRECT_EXCHANGE_MAX_KIB (in KiB)
  std::size_t halving_doubling_max_bytes; ///< TROUPE_HALVING_DOUBLING_MAX_KIB (in KiB)
  std::size_t max_frame_bytes;            ///< TROUPE_MAX_FRAME_MIB (in MiB)
  std::string scheduler_policy;           ///< TROUPE_SCHEDULER_POLICY
  std::string kernels;                    ///< TROUPE_KERNELS
};

/// The knobs of this process (parsed on first use, then constant).
[[nodiscard]] const Knobs& knobs();

/// The table behind knobs(), for `--help` texts and docs.
[[nodiscard]] const std::vector<KnobInfo>& knob_table();

// -- for tests ----------------------------------------------------------------

namespace internal {

/// Looks up an environment variable by name; nullptr when unset (as std::getenv).
using EnvLookup = std::function<const char*(const char* name)>;

/// Parses the knobs from `getenv` (knobs() passes std::getenv), so tests can
/// check parsing without touching the process environment.
[[nodiscard]] Knobs parse_knobs(const EnvLookup& getenv);

} // namespace internal

} // namespace troupe

#include <troupe/core/config.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <troupe/core/errors.hpp>

namespace troupe {

namespace {

[[noreturn]] void reject(const char* env, std::string_view value, std::string_view expected) {
  fail(Errc::invalid_argument, std::string(env) + "=\"" + std::string(value)
                                 + "\" is invalid: expected " + std::string(expected));
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string parse_level(const char* env, std::string_view value) {
  // Case-insensitive, as NCCL_DEBUG: TROUPE_LOG=INFO works too.
  auto level = lower(value);
  if (level == "error" || level == "warning" || level == "info" || level == "debug")
    return level;
  reject(env, value, "one of error, warning, info, debug");
}

double parse_positive_seconds(const char* env, std::string_view value) {
  double x = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (ec != std::errc{} || ptr != value.data() + value.size() || !std::isfinite(x) || x <= 0)
    reject(env, value, "a number of seconds greater than 0 (e.g. 30 or 2.5)");
  return x;
}

/// An unsigned integer >= `min`, multiplied by `unit` (1024 for KiB).
std::size_t parse_size(const char* env, std::string_view value, std::size_t min,
                       std::size_t unit, std::string_view what) {
  std::size_t x = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (ec != std::errc{} || ptr != value.data() + value.size() || x < min
      || x > std::numeric_limits<std::size_t>::max() / unit)
    reject(env, value, "an integer >= " + std::to_string(min) + " (" + std::string(what) + ")");
  return x * unit;
}

/// An unsigned integer from 0 to `max` `what` ("microseconds").
std::size_t parse_count(const char* env, std::string_view value, std::size_t max, std::string_view what) {
  const auto n = parse_size(env, value, 0, 1, what);
  if (n > max)
    reject(env, value, "at most " + std::to_string(max) + " " + std::string(what));
  return n;
}

/// The cluster token held in the file at `path` (its first line), for tasks
/// started by hand: a token on a command line or in a shell's history is
/// readable by others. Refused when group or others may read the file, when
/// it is empty or larger than a token needs, or when TROUPE_CLUSTER_TOKEN
/// gives another token.
std::string read_token_file(const char* env, std::string_view path, const std::string& token_from_env) {
  const std::string file(path);
  auto refuse = [&](const std::string& why) {
    fail(Errc::invalid_argument, std::string(env) + "=\"" + file + "\": " + why);
  };
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    refuse(std::string("cannot open it: ") + std::strerror(errno));
  struct stat st{};
  const bool stated = ::fstat(fd, &st) == 0;
  constexpr std::size_t max_bytes = 4096; // a token is tens of characters
  std::string text(max_bytes + 1, '\0');
  const ssize_t n = stated && S_ISREG(st.st_mode) ? ::read(fd, text.data(), text.size()) : -1;
  ::close(fd);
  if (!stated || !S_ISREG(st.st_mode))
    refuse("it is not a regular file");
  if ((st.st_mode & 077) != 0)
    refuse("group or others may read it; make it private with `chmod 600 " + file + "`");
  if (n < 0)
    refuse(std::string("cannot read it: ") + std::strerror(errno));
  if (static_cast<std::size_t>(n) > max_bytes)
    refuse("it has more than " + std::to_string(max_bytes) + " bytes; it should hold the token alone");
  text.resize(static_cast<std::size_t>(n));
  const auto line_end = text.find_first_of("\r\n");
  std::string token = text.substr(0, line_end);
  if (token.empty())
    refuse("its first line is empty; write the token into it (e.g. `openssl rand -hex 16 > " + file + "`)");
  if (!token_from_env.empty() && token_from_env != token)
    refuse("TROUPE_CLUSTER_TOKEN gives another token; set one of the two");
  return token;
}

/// One row of the knob table: what users see, and how the value is stored.
struct KnobDef {
  KnobInfo info;
  void (*apply)(Knobs& knobs, const char* env, std::string_view value);
};

const std::array<KnobDef, 28> knob_defs{{
  {{"TROUPE_LOG", "warning",
    "Log level: error, warning, info or debug (case-insensitive)."},
   [](Knobs& k, const char* env, std::string_view v) { k.log_level = parse_level(env, v); }},
  {{"TROUPE_LOG_COMPONENTS", "",
    "Comma-separated components whose info/debug lines are printed (e.g. coll,net); "
    "empty = all."},
   [](Knobs& k, const char*, std::string_view v) { k.log_components = std::string(v); }},
  {{"TROUPE_COLLECTIVE_TIMEOUT_SECONDS", "60",
    "Seconds a collective may wait for its peers before failing with timeout (> 0)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.collective_timeout_seconds = parse_positive_seconds(env, v);
   }},
  {{"TROUPE_STALL_WARNING_SECONDS", "10",
    "Seconds after which a waiting collective logs the ranks that have not joined (> 0)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.stall_warning_seconds = parse_positive_seconds(env, v);
   }},
  {{"TROUPE_FLIGHT_RECORDER_ENTRIES", "64",
    "Collectives each group remembers (0 to 4096; 0 turns it off), logged as one block on a stall "
    "warning, a timeout, a fingerprint mismatch or a lost peer."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.flight_recorder_entries = parse_count(env, v, 4096, "collectives");
   }},
  {{"TROUPE_FLIGHT_RECORDER_DIR", "",
    "A directory where each task also appends its flight recorder blocks, to "
    "flight-<task>-<pid>.txt (empty: the log only)."},
   [](Knobs& k, const char*, std::string_view v) { k.flight_recorder_dir = std::string(v); }},
  {{"TROUPE_TRACE", "",
    "A file where the process writes its timeline as Chrome trace events (chrome://tracing, Perfetto): "
    "steps, collectives, input waits, scheduled functions, checkpoint writes; troupe-launch merges its "
    "tasks' files into this one (empty: none)."},
   [](Knobs& k, const char*, std::string_view v) { k.trace_path = std::string(v); }},
  {{"TROUPE_FIBER_STACK_KIB", "1024",
    "Stack of each replica fiber in KiB (>= 64); reserved, and committed only as the function uses it."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.fiber_stack_bytes = parse_size(env, v, 64, 1024, "KiB of stack per replica fiber");
   }},
  {{"TROUPE_LOCAL_REDUCE_SPLIT_BYTES", "262144",
    "Tensors larger than this many bytes are reduced in parallel pieces on a host (>= 1)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.local_reduce_split_bytes = parse_size(env, v, 1, 1, "bytes");
   }},
  {{"TROUPE_HOST_CACHE_MIB", "1024",
    "MiB of freed host buffers kept for reuse (0 disables the cache)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.host_cache_bytes = parse_size(env, v, 0, 1024 * 1024, "MiB of cached host buffers");
   }},
  {{"TROUPE_IDLE_POLLS", "20000",
    "Times an idle scheduler thread polls for work before it starts sleeping; high values "
    "trade idle CPU for step latency (0 = CAF's defaults)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.idle_polls = parse_size(env, v, 0, 1, "polls before an idle thread sleeps");
   }},
  {{"TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS", "120",
    "Seconds a cluster task waits for every other task to start and pass the handshake (> 0)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.cluster_init_timeout_seconds = parse_positive_seconds(env, v);
   }},
  {{"TROUPE_PEER_HEARTBEAT_SECONDS", "0.5",
    "Seconds between heartbeats on the control connection to every other task (> 0)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.peer_heartbeat_seconds = parse_positive_seconds(env, v);
   }},
  {{"TROUPE_PEER_TIMEOUT_SECONDS", "4",
    "Seconds without traffic after which another task counts as lost (a frozen or partitioned "
    "process); this bounds how long survivors wait before failing (> 0)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.peer_timeout_seconds = parse_positive_seconds(env, v);
   }},
  {{"TROUPE_DATA_PORT_OFFSET", "0",
    "The data plane of a cluster task listens on the task's port + this offset (for firewalls; "
    "0 = any free port, told to the other tasks at the handshake)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.data_port_offset = parse_size(env, v, 0, 1, "added to the task's port, 0 = any free port");
     if (k.data_port_offset > 65535)
       reject(env, v, "an integer from 0 to 65535 (added to the task's port, 0 = any free port)");
   }},
  {{"TROUPE_CLUSTER_TOKEN", "",
    "Shared secret of a cluster's tasks: a process with another token is refused at the handshake."},
   [](Knobs& k, const char*, std::string_view v) { k.cluster_token = std::string(v); }},
  {{"TROUPE_CLUSTER_TOKEN_FILE", "",
    "A file whose first line is the cluster token (readable by its owner only), for tasks "
    "started by hand: keeps the token out of command lines and shell history."},
   [](Knobs& k, const char* env, std::string_view v) {
     if (!v.empty())
       k.cluster_token = read_token_file(env, v, k.cluster_token);
   }},
  {{"TROUPE_ALLOW_UNAUTHENTICATED", "0",
    "1 lets a cluster whose tasks are not all on this machine's loopback run without "
    "TROUPE_CLUSTER_TOKEN (anyone who reaches its ports could join); 0 refuses to start it."},
   [](Knobs& k, const char* env, std::string_view v) {
     if (v != "0" && v != "1")
       reject(env, v, "0 or 1");
     k.allow_unauthenticated = v == "1";
   }},
  {{"TROUPE_HANDSHAKE_TIMEOUT_SECONDS", "10",
    "Seconds a connection to a task's control or data port has to pass troupe's authentication "
    "handshake; then it is closed and logged with its address (> 0)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.handshake_timeout_seconds = parse_positive_seconds(env, v);
   }},
  {{"TROUPE_TLS", "0",
    "1 encrypts both planes of a cluster task with TLS 1.3, keyed by TROUPE_CLUSTER_TOKEN "
    "(no certificates); every task must set it alike. 0 sends them in clear."},
   [](Knobs& k, const char* env, std::string_view v) {
     if (v != "0" && v != "1")
       reject(env, v, "0 or 1");
     k.tls = v == "1";
   }},
  {{"TROUPE_TRANSPORT", "auto",
    "Data plane between cluster tasks: tcp (troupe's TCP broker), ucx (UCX shared memory; every "
    "worker on this host, TROUPE_TLS=0) or auto (ucx where it can carry every worker, else tcp). "
    "Every task must set it alike."},
   [](Knobs& k, const char* env, std::string_view v) {
     const auto transport = lower(v);
     if (transport != "tcp" && transport != "ucx" && transport != "auto")
       reject(env, v, "tcp, ucx or auto");
     k.transport = transport;
   }},
  {{"TROUPE_UCX_SPIN_US", "0",
    "Microseconds the UCX data plane's progress thread polls for more work before it sleeps "
    "(0 to 100000): lower latency for small collectives, at the cost of a busy core."},
   [](Knobs& k, const char* env, std::string_view v) { k.ucx_spin_us = parse_count(env, v, 100000, "microseconds"); }},
  {{"TROUPE_RING_CHUNK_KIB", "1024",
    "KiB per data-plane frame of a cross-worker ring all-reduce (>= 1): smaller chunks pipeline "
    "more finely, larger ones cost fewer messages."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.ring_chunk_bytes = parse_size(env, v, 1, 1024, "KiB per ring chunk");
   }},
  {{"TROUPE_DIRECT_EXCHANGE_MAX_KIB", "256",
    "Cross-worker all-reduces where each worker would send at most this many KiB in all, "
    "(workers - 1) x pack, use a direct exchange (one round: every worker sends its pack to "
    "every other); larger ones halving-doubling or the ring. 0 turns it off."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.direct_exchange_max_bytes = parse_size(env, v, 0, 1024, "KiB");
   }},
  {{"TROUPE_HALVING_DOUBLING_MAX_KIB", "64",
    "Cross-worker all-reduces of packs up to this many KiB use recursive halving-doubling "
    "(fewer rounds), larger ones the ring (less data per rank)."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.halving_doubling_max_bytes = parse_size(env, v, 0, 1024, "KiB");
   }},
  {{"TROUPE_MAX_FRAME_MIB", "64",
    "Most payload bytes of one data-plane frame, in MiB (1 to 2048): collectives send larger "
    "blocks in pieces, and a task closes a connection whose frame claims more before reading it. "
    "Every worker must use the same value."},
   [](Knobs& k, const char* env, std::string_view v) {
     k.max_frame_bytes = parse_size(env, v, 1, 1024 * 1024, "MiB per data-plane frame");
     if (k.max_frame_bytes > (std::size_t{2048} << 20))
       reject(env, v, "an integer from 1 to 2048 (MiB per data-plane frame)");
   }},
  {{"TROUPE_SCHEDULER_POLICY", "auto",
    "CAF scheduler of cluster tasks: auto (sharing, cores / tasks-on-this-host threads) or "
    "stealing (as single-process runtimes)."},
   [](Knobs& k, const char* env, std::string_view v) {
     const auto policy = lower(v);
     if (policy != "auto" && policy != "stealing")
       reject(env, v, "auto or stealing");
     k.scheduler_policy = policy;
   }},
  {{"TROUPE_KERNELS", "fast",
    "CPU kernels: fast (the widest instruction set this CPU runs; the same bits run to run on "
    "one machine), portable (x86-64 baseline with fixed blocking: the same bits on every x86-64 "
    "CPU), or one of x86-64, x86-64-v3 (AVX2), x86-64-v4 (AVX-512) to compare them."},
   [](Knobs& k, const char* env, std::string_view v) {
     const auto mode = lower(v);
     if (mode != "fast" && mode != "portable" && mode != "x86-64" && mode != "x86-64-v3"
         && mode != "x86-64-v4")
       reject(env, v, "fast, portable, x86-64, x86-64-v3 or x86-64-v4");
     k.kernels = mode;
   }},
}};

} // namespace

namespace internal {

Knobs parse_knobs(const EnvLookup& getenv) {
  Knobs knobs{};
  for (const auto& def : knob_defs) {
    // A variable that is set but empty counts as unset (`TROUPE_LOG= prog`).
    const char* value = getenv ? getenv(def.info.env) : nullptr;
    if (value == nullptr || *value == '\0')
      value = def.info.default_value;
    def.apply(knobs, def.info.env, value);
  }
  // Frames of every algorithm must fit what a receiver accepts.
  const auto fits_frame = [&knobs](const char* env, std::size_t bytes, const char* why) {
    if (bytes > knobs.max_frame_bytes)
      fail(Errc::invalid_argument, std::string(env) + "=" + std::to_string(bytes >> 10)
                                     + " is larger than TROUPE_MAX_FRAME_MIB="
                                     + std::to_string(knobs.max_frame_bytes >> 20) + ": " + why);
  };
  fits_frame("TROUPE_RING_CHUNK_KIB", knobs.ring_chunk_bytes,
             "a ring chunk is one frame; lower the chunk or raise the frame limit");
  fits_frame("TROUPE_DIRECT_EXCHANGE_MAX_KIB", knobs.direct_exchange_max_bytes,
             "a direct exchange sends a pack as a single frame; lower it or raise the frame limit");
  fits_frame("TROUPE_HALVING_DOUBLING_MAX_KIB", knobs.halving_doubling_max_bytes,
             "halving-doubling sends a pack's halves as single frames; lower it or raise the frame limit");
  return knobs;
}

} // namespace internal

const Knobs& knobs() {
  // A throwing initialiser leaves the static unset, so every later call
  // reports the same bad variable instead of running on half-parsed knobs.
  static const Knobs instance =
    internal::parse_knobs([](const char* name) { return std::getenv(name); });
  return instance;
}

const std::vector<KnobInfo>& knob_table() {
  static const std::vector<KnobInfo> table = [] {
    std::vector<KnobInfo> out;
    for (const auto& def : knob_defs)
      out.push_back(def.info);
    return out;
  }();
  return table;
}

} // namespace troupe

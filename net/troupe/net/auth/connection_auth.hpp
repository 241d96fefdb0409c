#pragma once

// The handshake that opens every authenticated troupe connection (internal:
// not installed), before any other byte is parsed. Four fixed-size messages:
//
//   dialer   -> acceptor  DialerHello       its rank and pid, the rank it
//                                           dialled, the cluster spec, a fresh
//                                           nonce (64 bytes)
//   acceptor -> dialer    AcceptorChallenge its rank and a fresh nonce, or why
//                                           it refuses the hello (48 bytes)
//   dialer   -> acceptor  the dialer's proof (32 bytes)
//   acceptor -> dialer    AcceptorVerdict   accepted with the acceptor's proof,
//                                           or why not (36 bytes)
//
// A proof is HMAC-SHA256 under the cluster's key of everything both sides
// said (cluster_auth.hpp), so a recorded exchange never passes again. The
// acceptor shows its own proof only to a dialer that proved first, so a
// stranger who dials gets nothing to test token guesses against; the dialer
// proves first, so whatever listens where it dials does get one (a token of
// 128 random bits makes that useless). There is no channel binding: a relay
// between two real tasks passes the handshake; only TLS stops that. Both ends
// share endianness, as for the data plane's frames.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <troupe/net/auth/cluster_auth.hpp>

namespace troupe::internal::auth {

inline constexpr uint32_t hello_magic = 0x41505254;     // "TRPA"
inline constexpr uint32_t challenge_magic = 0x43505254; // "TRPC"
inline constexpr uint8_t handshake_version = 1;
inline constexpr uint16_t hello_flag_tls = 1;

struct DialerHello {
  uint32_t magic = hello_magic;
  uint8_t version = handshake_version;
  uint8_t purpose = 0; ///< Purpose
  uint16_t flags = 0;  ///< hello_flag_tls when the dialer runs TROUPE_TLS=1
  int32_t dialer_rank = -1;
  int32_t acceptor_rank = -1; ///< the rank the dialer meant to reach
  int32_t dialer_pid = 0;     ///< for the acceptor's log only: not proven
  uint32_t reserved2 = 0;
  uint64_t spec_fingerprint = 0;
  Nonce nonce{};
};
static_assert(sizeof(DialerHello) == 64);

/// Why an acceptor refuses a hello before any proof. Said in the clear, so
/// that a process started with another TF_CONFIG learns why at once; the
/// dialer takes it as what the peer says, not as proven.
enum class HelloRefusal : uint32_t {
  none = 0,
  version = 1,     ///< another version of this handshake
  purpose = 2,     ///< it dialled the control port for the data plane or back
  rank = 3,        ///< the acceptor is not the rank the dialer meant to reach
  spec = 4,        ///< the cluster spec fingerprints differ
  tls = 5,         ///< one side runs TROUPE_TLS=1, the other not
};

struct AcceptorChallenge {
  uint32_t magic = challenge_magic;
  int32_t acceptor_rank = -1;
  uint32_t refusal = 0; ///< HelloRefusal; the nonce is zero unless `none`
  uint32_t reserved = 0;
  Nonce nonce{};
};
static_assert(sizeof(AcceptorChallenge) == 48);

enum class Verdict : uint32_t {
  accepted = 0,
  wrong_key = 1, ///< the dialer's proof failed: another cluster token
  refused = 2,   ///< proved, but this task does not take it (rank taken, or not one that dials here)
};

struct AcceptorVerdict {
  uint32_t verdict = 0; ///< Verdict
  Mac proof{};          ///< the acceptor's, when accepted; zeros otherwise
};
static_assert(sizeof(AcceptorVerdict) == 36);

/// The acceptor's side as a state machine without I/O, for an event loop
/// (the data plane's broker) and for the blocking accept_connection alike:
/// read DialerHello, send challenge(), read the proof, send verdict().
class AcceptorHandshake {
public:
  /// `tls`: whether this task runs TROUPE_TLS=1 (a dialer must agree).
  AcceptorHandshake(const Key& key, Purpose purpose, uint64_t spec_fingerprint, int rank, bool tls = false);

  /// The first bytes of a hello (its magic), checked before the rest is
  /// waited for: a peer that does not speak troupe is refused at once.
  static constexpr std::size_t opening_bytes = sizeof(uint32_t);
  /// "" when `bytes` (at least opening_bytes) open troupe's hello, else why not.
  [[nodiscard]] static std::string check_opening(std::span<const char> bytes);

  /// Takes the dialer's hello (exactly sizeof(DialerHello) bytes): "" when
  /// the exchange goes on with challenge(), else why the connection is
  /// closed (not troupe's handshake, another version, purpose, rank or
  /// spec). Unless refusal() is `none` too (the peer does not speak troupe),
  /// send challenge() before closing: it tells the dialer why.
  [[nodiscard]] std::string on_hello(std::span<const char> bytes);
  /// The challenge, or after a refused hello the refusal.
  [[nodiscard]] std::vector<char> challenge() const;
  /// Why on_hello refused the hello it took (`none` when it did not, or when
  /// it was not troupe's handshake).
  [[nodiscard]] HelloRefusal refusal() const noexcept { return refusal_; }
  /// Takes the dialer's proof (exactly mac_bytes bytes): whether it holds the key.
  [[nodiscard]] bool on_proof(std::span<const char> bytes) const;
  /// The last message; `accepted` carries this side's proof.
  [[nodiscard]] std::vector<char> verdict(Verdict verdict) const;

  /// The rank the dialer claims (valid after on_hello; proven after on_proof).
  [[nodiscard]] int dialer_rank() const noexcept { return transcript_.dialer_rank; }
  /// The pid the dialer states (valid after on_hello; never proven).
  [[nodiscard]] int dialer_pid() const noexcept { return dialer_pid_; }
  /// The cluster spec fingerprint the dialer states (valid after on_hello).
  [[nodiscard]] uint64_t dialer_spec_fingerprint() const noexcept { return dialer_spec_fingerprint_; }

private:
  Key key_;
  Purpose purpose_;
  Transcript transcript_;
  bool tls_;
  HelloRefusal refusal_ = HelloRefusal::none;
  int dialer_pid_ = 0;
  uint64_t dialer_spec_fingerprint_ = 0;
};

/// How the dialer's side of a handshake ended.
enum class DialEnd {
  proven,        ///< both sides proved the key
  unreachable,   ///< the connection failed or timed out, or the peer does not speak troupe: try again
  other_token,   ///< the peer says this process has another cluster token
  other_spec,    ///< the peer says this process has another cluster spec
  other_tls,     ///< the peer says this process's TROUPE_TLS differs
  refused,       ///< the peer refused this process for another reason (rank, version, purpose)
  impostor,      ///< the peer accepted but could not prove the key
};

struct DialOutcome {
  DialEnd end = DialEnd::proven;
  std::string why; ///< unless proven: what the peer did or did not do
};

/// Moves exactly `n` bytes to (`reading` false) or from the peer before
/// `deadline`: "" or why not. A plain socket's, or a TLS session's.
using HandshakeTransfer =
  std::function<std::string(void* data, std::size_t n, bool reading, std::chrono::steady_clock::time_point deadline)>;

/// The transfer of a connected non-blocking socket (poll, then recv or send).
[[nodiscard]] HandshakeTransfer socket_transfer(int fd);

/// Runs the dialer's side over `transfer` (blocking, each read and write
/// bounded by `deadline`), stating `pid` as this process's and `tls` as its
/// TROUPE_TLS.
[[nodiscard]] DialOutcome dial_handshake(const HandshakeTransfer& transfer,
                                         std::chrono::steady_clock::time_point deadline, const Key& key,
                                         Purpose purpose, uint64_t spec_fingerprint, int rank, int peer_rank, int pid,
                                         bool tls = false);

/// As above, on the connected socket `fd`.
[[nodiscard]] inline DialOutcome dial_handshake(int fd, std::chrono::steady_clock::time_point deadline,
                                                const Key& key, Purpose purpose, uint64_t spec_fingerprint, int rank,
                                                int peer_rank, int pid, bool tls = false) {
  return dial_handshake(socket_transfer(fd), deadline, key, purpose, spec_fingerprint, rank, peer_rank, pid, tls);
}

/// What the acceptor's refusal `refusal` tells the dialer (for its error).
[[nodiscard]] std::string describe(HelloRefusal refusal);

/// Runs the acceptor's side on the accepted socket `fd` (blocking, bounded by
/// `deadline`). `refusal` decides whether a dialer that proved the key may
/// join ("" = yes). Returns the dialer's rank, or why the connection is closed.
struct AcceptOutcome {
  std::optional<int> rank; ///< set when accepted
  std::string why;         ///< set when not
};
[[nodiscard]] AcceptOutcome accept_handshake(int fd, std::chrono::steady_clock::time_point deadline, const Key& key,
                                             Purpose purpose, uint64_t spec_fingerprint, int rank,
                                             const std::function<std::string(int dialer_rank)>& refusal);

} // namespace troupe::internal::auth

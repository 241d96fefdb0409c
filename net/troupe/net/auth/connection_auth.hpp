#pragma once

// The handshake that opens every authenticated troupe connection (internal:
// not installed), before any other byte is parsed. Four fixed-size messages:
//
//   dialer   -> acceptor  DialerHello       its rank, the rank it dialled, the
//                                           cluster spec, a fresh nonce (56 bytes)
//   acceptor -> dialer    AcceptorChallenge its rank and a fresh nonce (40 bytes)
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

struct DialerHello {
  uint32_t magic = hello_magic;
  uint8_t version = handshake_version;
  uint8_t purpose = 0; ///< Purpose
  uint16_t reserved = 0;
  int32_t dialer_rank = -1;
  int32_t acceptor_rank = -1; ///< the rank the dialer meant to reach
  uint64_t spec_fingerprint = 0;
  Nonce nonce{};
};
static_assert(sizeof(DialerHello) == 56);

struct AcceptorChallenge {
  uint32_t magic = challenge_magic;
  int32_t acceptor_rank = -1;
  Nonce nonce{};
};
static_assert(sizeof(AcceptorChallenge) == 40);

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
  AcceptorHandshake(const Key& key, Purpose purpose, uint64_t spec_fingerprint, int rank);

  /// Takes the dialer's hello (exactly sizeof(DialerHello) bytes): "" when
  /// the exchange goes on with challenge(), else why the connection is
  /// closed (not troupe's handshake, another purpose, another rank).
  [[nodiscard]] std::string on_hello(std::span<const char> bytes);
  [[nodiscard]] std::vector<char> challenge() const;
  /// Takes the dialer's proof (exactly mac_bytes bytes): whether it holds the key.
  [[nodiscard]] bool on_proof(std::span<const char> bytes) const;
  /// The last message; `accepted` carries this side's proof.
  [[nodiscard]] std::vector<char> verdict(Verdict verdict) const;

  /// The rank the dialer claims (valid after on_hello; proven after on_proof).
  [[nodiscard]] int dialer_rank() const noexcept { return transcript_.dialer_rank; }

private:
  Key key_;
  Purpose purpose_;
  Transcript transcript_;
};

/// Runs the dialer's side on the connected socket `fd` (blocking, each read
/// and write bounded by `deadline`): "" once both sides proved the key, else
/// why not, naming what the peer did or did not do.
[[nodiscard]] std::string dial_handshake(int fd, std::chrono::steady_clock::time_point deadline, const Key& key,
                                         Purpose purpose, uint64_t spec_fingerprint, int rank, int peer_rank);

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

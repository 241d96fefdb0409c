#pragma once

// The cryptography of troupe's connection handshakes (internal: not
// installed): keys derived from the cluster token, fresh nonces, and the
// HMAC proofs both sides of a connection exchange before any other byte is
// parsed. OpenSSL's primitives, nothing hand-written.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace troupe::internal::auth {

inline constexpr std::size_t key_bytes = 32;
inline constexpr std::size_t nonce_bytes = 32;
inline constexpr std::size_t mac_bytes = 32;

using Key = std::array<uint8_t, key_bytes>;
using Nonce = std::array<uint8_t, nonce_bytes>;
using Mac = std::array<uint8_t, mac_bytes>;

/// What a key is for: each use gets its own key, so that a proof made for
/// one can never pass for another.
/// What a key is for; each gets its own (HKDF info string).
/// tls: the pre-shared key of TROUPE_TLS=1 connections (net/tls).
enum class Purpose : uint8_t { control_plane = 1, data_plane = 2, tls = 3 };

/// Which side of a connection a proof comes from: a dialer's proof can never
/// pass for an acceptor's (no reflection).
enum class Role : uint8_t { dialer = 1, acceptor = 2 };

/// The key the tasks of a cluster prove they hold for `purpose`:
/// HKDF-SHA256 (RFC 5869) of the cluster token, salt "troupe v1", info naming
/// the purpose. The token itself never crosses the network.
[[nodiscard]] Key derive_key(std::string_view cluster_token, Purpose purpose);

/// 32 bytes from OpenSSL's CSPRNG; Error(internal) when it fails.
[[nodiscard]] Nonce fresh_nonce();

/// HMAC-SHA256 of `message` under `key`.
[[nodiscard]] Mac mac(const Key& key, std::span<const uint8_t> message);

/// Compares two proofs in constant time.
[[nodiscard]] bool equal(const Mac& a, const Mac& b) noexcept;

/// What one connection's proofs bind: the cluster spec, the ranks of both
/// ends, and a fresh nonce from each (so a recorded proof never passes again).
struct Transcript {
  uint64_t spec_fingerprint = 0;
  int32_t dialer_rank = -1;
  int32_t acceptor_rank = -1;
  Nonce dialer_nonce{};
  Nonce acceptor_nonce{};
};

/// `role`'s proof of holding `key` for `transcript`.
[[nodiscard]] Mac prove(const Key& key, Role role, const Transcript& transcript);

/// HKDF-SHA256 (RFC 5869) of `length` bytes; derive_key's primitive, exposed
/// for the RFC's test vectors. Error(internal) when OpenSSL fails.
[[nodiscard]] std::vector<uint8_t> hkdf_sha256(std::span<const uint8_t> input_key, std::span<const uint8_t> salt,
                                               std::span<const uint8_t> info, std::size_t length);

} // namespace troupe::internal::auth

#pragma once

// TLS for both planes when TROUPE_TLS=1 (internal: not installed). TLS 1.3
// with an external pre-shared key that HKDF derives from the cluster token
// (auth::Purpose::tls), in psk_dhe_ke mode: every connection gets fresh
// ECDHE keys (forward secrecy), and only a holder of the token completes the
// handshake, so no certificate, CA or key file is needed. It runs after
// troupe's own authentication handshake (net/auth), which still decides who
// may join and names a wrong token; TLS then encrypts and integrity-protects
// every byte, which also binds the connection to the token (a relay that
// passed troupe's handshake cannot read or change what follows).

#include <memory>

#include <openssl/types.h>

#include <troupe/net/auth/cluster_auth.hpp>

namespace troupe::internal {

/// One OpenSSL context for every TLS connection of this process, client and
/// server alike. Sessions hold it (shared_ptr) for as long as they live.
class TlsContext {
public:
  /// Error(internal) naming OpenSSL's error when it cannot be made.
  [[nodiscard]] static std::shared_ptr<TlsContext> make(const auth::Key& psk);

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  [[nodiscard]] SSL_CTX* native() const noexcept { return ctx_; }
  [[nodiscard]] const auth::Key& psk() const noexcept { return psk_; }

private:
  TlsContext(SSL_CTX* ctx, const auth::Key& psk) : ctx_(ctx), psk_(psk) {}

  SSL_CTX* ctx_;
  auth::Key psk_;
};

/// OpenSSL's queued errors as one line (and clears them).
[[nodiscard]] std::string openssl_errors();

} // namespace troupe::internal

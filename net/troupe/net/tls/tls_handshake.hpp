#pragma once

#include <chrono>
#include <string>

#include <openssl/types.h>

#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/tls/tls_context.hpp>

namespace troupe::internal {

/// A TLS handshake on a non-blocking socket, driven by its caller: the gate's
/// poll loop (server side of the control plane), or tls_connect. Both sides
/// complete it before CAF sees the connection, each within a deadline. A
/// client accepts only a server that used the cluster's key: OpenSSL would
/// otherwise let a TLS 1.3 server ignore the offered key and show any
/// certificate, which the client must refuse.
class TlsHandshake {
public:
  enum class Role { client, server };
  enum class Step { done, want_read, want_write, failed };

  /// Error(internal) when OpenSSL cannot make the session.
  TlsHandshake(const TlsContext& context, int fd, Role role);
  ~TlsHandshake();
  TlsHandshake(const TlsHandshake&) = delete;
  TlsHandshake& operator=(const TlsHandshake&) = delete;

  /// Advances as far as the socket allows: done, what it waits for, or
  /// failed with `why` (for the log; names the likely cause).
  [[nodiscard]] Step advance(std::string& why);
  /// The established session, now the caller's (after `done`).
  [[nodiscard]] SSL* release() noexcept;

private:
  SSL* ssl_;
  Role role_;
};

/// Runs the client's side on the connected non-blocking socket `fd`,
/// blocking until done or `deadline`: the session (the caller owns it), or
/// nullptr and why not.
[[nodiscard]] SSL* tls_connect(const TlsContext& context, int fd, std::chrono::steady_clock::time_point deadline,
                               std::string& why);

/// Moves bytes through the established `ssl` (on the non-blocking socket
/// `fd`) for troupe's handshake, blocking with poll until each transfer is
/// done or its deadline: the data plane's dialer runs troupe's handshake
/// inside TLS.
[[nodiscard]] auth::HandshakeTransfer tls_transfer(SSL* ssl, int fd);

/// An established session on its way to the broker that adopts it (the
/// data plane's dialer hands it over in a message); freed if none does.
class TlsHandoff {
public:
  explicit TlsHandoff(SSL* ssl) noexcept : ssl_(ssl) {}
  ~TlsHandoff();
  TlsHandoff(const TlsHandoff&) = delete;
  TlsHandoff& operator=(const TlsHandoff&) = delete;
  /// The session, now the caller's.
  [[nodiscard]] SSL* release() noexcept {
    SSL* out = ssl_;
    ssl_ = nullptr;
    return out;
  }

private:
  SSL* ssl_;
};

} // namespace troupe::internal

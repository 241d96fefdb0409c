#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <openssl/types.h>

#include <caf/io/network/native_socket.hpp>
#include <caf/io/network/rw_state.hpp>

#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/tls/tls_context.hpp>

namespace troupe::internal {

/// One TLS connection over a non-blocking socket, as the read/write policy
/// of CAF's stream (caf::io::network::stream_impl<TlsSession>): what CAF
/// writes is encrypted, what it reads decrypted. The handshake starts in the
/// constructor (a client sends its hello at once, since the server speaks
/// only when spoken to) and finishes inside later reads and writes, on the
/// middleman's I/O thread, as CAF's OpenSSL module does it.
class TlsSession {
public:
  enum class Role { client, server };

  /// Error(internal) when OpenSSL cannot make the session.
  TlsSession(std::shared_ptr<TlsContext> context, caf::io::network::native_socket fd, Role role);
  /// Takes `established`, a session whose handshake completed (tls_connect).
  TlsSession(std::shared_ptr<TlsContext> context, SSL* established);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // -- the policy CAF's stream calls -------------------------------------------

  caf::io::network::rw_state read_some(std::size_t& result, caf::io::network::native_socket fd, void* buf,
                                       std::size_t len);
  caf::io::network::rw_state write_some(std::size_t& result, caf::io::network::native_socket fd,
                                        const void* buf, std::size_t len);
  /// Whether decrypted bytes wait inside OpenSSL (the socket may have none left).
  bool must_read_more(caf::io::network::native_socket fd, std::size_t threshold);

private:
  caf::io::network::rw_state transfer(bool reading, std::size_t& result, void* buf, std::size_t len);

  std::shared_ptr<TlsContext> context_;
  SSL* ssl_;
  bool handshaking_ = true;
  bool failed_ = false; ///< the handshake failed: every later call reports failure
};

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

/// Runs the client's side of the TLS handshake on the connected non-blocking
/// socket `fd`, blocking until done or `deadline`: the session (the caller
/// owns it), or nullptr and why not. For the data plane's dialer, which
/// then runs troupe's handshake inside TLS (tls_transfer) and hands the
/// session to its broker.
[[nodiscard]] SSL* tls_connect(const TlsContext& context, int fd, std::chrono::steady_clock::time_point deadline,
                               std::string& why);

/// Moves bytes through `ssl` (on the non-blocking socket `fd`) for troupe's
/// handshake, blocking with poll until each transfer is done or its deadline.
[[nodiscard]] auth::HandshakeTransfer tls_transfer(SSL* ssl, int fd);

} // namespace troupe::internal

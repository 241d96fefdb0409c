#pragma once

#include <cstddef>
#include <memory>

#include <openssl/types.h>

#include <caf/io/network/native_socket.hpp>
#include <caf/io/network/rw_state.hpp>

#include <troupe/net/tls/tls_context.hpp>

namespace troupe::internal {

/// One TLS connection over a non-blocking socket, as the read/write policy
/// of CAF's stream (caf::io::network::stream_impl<TlsSession>): what CAF
/// writes is encrypted, what it reads decrypted, on the middleman's I/O
/// thread. Either over a session whose handshake completed before CAF got
/// the socket (TlsHandshake, tls_connect), or as the server of a connection
/// CAF accepted (the data plane's TlsDoorman): that handshake then finishes
/// inside the reads, since the broker reads first (troupe's handshake) and
/// only answers what it read; its deadline is the broker's handshake deadline.
class TlsSession {
public:
  /// The server side of the connection on `fd`. Never throws: a session
  /// OpenSSL cannot make fails the first read or write, closing the connection.
  TlsSession(std::shared_ptr<TlsContext> context, caf::io::network::native_socket fd);
  /// Takes `established`, a session whose handshake completed.
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
  bool failed_ = false; ///< every later call reports failure
};

} // namespace troupe::internal

#include <troupe/net/tls/tls_session.hpp>

#include <string>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <caf/io/network/native_socket.hpp>

#include <troupe/core/log.hpp>
#include <troupe/net/auth/refusal_log.hpp>
#include <troupe/net/tls/sigpipe_block.hpp>

namespace troupe::internal {

namespace {

using caf::io::network::rw_state;

std::string peer_of(SSL* ssl) {
  const auto host = caf::io::network::remote_addr_of_fd(SSL_get_fd(ssl));
  const auto port = caf::io::network::remote_port_of_fd(SSL_get_fd(ssl));
  return (host ? *host : std::string("?")) + ":" + std::to_string(port ? *port : 0);
}

} // namespace

TlsSession::TlsSession(std::shared_ptr<TlsContext> context, caf::io::network::native_socket fd)
  : context_(std::move(context)), ssl_(SSL_new(context_->native())) {
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd) != 1) {
    TROUPE_LOG(error, "net") << "TLS: cannot start a session (" << openssl_errors() << "); closing the connection";
    failed_ = true;
    return;
  }
  SSL_set_accept_state(ssl_);
}

TlsSession::TlsSession(std::shared_ptr<TlsContext> context, SSL* established)
  : context_(std::move(context)), ssl_(established), handshaking_(false) {}

TlsSession::~TlsSession() {
  SSL_free(ssl_);
}

rw_state TlsSession::transfer(bool reading, std::size_t& result, void* buf, std::size_t len) {
  result = 0;
  if (failed_)
    return rw_state::failure;
  SigpipeBlock block;
  auto on_error = [&](int ret) {
    switch (SSL_get_error(ssl_, ret)) {
      case SSL_ERROR_WANT_READ:
      case SSL_ERROR_WANT_WRITE:
        // Nothing moved; CAF polls the socket again. A write of nothing
        // reports indeterminate, so that CAF keeps the bytes it has.
        return !reading && len == 0 ? rw_state::indeterminate : rw_state::success;
      case SSL_ERROR_ZERO_RETURN: // the peer closed
      case SSL_ERROR_SYSCALL:     // the connection went down
        ERR_clear_error();
        return rw_state::failure;
      default:
        if (refusal_log_allowed()) {
          if (handshaking_)
            TROUPE_LOG(warning, "net") << "TLS: closed the connection from " << peer_of(ssl_)
                                       << ": its TLS handshake failed (" << openssl_errors()
                                       << "); is it a task started with TROUPE_TLS=1 and the same "
                                          "TROUPE_CLUSTER_TOKEN?";
          else
            TROUPE_LOG(error, "net") << "TLS: closed the connection with " << peer_of(ssl_)
                                     << ": a record failed (" << openssl_errors()
                                     << "): its bytes were changed on the way, or the peer is broken";
        }
        ERR_clear_error();
        failed_ = true;
        return rw_state::failure;
    }
  };
  ERR_clear_error(); // an error another call left must not read as this one's
  if (handshaking_) {
    const int ret = SSL_do_handshake(ssl_);
    if (ret != 1)
      return on_error(ret);
    handshaking_ = false;
  }
  if (len == 0)
    return rw_state::indeterminate;
  std::size_t moved = 0;
  const int ret = reading ? SSL_read_ex(ssl_, buf, len, &moved) : SSL_write_ex(ssl_, buf, len, &moved);
  if (ret != 1)
    return on_error(ret);
  result = moved;
  return rw_state::success;
}

rw_state TlsSession::read_some(std::size_t& result, caf::io::network::native_socket, void* buf, std::size_t len) {
  return transfer(true, result, buf, len);
}

rw_state TlsSession::write_some(std::size_t& result, caf::io::network::native_socket, const void* buf,
                                std::size_t len) {
  return transfer(false, result, const_cast<void*>(buf), len);
}

bool TlsSession::must_read_more(caf::io::network::native_socket, std::size_t threshold) {
  return ssl_ != nullptr && static_cast<std::size_t>(SSL_pending(ssl_)) >= threshold;
}

} // namespace troupe::internal

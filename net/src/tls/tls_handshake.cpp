#include <troupe/net/tls/tls_handshake.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <poll.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <troupe/core/errors.hpp>
#include <troupe/net/tls/sigpipe_block.hpp>

namespace troupe::internal {

namespace {

// A server that shows a certificate did not use the cluster's key.
int refuse_certificates(int, X509_STORE_CTX*) {
  return 0;
}

// Waits until `fd` is ready for `step` or `deadline`: "" or why not.
std::string await_socket(int fd, TlsHandshake::Step step, std::chrono::steady_clock::time_point deadline) {
  const auto left =
    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  if (left <= 0)
    return "it did not answer in time";
  pollfd p{fd, static_cast<short>(step == TlsHandshake::Step::want_write ? POLLOUT : POLLIN), 0};
  // At most a second per poll: a huge deadline must not overflow poll's int.
  if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR)
    return std::string("poll failed: ") + std::strerror(errno);
  return {};
}

} // namespace

TlsHandshake::TlsHandshake(const TlsContext& context, int fd, Role role)
  : ssl_(SSL_new(context.native())), role_(role) {
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd) != 1) {
    SSL_free(ssl_);
    fail(Errc::internal, "cannot start TLS on a connection: " + openssl_errors());
  }
  if (role == Role::client) {
    SSL_set_verify(ssl_, SSL_VERIFY_PEER, refuse_certificates);
    SSL_set_connect_state(ssl_);
  } else {
    SSL_set_accept_state(ssl_);
  }
}

TlsHandshake::~TlsHandshake() {
  SSL_free(ssl_);
}

TlsHandshake::Step TlsHandshake::advance(std::string& why) {
  SigpipeBlock block;
  ERR_clear_error(); // an error another call left must not read as this one's
  const int ret = SSL_do_handshake(ssl_);
  if (ret == 1) {
    // The key is the only credential: a session that did not use it is an impostor's.
    if (role_ == Role::client && SSL_session_reused(ssl_) != 1) {
      why = "the peer finished TLS without the cluster's key: it is not a task of this cluster";
      return Step::failed;
    }
    return Step::done;
  }
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ: return Step::want_read;
    case SSL_ERROR_WANT_WRITE: return Step::want_write;
    case SSL_ERROR_ZERO_RETURN:
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      why = "it closed the connection during the TLS handshake";
      return Step::failed;
    default:
      why = "the TLS handshake failed (" + openssl_errors()
            + "): is the peer a task started with TROUPE_TLS=1 and the same TROUPE_CLUSTER_TOKEN?";
      return Step::failed;
  }
}

SSL* TlsHandshake::release() noexcept {
  SSL* out = ssl_;
  ssl_ = nullptr;
  return out;
}

TlsHandoff::~TlsHandoff() {
  SSL_free(ssl_);
}

SSL* tls_connect(const TlsContext& context, int fd, std::chrono::steady_clock::time_point deadline,
                 std::string& why) {
  try {
    TlsHandshake handshake(context, fd, TlsHandshake::Role::client);
    for (;;) {
      const auto step = handshake.advance(why);
      if (step == TlsHandshake::Step::done)
        return handshake.release();
      if (step == TlsHandshake::Step::failed)
        return nullptr;
      if (why = await_socket(fd, step, deadline); !why.empty()) {
        why = "the TLS handshake: " + why;
        return nullptr;
      }
    }
  } catch (const std::exception& e) { // OpenSSL could not make the session
    why = e.what();
    return nullptr;
  }
}

auth::HandshakeTransfer tls_transfer(SSL* ssl, int fd) {
  return [ssl, fd](void* data, std::size_t n, bool reading, std::chrono::steady_clock::time_point deadline) {
    SigpipeBlock block;
    auto* at = static_cast<char*>(data);
    while (n > 0) {
      std::size_t moved = 0;
      ERR_clear_error();
      const int ret = reading ? SSL_read_ex(ssl, at, n, &moved) : SSL_write_ex(ssl, at, n, &moved);
      if (ret == 1) {
        at += moved;
        n -= moved;
        continue;
      }
      const int error = SSL_get_error(ssl, ret);
      if (error == SSL_ERROR_ZERO_RETURN || error == SSL_ERROR_SYSCALL) {
        ERR_clear_error();
        return std::string("it closed the connection");
      }
      if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE)
        return "a TLS record failed (" + openssl_errors() + ")";
      const auto step = error == SSL_ERROR_WANT_WRITE ? TlsHandshake::Step::want_write : TlsHandshake::Step::want_read;
      if (auto why = await_socket(fd, step, deadline); !why.empty())
        return why;
    }
    return std::string{};
  };
}

} // namespace troupe::internal

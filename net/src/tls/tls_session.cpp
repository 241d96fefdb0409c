#include <troupe/net/tls/tls_session.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <string>

#include <poll.h>
#include <pthread.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <caf/io/network/native_socket.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

using caf::io::network::rw_state;

// OpenSSL writes to the socket with write(): a peer that went away would
// raise SIGPIPE and end the process. Blocked for the call, and a pending
// one discarded, as CAF's OpenSSL module does (no process-wide handler).
class SigpipeBlock {
public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &saved_);
  }
  ~SigpipeBlock() {
    timespec zero{};
    sigtimedwait(&pipe_, nullptr, &zero);
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

private:
  sigset_t pipe_;
  sigset_t saved_;
};

} // namespace

TlsSession::TlsSession(std::shared_ptr<TlsContext> context, caf::io::network::native_socket fd, Role role)
  : context_(std::move(context)), ssl_(SSL_new(context_->native())) {
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd) != 1) {
    SSL_free(ssl_);
    fail(Errc::internal, "cannot start TLS on a connection: " + openssl_errors());
  }
  if (role == Role::client)
    SSL_set_connect_state(ssl_);
  else
    SSL_set_accept_state(ssl_);
  // A client's hello goes out now; a peer that already failed the
  // handshake fails the first read or write, which closes the connection.
  std::size_t ignored = 0;
  failed_ = transfer(false, ignored, nullptr, 0) == rw_state::failure;
}

TlsSession::TlsSession(std::shared_ptr<TlsContext> context, SSL* established)
  : context_(std::move(context)), ssl_(established), handshaking_(false) {}

TlsSession::~TlsSession() {
  SSL_free(ssl_);
}

rw_state TlsSession::transfer(bool reading, std::size_t& result, void* buf, std::size_t len) {
  SigpipeBlock block;
  result = 0;
  if (failed_)
    return rw_state::failure;
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
      default: {
        const auto peer = caf::io::network::remote_addr_of_fd(SSL_get_fd(ssl_));
        const auto port = caf::io::network::remote_port_of_fd(SSL_get_fd(ssl_));
        TROUPE_LOG(warning, "net") << "TLS: closed the connection with " << (peer ? *peer : std::string("?"))
                                   << ":" << (port ? *port : 0) << " (" << openssl_errors()
                                   << "): is the peer a task started with TROUPE_TLS=1 and the same "
                                      "TROUPE_CLUSTER_TOKEN?";
        failed_ = true;
        return rw_state::failure;
      }
    }
  };
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
  return static_cast<std::size_t>(SSL_pending(ssl_)) >= threshold;
}

namespace {

// Waits until `fd` is ready for what OpenSSL asked (`error`, WANT_READ or
// WANT_WRITE) or `deadline`: "" or why not.
std::string await_socket(int fd, int error, std::chrono::steady_clock::time_point deadline) {
  const auto left =
    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  if (left <= 0)
    return "it did not answer in time";
  pollfd p{fd, static_cast<short>(error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
  // At most a second per poll: a huge deadline must not overflow poll's int.
  if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR)
    return std::string("poll failed: ") + std::strerror(errno);
  return {};
}

} // namespace

TlsHandoff::~TlsHandoff() {
  SSL_free(ssl_);
}

SSL* tls_connect(const TlsContext& context, int fd, std::chrono::steady_clock::time_point deadline,
                 std::string& why) {
  SigpipeBlock block;
  SSL* ssl = SSL_new(context.native());
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    why = "cannot start TLS: " + openssl_errors();
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_connect_state(ssl);
  for (;;) {
    const int ret = SSL_do_handshake(ssl);
    if (ret == 1)
      return ssl;
    const int error = SSL_get_error(ssl, ret);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
      why = "the TLS handshake failed (" + openssl_errors()
            + "): is the peer started with TROUPE_TLS=1 and the same TROUPE_CLUSTER_TOKEN?";
      SSL_free(ssl);
      return nullptr;
    }
    if (why = await_socket(fd, error, deadline); !why.empty()) {
      why = "the TLS handshake: " + why;
      SSL_free(ssl);
      return nullptr;
    }
  }
}

auth::HandshakeTransfer tls_transfer(SSL* ssl, int fd) {
  return [ssl, fd](void* data, std::size_t n, bool reading, std::chrono::steady_clock::time_point deadline) {
    SigpipeBlock block;
    auto* at = static_cast<char*>(data);
    while (n > 0) {
      std::size_t moved = 0;
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
        return "TLS failed: " + openssl_errors();
      if (auto why = await_socket(fd, error, deadline); !why.empty())
        return why;
    }
    return std::string{};
  };
}

} // namespace troupe::internal

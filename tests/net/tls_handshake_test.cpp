// TLS handshakes over a socket pair: the cluster's key opens them, nothing
// else does, and a client never accepts a server that skipped the key.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <troupe/net/tls/tls_handshake.hpp>

using namespace troupe::internal;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::shared_ptr<TlsContext> context_of(const std::string& token) {
  return TlsContext::make(auth::derive_key(token, auth::Purpose::tls));
}

/// A connected pair of non-blocking stream sockets.
struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0); }
  ~SocketPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
};

/// Drives `handshake` until it ends or 10 s pass: whether it completed.
bool run_server(TlsHandshake& handshake, int fd, std::string& why) {
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline) {
    const auto step = handshake.advance(why);
    if (step == TlsHandshake::Step::done)
      return true;
    if (step == TlsHandshake::Step::failed)
      return false;
    pollfd p{fd, static_cast<short>(step == TlsHandshake::Step::want_write ? POLLOUT : POLLIN), 0};
    ::poll(&p, 1, 100);
  }
  why = "timed out";
  return false;
}

/// A TLS 1.3 server context with a throwaway self-signed certificate and no
/// pre-shared key: what an impostor between two tasks would run.
SSL_CTX* certificate_only_server() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  REQUIRE(key != nullptr);
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("impostor"), -1, -1, 0);
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  REQUIRE(X509_sign(cert, key, EVP_sha256()) > 0);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  REQUIRE(SSL_CTX_use_certificate(ctx, cert) == 1);
  REQUIRE(SSL_CTX_use_PrivateKey(ctx, key) == 1);
  X509_free(cert);
  EVP_PKEY_free(key);
  return ctx;
}

} // namespace

TEST_CASE("a TLS handshake completes with the cluster's key and fails with another", "[net][tls]") {
  const auto right = context_of("secret");
  for (const auto& [client_token, completes] : {std::pair{std::string("secret"), true},
                                                std::pair{std::string("another"), false}}) {
    CAPTURE(client_token);
    SocketPair pair;
    TlsHandshake server(*right, pair.fds[1], TlsHandshake::Role::server);
    std::string server_why;
    bool server_done = false;
    std::thread serving([&] { server_done = run_server(server, pair.fds[1], server_why); });
    std::string why;
    SSL* ssl = tls_connect(*context_of(client_token), pair.fds[0], Clock::now() + 10s, why);
    TlsHandoff session(ssl);
    if (!completes)
      ::shutdown(pair.fds[0], SHUT_RDWR); // the server must not wait out its 10 s
    serving.join();
    CHECK((ssl != nullptr) == completes);
    CHECK(server_done == completes);
    TlsHandoff server_session(server_done ? server.release() : nullptr);
    if (!completes)
      CHECK_THAT(why, Catch::Contains("TLS handshake failed") || Catch::Contains("closed the connection"));
  }
}

TEST_CASE("a TLS client refuses a server that shows a certificate instead of using the cluster's key",
          "[net][tls]") {
  // OpenSSL lets a TLS 1.3 server ignore the offered key and authenticate
  // with any certificate: a relay that passed troupe's handshake in clear
  // would then speak BASP to the dialer. The client must end the handshake.
  SocketPair pair;
  SSL_CTX* impostor_ctx = certificate_only_server();
  SSL* impostor = SSL_new(impostor_ctx);
  SSL_set_fd(impostor, pair.fds[1]);
  SSL_set_accept_state(impostor);
  std::thread serving([&] {
    const auto deadline = Clock::now() + 10s;
    while (Clock::now() < deadline) {
      const int ret = SSL_do_handshake(impostor);
      const int error = SSL_get_error(impostor, ret);
      if (ret == 1 || (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE))
        return;
      pollfd p{pair.fds[1], static_cast<short>(error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
      ::poll(&p, 1, 100);
    }
  });
  std::string why;
  SSL* ssl = tls_connect(*context_of("secret"), pair.fds[0], Clock::now() + 10s, why);
  TlsHandoff session(ssl);
  ::shutdown(pair.fds[0], SHUT_RDWR);
  serving.join();
  SSL_free(impostor);
  SSL_CTX_free(impostor_ctx);
  CHECK(ssl == nullptr);
  INFO(why);
  CHECK((why.find("certificate verify failed") != std::string::npos
         || why.find("without the cluster's key") != std::string::npos));
}

#include <troupe/net/tls/tls_context.hpp>

#include <cstring>
#include <string>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

namespace {

// The one identity every task uses: the key, not the name, is the secret.
constexpr const char* psk_identity = "troupe cluster v1";
// TLS_AES_128_GCM_SHA256: its hash (SHA-256) fits the 32-byte key.
const unsigned char tls13_aes128gcmsha256[] = {0x13, 0x01};

const TlsContext& context_of(SSL* ssl) {
  return *static_cast<const TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
}

// A session that carries the pre-shared key, as OpenSSL wants it for TLS 1.3.
SSL_SESSION* psk_session(SSL* ssl) {
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, tls13_aes128gcmsha256);
  if (cipher == nullptr)
    return nullptr;
  SSL_SESSION* session = SSL_SESSION_new();
  const auto& key = context_of(ssl).psk();
  if (session == nullptr || SSL_SESSION_set1_master_key(session, key.data(), key.size()) != 1
      || SSL_SESSION_set_cipher(session, cipher) != 1
      || SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(session);
    return nullptr;
  }
  return session;
}

int use_psk(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* id_len, SSL_SESSION** session) {
  *session = psk_session(ssl);
  if (*session == nullptr)
    return 0; // fails the handshake
  if (md != nullptr && SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(*session)) != md) {
    SSL_SESSION_free(*session);
    *session = nullptr;
    return 0;
  }
  *id = reinterpret_cast<const unsigned char*>(psk_identity);
  *id_len = std::strlen(psk_identity);
  return 1;
}

int find_psk(SSL* ssl, const unsigned char* id, size_t id_len, SSL_SESSION** session) {
  *session = nullptr;
  if (id_len != std::strlen(psk_identity) || std::memcmp(id, psk_identity, id_len) != 0)
    return 1; // no such identity: the handshake fails for want of a certificate
  *session = psk_session(ssl);
  return *session != nullptr ? 1 : 0;
}

} // namespace

std::string openssl_errors() {
  std::string out;
  while (const auto e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "no error queued" : out;
}

std::shared_ptr<TlsContext> TlsContext::make(const auth::Key& psk) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  auto failed = [&](const char* what) {
    const auto why = openssl_errors();
    SSL_CTX_free(ctx);
    fail(Errc::internal, std::string("cannot set up TLS (TROUPE_TLS=1): ") + what + ": " + why);
  };
  if (ctx == nullptr)
    failed("SSL_CTX_new");
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1)
    failed("TLS 1.3 is not available");
  if (SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") != 1)
    failed("TLS_AES_128_GCM_SHA256 is not available");
  // The key is the only credential: no certificates, no session tickets
  // (every connection runs a full ECDHE handshake), a peer's EOF without
  // close_notify reads as a closed connection, and writes may go out in
  // parts (CAF's stream resumes them from where they stopped).
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_psk_use_session_callback(ctx, use_psk);
  SSL_CTX_set_psk_find_session_callback(ctx, find_psk);
  std::shared_ptr<TlsContext> out(new TlsContext(ctx, psk));
  SSL_CTX_set_app_data(ctx, out.get());
  return out;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
}

} // namespace troupe::internal

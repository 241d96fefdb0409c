#include <troupe/net/auth/cluster_auth.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <troupe/core/errors.hpp>

namespace troupe::internal::auth {

namespace {

std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

// OSSL_PARAM takes non-const pointers for input it only reads.
void* in(std::span<const uint8_t> bytes) {
  return const_cast<uint8_t*>(bytes.data());
}

void append(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

} // namespace

std::vector<uint8_t> hkdf_sha256(std::span<const uint8_t> input_key, std::span<const uint8_t> salt,
                                 std::span<const uint8_t> info, std::size_t length) {
  std::unique_ptr<EVP_KDF, decltype(&EVP_KDF_free)> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr), EVP_KDF_free);
  if (!kdf)
    fail(Errc::internal, "OpenSSL has no HKDF (EVP_KDF_fetch failed)");
  std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> ctx(EVP_KDF_CTX_new(kdf.get()), EVP_KDF_CTX_free);
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {
    OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, in(input_key), input_key.size()),
    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, in(salt), salt.size()),
    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, in(info), info.size()),
    OSSL_PARAM_construct_end(),
  };
  std::vector<uint8_t> out(length);
  if (!ctx || EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1)
    fail(Errc::internal, "OpenSSL's HKDF failed");
  return out;
}

Key derive_key(std::string_view cluster_token, Purpose purpose) {
  const std::string_view info = purpose == Purpose::control_plane ? "troupe control plane auth"
                                : purpose == Purpose::data_plane  ? "troupe data plane auth"
                                                                  : "troupe tls psk";
  const auto derived = hkdf_sha256(bytes_of(cluster_token), bytes_of("troupe v1"), bytes_of(info), key_bytes);
  Key key;
  std::copy(derived.begin(), derived.end(), key.begin());
  return key;
}

Nonce fresh_nonce() {
  Nonce nonce;
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1)
    fail(Errc::internal, "OpenSSL's random generator failed (RAND_bytes)");
  return nonce;
}

Mac mac(const Key& key, std::span<const uint8_t> message) {
  Mac out;
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), message.data(), message.size(), out.data(),
           &length) == nullptr
      || length != out.size())
    fail(Errc::internal, "OpenSSL's HMAC-SHA256 failed");
  return out;
}

bool equal(const Mac& a, const Mac& b) noexcept {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Mac prove(const Key& key, Role role, const Transcript& transcript) {
  std::vector<uint8_t> message;
  const std::string_view label = role == Role::dialer ? "troupe v1 dialer" : "troupe v1 acceptor";
  message.insert(message.end(), label.begin(), label.end());
  append(message, transcript.spec_fingerprint, 8);
  append(message, static_cast<uint32_t>(transcript.dialer_rank), 4);
  append(message, static_cast<uint32_t>(transcript.acceptor_rank), 4);
  message.insert(message.end(), transcript.dialer_nonce.begin(), transcript.dialer_nonce.end());
  message.insert(message.end(), transcript.acceptor_nonce.begin(), transcript.acceptor_nonce.end());
  return mac(key, message);
}

} // namespace troupe::internal::auth

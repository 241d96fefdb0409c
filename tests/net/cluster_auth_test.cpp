// The handshakes' cryptography (net/auth/cluster_auth.hpp): OpenSSL's HKDF
// and HMAC against their RFCs' test vectors, and proofs bound to everything
// a connection's transcript holds.

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <troupe/net/auth/cluster_auth.hpp>

using namespace troupe::internal::auth;

namespace {

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<uint8_t> bytes(const std::string& text) {
  return {text.begin(), text.end()};
}

Transcript sample_transcript() {
  Transcript t;
  t.spec_fingerprint = 0x0123456789abcdefULL;
  t.dialer_rank = 2;
  t.acceptor_rank = 0;
  t.dialer_nonce.fill(0x11);
  t.acceptor_nonce.fill(0x22);
  return t;
}

} // namespace

TEST_CASE("HKDF-SHA256 gives RFC 5869's test case 1", "[net][auth]") {
  const auto ikm = std::vector<uint8_t>(22, 0x0b);
  const auto salt = from_hex("000102030405060708090a0b0c");
  const auto info = from_hex("f0f1f2f3f4f5f6f7f8f9");
  CHECK(hkdf_sha256(ikm, salt, info, 42)
        == from_hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"));
}

TEST_CASE("HMAC-SHA256 gives RFC 4231's test case 2", "[net][auth]") {
  // A key shorter than SHA-256's block is padded with zeros: "Jefe" and
  // "Jefe" followed by zeros are the same HMAC key.
  Key key{};
  const std::string jefe = "Jefe";
  std::copy(jefe.begin(), jefe.end(), key.begin());
  const auto expected = from_hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const Mac got = mac(key, bytes("what do ya want for nothing?"));
  CHECK(std::vector<uint8_t>(got.begin(), got.end()) == expected);
}

TEST_CASE("the keys stay what every troupe build derives", "[net][auth]") {
  // Computed independently (Python's hmac, RFC 5869): a change of salt or
  // info would split builds that must talk to each other.
  const Key data = derive_key("secret", Purpose::data_plane);
  const Key control = derive_key("secret", Purpose::control_plane);
  CHECK(std::vector<uint8_t>(data.begin(), data.end())
        == from_hex("a4bb1aed655087f69f5eaed032c473bd32de24672e6cf09aa96663367807b922"));
  CHECK(std::vector<uint8_t>(control.begin(), control.end())
        == from_hex("730522492e407a0babc4f04910fabd6007aa2f5634c6f840c6467da905561be4"));
}

TEST_CASE("each purpose and each token has its own key", "[net][auth]") {
  CHECK(derive_key("secret", Purpose::control_plane) == derive_key("secret", Purpose::control_plane));
  CHECK(derive_key("secret", Purpose::control_plane) != derive_key("secret", Purpose::data_plane));
  CHECK(derive_key("secret", Purpose::data_plane) != derive_key("Secret", Purpose::data_plane));
  CHECK(derive_key("", Purpose::data_plane) != derive_key("secret", Purpose::data_plane));
}

TEST_CASE("a proof binds its side, the spec, both ranks and both nonces", "[net][auth]") {
  const Key key = derive_key("secret", Purpose::data_plane);
  const Transcript t = sample_transcript();
  const Mac dialer = prove(key, Role::dialer, t);
  CHECK(equal(dialer, prove(key, Role::dialer, t)));
  CHECK_FALSE(equal(dialer, prove(key, Role::acceptor, t)));
  CHECK_FALSE(equal(dialer, prove(derive_key("other", Purpose::data_plane), Role::dialer, t)));
  auto changed = [&](auto edit) {
    Transcript other = t;
    edit(other);
    return !equal(dialer, prove(key, Role::dialer, other));
  };
  CHECK(changed([](Transcript& x) { x.spec_fingerprint ^= 1; }));
  CHECK(changed([](Transcript& x) { x.dialer_rank = 3; }));
  CHECK(changed([](Transcript& x) { x.acceptor_rank = 1; }));
  CHECK(changed([](Transcript& x) { x.dialer_nonce[31] ^= 1; }));
  CHECK(changed([](Transcript& x) { x.acceptor_nonce[0] ^= 1; }));
}

TEST_CASE("nonces do not repeat", "[net][auth]") {
  const Nonce a = fresh_nonce();
  const Nonce b = fresh_nonce();
  CHECK(a != b);
  CHECK(a != Nonce{});
}

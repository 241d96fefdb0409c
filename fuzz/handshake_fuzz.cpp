// The connection handshake (net/auth/connection_auth.hpp) on bytes from a
// stranger, from both ends. The first input byte picks the end:
//   even: the acceptor takes the rest as what a dialer sends: the opening
//         magic, a DialerHello, then a proof;
//   odd:  the dialer (dial_handshake) reads the rest as what an acceptor
//         answers: an AcceptorChallenge, then an AcceptorVerdict.
// Neither may crash or accept a peer that does not hold the key.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include <troupe/net/auth/cluster_auth.hpp>
#include <troupe/net/auth/connection_auth.hpp>

using namespace troupe::internal;

namespace {

constexpr uint64_t spec_fingerprint = 0x5452505346555a5aULL;
constexpr int acceptor_rank = 0;
constexpr int dialer_rank = 1;

const auth::Key& key() {
  static const auth::Key k = auth::derive_key("fuzz-cluster-token-0123456789", auth::Purpose::data_plane);
  return k;
}

void accept(std::span<const char> in) {
  auth::AcceptorHandshake acceptor(key(), auth::Purpose::data_plane, spec_fingerprint, acceptor_rank);
  if (in.size() < auth::AcceptorHandshake::opening_bytes)
    return;
  if (!auth::AcceptorHandshake::check_opening(in.first(auth::AcceptorHandshake::opening_bytes)).empty())
    return;
  if (in.size() < sizeof(auth::DialerHello))
    return;
  const bool went_on = acceptor.on_hello(in.first(sizeof(auth::DialerHello))).empty();
  (void) acceptor.challenge();
  in = in.subspan(sizeof(auth::DialerHello));
  if (!went_on || in.size() < auth::mac_bytes)
    return;
  // The challenge's nonce is fresh, so no fixed input can know the proof.
  if (acceptor.on_proof(in.first(auth::mac_bytes)))
    std::abort();
  (void) acceptor.verdict(auth::Verdict::wrong_key);
}

void dial(std::span<const char> in) {
  auto transfer = [&in](void* data, std::size_t n, bool reading, std::chrono::steady_clock::time_point) {
    if (!reading)
      return std::string{};
    if (in.size() < n)
      return std::string("the connection closed");
    std::memcpy(data, in.data(), n);
    in = in.subspan(n);
    return std::string{};
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const auto outcome = auth::dial_handshake(transfer, deadline, key(), auth::Purpose::data_plane, spec_fingerprint,
                                            dialer_rank, acceptor_rank, 4242);
  // The acceptor's proof covers the dialer's fresh nonce: none can be forged.
  if (outcome.end == auth::DialEnd::proven)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::span<const char> rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    accept(rest);
  else
    dial(rest);
  return 0;
}

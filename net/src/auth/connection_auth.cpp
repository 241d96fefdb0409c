#include <troupe/net/auth/connection_auth.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>

namespace troupe::internal::auth {

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
std::vector<char> bytes_of(const T& value) {
  std::vector<char> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

const char* purpose_name(uint8_t purpose) {
  switch (static_cast<Purpose>(purpose)) {
    case Purpose::control_plane: return "control";
    case Purpose::data_plane: return "data";
    case Purpose::tls: return "tls";
  }
  return "unknown";
}

/// Moves exactly `n` bytes (reading or writing) before `deadline`: "" or why not.
std::string transfer(int fd, void* data, std::size_t n, bool reading, Clock::time_point deadline) {
  auto* at = static_cast<char*>(data);
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      return reading ? "it did not answer in time" : "it did not take the handshake in time";
    pollfd p{fd, static_cast<short>(reading ? POLLIN : POLLOUT), 0};
    // At most a second per poll: a huge deadline must not overflow poll's int.
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready < 0)
      return std::string("poll failed: ") + std::strerror(errno);
    if (ready == 0)
      continue; // the deadline check above ends it
    const ssize_t r = reading ? ::recv(fd, at, n, 0) : ::send(fd, at, n, MSG_NOSIGNAL);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
      continue;
    if (r == 0)
      return "it closed the connection";
    if (r < 0)
      return std::string("the connection failed: ") + std::strerror(errno);
    at += r;
    n -= static_cast<std::size_t>(r);
  }
  return {};
}

} // namespace

HandshakeTransfer socket_transfer(int fd) {
  return [fd](void* data, std::size_t n, bool reading, Clock::time_point deadline) {
    return transfer(fd, data, n, reading, deadline);
  };
}

AcceptorHandshake::AcceptorHandshake(const Key& key, Purpose purpose, uint64_t spec_fingerprint, int rank, bool tls)
  : key_(key), purpose_(purpose), tls_(tls) {
  transcript_.spec_fingerprint = spec_fingerprint;
  transcript_.acceptor_rank = rank;
  transcript_.acceptor_nonce = fresh_nonce();
}

std::string AcceptorHandshake::check_opening(std::span<const char> bytes) {
  uint32_t magic = 0;
  if (bytes.size() < sizeof magic)
    return "its handshake is " + std::to_string(bytes.size()) + " bytes";
  std::memcpy(&magic, bytes.data(), sizeof magic);
  if (magic != hello_magic)
    return "it does not open with troupe's handshake (an older troupe, or not troupe at all)";
  return {};
}

std::string AcceptorHandshake::on_hello(std::span<const char> bytes) {
  DialerHello hello;
  if (bytes.size() != sizeof hello)
    return "its handshake is " + std::to_string(bytes.size()) + " bytes, not " + std::to_string(sizeof hello);
  if (auto why = check_opening(bytes); !why.empty())
    return why;
  std::memcpy(&hello, bytes.data(), sizeof hello);
  transcript_.dialer_rank = hello.dialer_rank;
  dialer_pid_ = hello.dialer_pid;
  dialer_spec_fingerprint_ = hello.spec_fingerprint;
  auto refuse = [&](HelloRefusal why, std::string text) {
    refusal_ = why;
    return text;
  };
  if (hello.version != handshake_version)
    return refuse(HelloRefusal::version, "it speaks version " + std::to_string(hello.version)
                                           + " of troupe's handshake and this task version "
                                           + std::to_string(handshake_version)
                                           + " (run the same troupe build on every task)");
  if (hello.purpose != static_cast<uint8_t>(purpose_))
    return refuse(HelloRefusal::purpose, std::string("it dialled this task's ")
                                           + purpose_name(static_cast<uint8_t>(purpose_)) + " port for the "
                                           + purpose_name(hello.purpose) + " plane");
  if (hello.acceptor_rank != transcript_.acceptor_rank)
    return refuse(HelloRefusal::rank, "it meant to reach rank " + std::to_string(hello.acceptor_rank)
                                        + ", and this task is rank " + std::to_string(transcript_.acceptor_rank));
  if (((hello.flags & hello_flag_tls) != 0) != tls_)
    return refuse(HelloRefusal::tls, std::string("it runs ") + (tls_ ? "without" : "with")
                                       + " TROUPE_TLS=1 and this task " + (tls_ ? "with" : "without")
                                       + " (set it alike on every task)");
  if (hello.spec_fingerprint != transcript_.spec_fingerprint)
    return refuse(HelloRefusal::spec, "its cluster spec differs from this task's (every task must get the same "
                                      "TF_CONFIG \"cluster\")");
  transcript_.dialer_nonce = hello.nonce;
  return {};
}

std::vector<char> AcceptorHandshake::challenge() const {
  AcceptorChallenge challenge;
  challenge.acceptor_rank = transcript_.acceptor_rank;
  challenge.refusal = static_cast<uint32_t>(refusal_);
  if (refusal_ == HelloRefusal::none)
    challenge.nonce = transcript_.acceptor_nonce;
  return bytes_of(challenge);
}

bool AcceptorHandshake::on_proof(std::span<const char> bytes) const {
  Mac proof;
  if (bytes.size() != proof.size())
    return false;
  std::memcpy(proof.data(), bytes.data(), proof.size());
  return equal(proof, prove(key_, Role::dialer, transcript_));
}

std::vector<char> AcceptorHandshake::verdict(Verdict verdict) const {
  AcceptorVerdict out;
  out.verdict = static_cast<uint32_t>(verdict);
  if (verdict == Verdict::accepted)
    out.proof = prove(key_, Role::acceptor, transcript_);
  return bytes_of(out);
}

std::string describe(HelloRefusal refusal) {
  switch (refusal) {
    case HelloRefusal::none: return "it did not refuse";
    case HelloRefusal::version:
      return "it speaks another version of troupe's handshake (run the same troupe build on every task)";
    case HelloRefusal::purpose: return "its port serves the other plane (control and data ports are mixed up)";
    case HelloRefusal::rank: return "it is another task than the one this process meant to reach";
    case HelloRefusal::spec:
      return "its cluster spec differs (every task must get the same TF_CONFIG \"cluster\")";
    case HelloRefusal::tls: return "its TROUPE_TLS differs from this process's (set it alike on every task)";
  }
  return "it refused for an unknown reason " + std::to_string(static_cast<uint32_t>(refusal));
}

DialOutcome dial_handshake(const HandshakeTransfer& transfer, Clock::time_point deadline, const Key& key,
                           Purpose purpose, uint64_t spec_fingerprint, int rank, int peer_rank, int pid, bool tls) {
  Transcript transcript;
  transcript.spec_fingerprint = spec_fingerprint;
  transcript.dialer_rank = rank;
  transcript.acceptor_rank = peer_rank;
  transcript.dialer_nonce = fresh_nonce();
  DialerHello hello;
  hello.purpose = static_cast<uint8_t>(purpose);
  hello.dialer_rank = rank;
  hello.acceptor_rank = peer_rank;
  hello.dialer_pid = pid;
  hello.flags = tls ? hello_flag_tls : 0;
  hello.spec_fingerprint = spec_fingerprint;
  hello.nonce = transcript.dialer_nonce;
  if (auto why = transfer(&hello, sizeof hello, false, deadline); !why.empty())
    return {DialEnd::unreachable, why};
  AcceptorChallenge challenge;
  if (auto why = transfer(&challenge, sizeof challenge, true, deadline); !why.empty())
    return {DialEnd::unreachable, why + " (it refused this process's handshake, or is not a troupe task)"};
  if (challenge.magic != challenge_magic)
    return {DialEnd::unreachable, "it is not a troupe task (its answer does not fit troupe's handshake)"};
  // Refusals carry no proof: they are what the peer says.
  if (const auto refusal = static_cast<HelloRefusal>(challenge.refusal); refusal != HelloRefusal::none)
    return {refusal == HelloRefusal::spec  ? DialEnd::other_spec
            : refusal == HelloRefusal::tls ? DialEnd::other_tls
                                           : DialEnd::refused,
            "it refused this process: " + describe(refusal)};
  if (challenge.acceptor_rank != peer_rank)
    return {DialEnd::refused, "it is not the troupe task of rank " + std::to_string(peer_rank) + " but rank "
                                + std::to_string(challenge.acceptor_rank)};
  transcript.acceptor_nonce = challenge.nonce;
  Mac proof = prove(key, Role::dialer, transcript);
  if (auto why = transfer(proof.data(), proof.size(), false, deadline); !why.empty())
    return {DialEnd::unreachable, why};
  AcceptorVerdict verdict;
  if (auto why = transfer(&verdict, sizeof verdict, true, deadline); !why.empty())
    return {DialEnd::unreachable, why};
  switch (static_cast<Verdict>(verdict.verdict)) {
    case Verdict::accepted: break;
    case Verdict::wrong_key:
      return {DialEnd::other_token, "it refused this process, saying its cluster token differs "
                                      "(TROUPE_CLUSTER_TOKEN must be the same on every task)"};
    case Verdict::refused: return {DialEnd::refused, "it refused this process (see its log)"};
    default:
      return {DialEnd::refused, "it answered with an unknown verdict " + std::to_string(verdict.verdict)};
  }
  if (!equal(verdict.proof, prove(key, Role::acceptor, transcript)))
    return {DialEnd::impostor, "it could not prove the cluster token: it is not a task of this cluster (another "
                               "TROUPE_CLUSTER_TOKEN, or an impostor)"};
  return {};
}

AcceptOutcome accept_handshake(int fd, Clock::time_point deadline, const Key& key, Purpose purpose,
                               uint64_t spec_fingerprint, int rank,
                               const std::function<std::string(int dialer_rank)>& refusal) {
  AcceptorHandshake handshake(key, purpose, spec_fingerprint, rank);
  std::vector<char> buf(sizeof(DialerHello));
  if (auto why = transfer(fd, buf.data(), buf.size(), true, deadline); !why.empty())
    return {std::nullopt, why};
  if (auto why = handshake.on_hello(buf); !why.empty()) {
    if (handshake.refusal() != HelloRefusal::none) { // a troupe task: tell it why
      auto refusal = handshake.challenge();
      (void)transfer(fd, refusal.data(), refusal.size(), false, deadline);
    }
    return {std::nullopt, why};
  }
  auto challenge = handshake.challenge();
  if (auto why = transfer(fd, challenge.data(), challenge.size(), false, deadline); !why.empty())
    return {std::nullopt, why};
  buf.resize(mac_bytes);
  if (auto why = transfer(fd, buf.data(), buf.size(), true, deadline); !why.empty())
    return {std::nullopt, why};
  auto send_verdict = [&](Verdict v) {
    auto bytes = handshake.verdict(v);
    return transfer(fd, bytes.data(), bytes.size(), false, deadline);
  };
  if (!handshake.on_proof(buf)) {
    (void)send_verdict(Verdict::wrong_key);
    return {std::nullopt, "it claims rank " + std::to_string(handshake.dialer_rank())
                            + " but cannot prove the cluster token (another TROUPE_CLUSTER_TOKEN, or not a task "
                              "of this cluster)"};
  }
  if (auto why = refusal(handshake.dialer_rank()); !why.empty()) {
    (void)send_verdict(Verdict::refused);
    return {std::nullopt, why};
  }
  if (auto why = send_verdict(Verdict::accepted); !why.empty())
    return {std::nullopt, why};
  return {handshake.dialer_rank(), {}};
}

} // namespace troupe::internal::auth

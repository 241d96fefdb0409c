#pragma once

// The door of a task's own address, its control port (internal: not
// installed). CAF's BASP broker trusts the lengths it reads: a stranger's
// forged 32-byte header made a task allocate 4 GiB and freeze. So no
// connection reaches BASP before its dialer proved the cluster token in
// troupe's handshake (net/auth/connection_auth.hpp); the gate then hands the
// socket to BASP as if CAF had accepted it.
//
//   1. listen on the task's address (in place of middleman::publish);
//   2. per connection, run the acceptor's side of the handshake: fixed-size
//      messages, at most `max_pending` connections at once, each closed
//      unless it completes within `handshake_timeout`;
//   3. with TROUPE_TLS=1, the server's side of TLS, within the same deadline;
//   4. a proven dialer: `admit(fd, tls)` (ClusterNode gives the socket to
//      BASP with the node actor as the published actor);
//      a refused one: logged once with its address and why, and when it
//      claimed a rank, `refused(...)` tells the node actor.
//
// Runs on a thread of its own: nothing here blocks the middleman's I/O loop
// or an actor, and a slow stranger holds only its own slot.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <openssl/types.h>

#include <troupe/net/auth/cluster_auth.hpp>
#include <troupe/net/tls/tls_context.hpp>

namespace troupe::internal {

/// A dialer the gate refused after it claimed a rank.
struct GateRefusal {
  std::string address;        ///< "127.0.0.1:54321", where it dialled from
  int claimed_rank = -1;      ///< the member index it claimed (not proven)
  int pid = 0;                ///< the pid it stated (not proven)
  bool other_token = false;   ///< it failed the proof: another cluster token, or not a task at all
  bool other_spec = false;    ///< it stated another cluster spec
  bool other_tls = false;     ///< it runs with another TROUPE_TLS
  uint64_t spec_fingerprint = 0; ///< the one it stated
  std::string why;            ///< for the log
};

struct ControlPlaneGateSetup {
  std::string bind_host;  ///< an IP literal, or "" for every interface
  uint16_t port = 0;      ///< the task's port (0: any free one, for tests)
  auth::Key key{};        ///< the control plane's key (auth::derive_key)
  uint64_t spec_fingerprint = 0;
  int rank = -1;          ///< this task's member index
  /// TROUPE_TLS=1 here: a dialer must agree, and TLS's handshake (server
  /// side) completes within the same deadline before `admit`. Null: in clear.
  std::shared_ptr<TlsContext> tls;
  std::chrono::milliseconds handshake_timeout{10000};
  std::size_t max_pending = 64;
  /// A connection whose dialer proved the key; takes the socket and, under
  /// TLS, the established session (else null). Called on the gate's thread.
  std::function<void(int fd, SSL* tls)> admit;
  /// A dialer refused after it claimed a rank (called on the gate's thread).
  std::function<void(const GateRefusal&)> refused;
};

/// Listens on a task's control port and lets through only dialers that
/// prove the cluster token. Closing it (the destructor) stops the thread and
/// closes every connection still in the handshake; admitted ones are BASP's.
class ControlPlaneGate {
public:
  /// Binds and listens: nullptr and `why` when the address cannot be taken.
  [[nodiscard]] static std::unique_ptr<ControlPlaneGate> open(ControlPlaneGateSetup setup, std::string& why);

  ~ControlPlaneGate();
  ControlPlaneGate(const ControlPlaneGate&) = delete;
  ControlPlaneGate& operator=(const ControlPlaneGate&) = delete;

  /// The port it listens on.
  [[nodiscard]] uint16_t port() const noexcept { return port_; }

private:
  struct Pending;

  ControlPlaneGate(ControlPlaneGateSetup setup, int listener, int wake, uint16_t port);
  void run();

  ControlPlaneGateSetup setup_;
  int listener_;
  int wake_; ///< an eventfd the destructor writes to end run()
  uint16_t port_;
  std::thread thread_;
};

} // namespace troupe::internal

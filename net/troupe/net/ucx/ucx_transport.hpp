#pragma once

// The data plane's frames over UCX shared memory (TROUPE_TRANSPORT=ucx|auto,
// tasks on one host): one UCP worker per process, owned by a progress thread
// of its own, that sends frames as active messages straight from the
// collective's buffer and receives each into one buffer sized by the
// validated header. Only shared-memory transports (posix, sysv, cma, self)
// are enabled: UCX 1.13's TCP transport listens on every interface without
// authentication (docs/security.md).
//
// Peers are admitted by an active-message hello that proves the cluster's
// data-plane key for the two processes' nonces (exchanged over the
// authenticated control plane); frames from a rank that has not proven it
// are dropped. Internal: not installed.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <troupe/net/auth/cluster_auth.hpp>
#include <troupe/net/link/frame_bytes.hpp>
#include <troupe/net/link/frame_header.hpp>
#include <troupe/net/link/frame_sender.hpp>

namespace troupe::internal {

/// One peer to connect to: its worker address and its process's nonce, both
/// from its HelloMsg.
struct UcxPeer {
  int rank = 0;
  std::vector<uint8_t> address;
  std::vector<uint8_t> nonce;
};

struct UcxSetup {
  int rank = 0;
  int ranks = 0;              ///< ranks of the data plane (this one included)
  auth::Key key{};            ///< the data plane's key (proves hellos)
  uint64_t spec_fingerprint = 0;
  uint32_t max_frame_bytes = 0; ///< TROUPE_MAX_FRAME_MIB
  /// Microseconds the progress thread polls before it sleeps on UCX's event
  /// fd (TROUPE_UCX_SPIN_US): lower latency for small frames, a busy core.
  std::chrono::microseconds spin{0};
};

/// What the progress thread reports; called on that thread.
struct UcxEvents {
  /// A whole frame from `from` (in the order `from` sent them): the
  /// receiver delivers it from this thread, without another hand-off.
  std::function<void(int from, const FrameHeader& header, FrameBytes bytes)> frame;
  /// `from` proved the cluster token: frames from it are accepted.
  std::function<void(int from)> admitted;
  /// A send to or receive from `rank` failed: it is lost.
  std::function<void(int rank, std::string why)> failed;
  /// Every send issued before UcxTransport::flush completed.
  std::function<void()> flushed;
};

class UcxTransport final : public FrameSender {
public:
  /// Opens the worker and starts its thread; null with `why` when UCX cannot
  /// (no shared-memory transport, out of memory).
  static std::unique_ptr<UcxTransport> open(UcxSetup setup, UcxEvents events, std::string& why);
  ~UcxTransport() override;
  UcxTransport(const UcxTransport&) = delete;
  UcxTransport& operator=(const UcxTransport&) = delete;

  /// This worker's address, for the HelloMsg.
  [[nodiscard]] const std::vector<uint8_t>& address() const noexcept;
  /// This process's nonce, for the HelloMsg.
  [[nodiscard]] const auth::Nonce& nonce() const noexcept;

  // Thread-safe; each runs on the progress thread, in call order.
  /// Creates an endpoint to each peer and sends it this process's proof.
  void connect(std::vector<UcxPeer> peers);
  /// Sends one frame; `bytes` stays alive until it has left.
  void send(int to, const FrameHeader& header, FrameBytes bytes) override;
  /// Reports `flushed` once every send issued before completed.
  void flush();
  /// Forgets `rank`: its endpoint is closed, frames from it dropped.
  void drop(int rank);
  /// Runs `work` on the progress thread, in order with the frames it
  /// reports (what state the `frame` event reads is safe to change there).
  void post(std::function<void()> work);
  /// Stops and joins the progress thread and drops the events (which hold
  /// their receivers): the owner calls it when it ends, since groups that
  /// send directly may hold this transport longer. Later calls do nothing.
  void shutdown();
  /// When a message from `rank` last arrived (steady clock, ns; 0: never).
  [[nodiscard]] int64_t last_heard_ns(int rank) const;

  class Impl;

private:
  explicit UcxTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Identifies the shared-memory domain of this process: tasks whose identity
/// is equal can reach each other over UCX shared memory (same boot, same
/// network and IPC namespaces, same user).
[[nodiscard]] std::string shared_memory_domain();

} // namespace troupe::internal

#pragma once

// UcxTransport's implementation, shared by ucx_transport.cpp (lifecycle,
// sends, the progress thread) and ucx_receive.cpp (what arrives: admission,
// checks, ordered delivery). Private to net/src/ucx.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <ucp/api/ucp.h>

#include <troupe/net/ucx/ucx_transport.hpp>

namespace troupe::internal::ucx_detail {

using Clock = std::chrono::steady_clock;

// troupe's one active-message id.
inline constexpr unsigned am_id = 17;

// Frames up to this size go eagerly through the shared-memory FIFO; larger
// ones by rendezvous, which the receiver reads into the buffer it sized from
// the validated header (cma: one copy, straight from the sender's tensor).
inline constexpr std::size_t eager_max_bytes = 8192;

enum class AmKind : uint32_t { frame = 1, hello = 2 };

// The active message's header: the frame's header, then who sent it.
struct AmHeader {
  FrameHeader frame;
  int32_t from = -1;
  AmKind kind = AmKind::frame;
};
static_assert(sizeof(AmHeader) == 48);

inline std::string status_text(ucs_status_t status) {
  return ucs_status_string(status);
}

} // namespace troupe::internal::ucx_detail

namespace troupe::internal {

class UcxTransport::Impl {
  using Clock = ucx_detail::Clock;
  using AmHeader = ucx_detail::AmHeader;
  using AmKind = ucx_detail::AmKind;

public:
  Impl(UcxSetup setup, UcxEvents events);
  ~Impl();

  // Stops and joins the progress thread, then drops the event callbacks
  // (they hold the broker and, through its dispatch, the groups, which hold
  // this transport): idempotent; later posts are dropped.
  void shutdown();

  /// Steady-clock nanoseconds when a message from `rank` last arrived (0: never).
  int64_t last_heard(int rank) const {
    if (rank < 0 || rank >= setup_.ranks)
      return 0;
    return last_heard_[static_cast<std::size_t>(rank)].load(std::memory_order_relaxed);
  }

  bool open(std::string& why);

  void post(std::function<void()> command);

  // Sends a small frame from the caller's thread, sparing the wake-up of the
  // progress thread (measured 5-25 us here). False, and nothing sent, when
  // the frame is large (its rendezvous is progressed there), the worker is
  // busy, or commands wait (the frame must not overtake them).
  bool send_inline(int to, const FrameHeader& header, FrameBytes& bytes);

  // -- on the progress thread (or under worker_mu_) ---------------------------

  void connect(const std::vector<UcxPeer>& peers);
  void send(int to, const FrameHeader& header, FrameBytes bytes);
  void flush();
  void drop(int rank);

  const std::vector<uint8_t>& address() const { return address_; }
  const auth::Nonce& nonce() const { return nonce_; }

private:
  struct SendOp {
    Impl* impl;
    int to;
    AmHeader header;
    FrameBytes bytes;
  };
  struct RecvOp {
    Impl* impl;
    int from;
    uint64_t serial;
    std::shared_ptr<std::byte> bytes; ///< the receive's target, alive until it ends
  };
  // A frame of one sender, delivered in the order its sender sent them.
  struct Arriving {
    uint64_t serial = 0;
    FrameHeader header;
    std::shared_ptr<std::byte> bytes;
    std::size_t size = 0;
    bool done = false;
  };

  bool valid_peer(int rank) const { return rank >= 0 && rank < setup_.ranks && rank != setup_.rank; }

  auth::Transcript transcript(int from, int to) const;
  void send_am(int to, const FrameHeader& header, FrameBytes bytes, AmKind kind);
  static void on_sent(void* request, ucs_status_t status, void* user_data);

  // The receiving side (ucx_receive.cpp).
  static ucs_status_t on_am(void* arg, const void* header, std::size_t header_length, void* data, std::size_t length,
                            const ucp_am_recv_param_t* param);
  void on_message(const void* raw_header, std::size_t header_length, void* data, std::size_t length,
                  const ucp_am_recv_param_t* param);
  static void on_received(void* request, ucs_status_t status, std::size_t, void* user_data);
  void complete(int from, uint64_t serial);
  void deliver(int from);
  void try_admit(int from);

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  }

  void fail(int rank, std::string why);
  void refuse_log(const std::string& what);
  // Closes every endpoint, flushing (UCX can force-close only endpoints
  // with peer error handling); all together within 1 s, for peers that
  // are gone. Then what is left is the worker's to clean up.
  void close_endpoints();
  bool has_commands();
  bool run_commands();
  void run();

  UcxSetup setup_;
  UcxEvents events_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int efd_ = -1;
  std::vector<uint8_t> address_;
  auth::Nonce nonce_{};
  std::vector<ucp_ep_h> eps_;
  std::vector<std::optional<auth::Nonce>> peer_nonce_;
  static constexpr std::size_t max_proofs = 4;
  std::vector<std::vector<auth::Mac>> proof_; ///< per rank: hellos not checked yet
  std::unique_ptr<std::atomic<int64_t>[]> last_heard_;
  std::vector<bool> admitted_;
  std::vector<bool> dropped_;
  std::vector<std::deque<Arriving>> inbox_;
  uint64_t next_serial_ = 0;
  int refusals_logged_ = 0;
  /// Held by whoever calls into the UCX worker: the progress thread, or a
  /// sender in send_inline.
  std::mutex worker_mu_;
  bool inline_ = false; ///< under worker_mu_: a send_inline is running
  /// The transport whose progress thread this is (null on other threads).
  static thread_local const Impl* progress_thread_of;
  std::mutex mu_;
  std::vector<std::function<void()>> commands_;
  bool stop_ = false; ///< under mu_
  bool closing_ = false; ///< shut down: callbacks report nothing
  std::thread thread_;
};

} // namespace troupe::internal

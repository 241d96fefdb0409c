#include <troupe/net/ucx/ucx_transport.hpp>

#include <atomic>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <poll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include <troupe/core/hop_trace.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

using Clock = std::chrono::steady_clock;

// troupe's one active-message id.
constexpr unsigned am_id = 17;

// Frames up to this size go eagerly through the shared-memory FIFO; larger
// ones by rendezvous, which the receiver reads into the buffer it sized from
// the validated header (cma: one copy, straight from the sender's tensor).
constexpr std::size_t eager_max_bytes = 8192;

enum class AmKind : uint32_t { frame = 1, hello = 2 };

// The active message's header: the frame's header, then who sent it.
struct AmHeader {
  FrameHeader frame;
  int32_t from = -1;
  AmKind kind = AmKind::frame;
};
static_assert(sizeof(AmHeader) == 48);

std::string status_text(ucs_status_t status) {
  return ucs_status_string(status);
}

// Whether process_vm_readv works here (a container's seccomp profile may
// forbid it): UCX's cma transport would then fail every rendezvous.
bool cross_memory_attach_works() {
  int source = 42;
  int target = 0;
  iovec local{&target, sizeof target};
  iovec remote{&source, sizeof source};
  return ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof source)
         && target == 42;
}

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string inode_of(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0)
    return "?";
  return std::to_string(st.st_dev) + "." + std::to_string(st.st_ino);
}

} // namespace

std::string shared_memory_domain() {
  return first_line("/proc/sys/kernel/random/boot_id") + "/net:" + inode_of("/proc/self/ns/net")
         + "/ipc:" + inode_of("/proc/self/ns/ipc") + "/shm:" + inode_of("/dev/shm")
         + "/uid:" + std::to_string(::getuid());
}

class UcxTransport::Impl {
public:
  Impl(UcxSetup setup, UcxEvents events) : setup_(std::move(setup)), events_(std::move(events)) {
    const auto n = static_cast<std::size_t>(setup_.ranks);
    eps_.assign(n, nullptr);
    peer_nonce_.resize(n);
    proof_.resize(n);
    admitted_.assign(n, false);
    dropped_.assign(n, false);
    inbox_.resize(n);
    last_heard_ = std::make_unique<std::atomic<int64_t>[]>(n);
    for (std::size_t i = 0; i < n; ++i)
      last_heard_[i] = 0;
    nonce_ = auth::fresh_nonce();
  }

  ~Impl() {
    shutdown();
    if (worker_) {
      close_endpoints();
      ucp_worker_destroy(worker_);
    }
    if (context_)
      ucp_cleanup(context_);
  }

  // Stops and joins the progress thread, then drops the event callbacks
  // (they hold the broker and, through its dispatch, the groups, which hold
  // this transport): idempotent; later posts are dropped.
  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_)
        return;
      stop_ = true;
      commands_.clear();
    }
    if (thread_.joinable()) {
      ucp_worker_signal(worker_);
      if (thread_.get_id() == std::this_thread::get_id())
        thread_.detach(); // unreachable: nothing running there holds this transport
      else
        thread_.join();
    }
    // A sender on its own thread may still be inside send_inline.
    std::lock_guard<std::mutex> worker(worker_mu_);
    closing_ = true; // the worker's last callbacks (closing endpoints) report nothing
    events_ = UcxEvents{};
  }

  /// Steady-clock nanoseconds when a message from `rank` last arrived (0: never).
  int64_t last_heard(int rank) const {
    if (rank < 0 || rank >= setup_.ranks)
      return 0;
    return last_heard_[static_cast<std::size_t>(rank)].load(std::memory_order_relaxed);
  }

  bool open(std::string& why) {
    ucp_config_t* config = nullptr;
    if (auto s = ucp_config_read(nullptr, nullptr, &config); s != UCS_OK) {
      why = "UCX cannot read its configuration: " + status_text(s);
      return false;
    }
    // Shared memory only, whatever UCX_TLS says: see the header.
    const std::string tls = cross_memory_attach_works() ? "posix,sysv,cma,self" : "posix,sysv,self";
    (void)ucp_config_modify(config, "TLS", tls.c_str());
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    const auto status = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (status != UCS_OK) {
      context_ = nullptr;
      why = "UCX cannot start (transports " + tls + "): " + status_text(status);
      return false;
    }
    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    // Serialized, not single: small frames are sent from the sender's own
    // thread under worker_mu_ (send_inline), the rest on the progress thread.
    worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    if (auto s = ucp_worker_create(context_, &worker_params, &worker_); s != UCS_OK) {
      worker_ = nullptr;
      why = "UCX cannot create a worker: " + status_text(s);
      return false;
    }
    if (auto s = ucp_worker_get_efd(worker_, &efd_); s != UCS_OK) {
      why = "UCX gives no event fd: " + status_text(s);
      return false;
    }
    ucp_address_t* address = nullptr;
    std::size_t length = 0;
    if (auto s = ucp_worker_get_address(worker_, &address, &length); s != UCS_OK) {
      why = "UCX gives no worker address: " + status_text(s);
      return false;
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(address);
    address_.assign(bytes, bytes + length);
    ucp_worker_release_address(worker_, address);
    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS
                         | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    handler.id = am_id;
    handler.flags = UCP_AM_FLAG_WHOLE_MSG;
    handler.cb = &Impl::on_am;
    handler.arg = this;
    if (auto s = ucp_worker_set_am_recv_handler(worker_, &handler); s != UCS_OK) {
      why = "UCX refuses the active-message handler: " + status_text(s);
      return false;
    }
    thread_ = std::thread([this] { run(); });
    return true;
  }

  void post(std::function<void()> command) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_)
        return; // shut down: nothing runs it
      commands_.push_back(std::move(command));
    }
    ucp_worker_signal(worker_);
  }

  // Sends a small frame from the caller's thread, sparing the wake-up of the
  // progress thread (measured 5-25 us here). False, and nothing sent, when
  // the frame is large (its rendezvous is progressed there), the worker is
  // busy, or commands wait (the frame must not overtake them).
  bool send_inline(int to, const FrameHeader& header, FrameBytes& bytes) {
    if (bytes.size > eager_max_bytes || progress_thread_of == this)
      return false;
    std::unique_lock<std::mutex> worker(worker_mu_, std::try_to_lock);
    if (!worker.owns_lock())
      return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || !commands_.empty())
        return false;
    }
    inline_ = true;
    send(to, header, std::move(bytes));
    inline_ = false;
    return true;
  }

  // -- on the progress thread (or under worker_mu_) ---------------------------

  void connect(const std::vector<UcxPeer>& peers) {
    for (const auto& peer : peers) {
      if (!valid_peer(peer.rank) || eps_[static_cast<std::size_t>(peer.rank)])
        continue;
      const auto r = static_cast<std::size_t>(peer.rank);
      if (peer.nonce.size() != auth::nonce_bytes) {
        fail(peer.rank, "its hello carries no UCX nonce");
        continue;
      }
      auth::Nonce nonce{};
      std::memcpy(nonce.data(), peer.nonce.data(), nonce.size());
      peer_nonce_[r] = nonce;
      ucp_ep_params_t params{};
      params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
      params.address = reinterpret_cast<const ucp_address_t*>(peer.address.data());
      params.err_mode = UCP_ERR_HANDLING_MODE_NONE; // shared memory has no peer failure mode
      if (auto s = ucp_ep_create(worker_, &params, &eps_[r]); s != UCS_OK) {
        eps_[r] = nullptr;
        fail(peer.rank, "UCX cannot reach its worker over shared memory: " + status_text(s));
        continue;
      }
      // This process's proof, first on the endpoint: the peer accepts
      // nothing else from this rank before it.
      auto proof = std::make_shared<auth::Mac>(
        auth::prove(setup_.key, auth::Role::dialer, transcript(setup_.rank, peer.rank)));
      FrameHeader header;
      header.size = static_cast<uint32_t>(proof->size());
      send_am(peer.rank, header, FrameBytes{proof, reinterpret_cast<const std::byte*>(proof->data()), proof->size()},
              AmKind::hello);
      try_admit(peer.rank);
    }
  }

  void send(int to, const FrameHeader& header, FrameBytes bytes) {
    if (!valid_peer(to) || dropped_[static_cast<std::size_t>(to)])
      return;
    if (!eps_[static_cast<std::size_t>(to)]) {
      fail(to, "a frame for it before its UCX endpoint exists");
      return;
    }
    send_am(to, header, std::move(bytes), AmKind::frame);
  }

  void flush() {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = [](void* request, ucs_status_t, void* user_data) {
      auto* impl = static_cast<Impl*>(user_data);
      if (!impl->closing_)
        impl->events_.flushed();
      ucp_request_free(request);
    };
    param.user_data = this;
    auto request = ucp_worker_flush_nbx(worker_, &param);
    if (request == nullptr || UCS_PTR_IS_ERR(request))
      events_.flushed();
  }

  void drop(int rank) {
    if (!valid_peer(rank))
      return;
    const auto r = static_cast<std::size_t>(rank);
    dropped_[r] = true;
    admitted_[r] = false;
    // Receives still running keep their buffers (RecvOp); its endpoint stays
    // until the worker closes: UCX can force-close only endpoints with peer
    // error handling, which its shared-memory transports refuse.
    inbox_[r].clear();
  }

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
    std::shared_ptr<std::vector<char>> bytes; ///< the receive's target, alive until it ends
  };
  // A frame of one sender, delivered in the order its sender sent them.
  struct Arriving {
    uint64_t serial = 0;
    FrameHeader header;
    std::shared_ptr<std::vector<char>> bytes;
    bool done = false;
  };

  bool valid_peer(int rank) const { return rank >= 0 && rank < setup_.ranks && rank != setup_.rank; }

  auth::Transcript transcript(int from, int to) const {
    auth::Transcript t;
    t.spec_fingerprint = setup_.spec_fingerprint;
    t.dialer_rank = from;
    t.acceptor_rank = to;
    t.dialer_nonce = from == setup_.rank ? nonce_ : *peer_nonce_[static_cast<std::size_t>(from)];
    t.acceptor_nonce = to == setup_.rank ? nonce_ : *peer_nonce_[static_cast<std::size_t>(to)];
    return t;
  }

  void send_am(int to, const FrameHeader& header, FrameBytes bytes, AmKind kind) {
    trace_hop(Hop::wire_send, header.run, static_cast<uint8_t>(header.type));
    auto* op = new SendOp{this, to, AmHeader{header, setup_.rank, kind}, std::move(bytes)};
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send = &Impl::on_sent;
    param.user_data = op;
    param.flags = op->bytes.size > eager_max_bytes ? UCP_AM_SEND_FLAG_RNDV : 0;
    auto request = ucp_am_send_nbx(eps_[static_cast<std::size_t>(to)], am_id, &op->header, sizeof op->header,
                                   op->bytes.data, op->bytes.size, &param);
    if (request == nullptr) { // sent at once
      delete op;
    } else if (UCS_PTR_IS_ERR(request)) {
      delete op;
      fail(to, "UCX cannot send to it: " + status_text(UCS_PTR_STATUS(request)));
    } else if (inline_) {
      ucp_worker_signal(worker_); // the progress thread completes it
    }
  }

  static void on_sent(void* request, ucs_status_t status, void* user_data) {
    auto* op = static_cast<SendOp*>(user_data);
    if (status != UCS_OK && status != UCS_ERR_CANCELED)
      op->impl->fail(op->to, "a UCX send to it failed: " + status_text(status));
    delete op;
    ucp_request_free(request);
  }

  static ucs_status_t on_am(void* arg, const void* header, std::size_t header_length, void* data, std::size_t length,
                            const ucp_am_recv_param_t* param) {
    static_cast<Impl*>(arg)->on_message(header, header_length, data, length, param);
    return UCS_OK; // eager bytes are copied before this returns
  }

  void on_message(const void* raw_header, std::size_t header_length, void* data, std::size_t length,
                  const ucp_am_recv_param_t* param) {
    if (closing_)
      return;
    if (header_length != sizeof(AmHeader)) {
      refuse_log("an active message with a " + std::to_string(header_length) + "-byte header");
      return;
    }
    AmHeader h;
    std::memcpy(&h, raw_header, sizeof h);
    if (!valid_peer(h.from) || dropped_[static_cast<std::size_t>(h.from)])
      return;
    trace_hop(Hop::wire_receive, h.frame.run, static_cast<uint8_t>(h.frame.type));
    const auto from = static_cast<std::size_t>(h.from);
    const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    if (h.frame.magic != FrameHeader::magic_value || h.frame.version != FrameHeader::current_version) {
      // Only an admitted rank's word counts: anything else is dropped, so a
      // stranger claiming a rank cannot get it declared lost.
      if (admitted_[from])
        fail(h.from, "its UCX frame does not speak version " + std::to_string(FrameHeader::current_version)
                       + " of troupe's frame protocol (run the same troupe build on every task)");
      else
        refuse_log("a UCX message of another protocol claiming rank " + std::to_string(h.from));
      return;
    }
    if (h.kind == AmKind::hello) {
      if (rendezvous || length != auth::mac_bytes || admitted_[from] || proof_[from].size() >= max_proofs) {
        refuse_log("a malformed or extra UCX hello claiming rank " + std::to_string(h.from));
        return;
      }
      auth::Mac proof{};
      std::memcpy(proof.data(), data, proof.size());
      proof_[from].push_back(proof);
      try_admit(h.from);
      return;
    }
    if (h.kind != AmKind::frame || !admitted_[from]) {
      refuse_log("a UCX frame from rank " + std::to_string(h.from) + " before it proved the cluster token");
      return;
    }
    last_heard_[from].store(now_ns(), std::memory_order_relaxed);
    const auto limit = frame_payload_limit(h.frame.type, setup_.max_frame_bytes);
    if (!limit || h.frame.size != length || length > *limit) {
      fail(h.from, "its UCX frame of type " + std::to_string(static_cast<int>(h.frame.type)) + " claims "
                     + std::to_string(h.frame.size) + " payload bytes and carries " + std::to_string(length)
                     + (limit ? ", limit " + std::to_string(*limit) + " (TROUPE_MAX_FRAME_MIB)" : std::string()));
      return;
    }
    // Sized by the checked header, then filled: nothing larger than the
    // frame type carries is ever allocated.
    auto bytes = std::make_shared<std::vector<char>>(length);
    const uint64_t serial = ++next_serial_;
    inbox_[from].push_back(Arriving{serial, h.frame, bytes, !rendezvous});
    if (!rendezvous) {
      if (length > 0)
        std::memcpy(bytes->data(), data, length);
      deliver(h.from);
      return;
    }
    auto* op = new RecvOp{this, h.from, serial, bytes};
    ucp_request_param_t recv{};
    recv.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    recv.cb.recv_am = &Impl::on_received;
    recv.user_data = op;
    auto request = ucp_am_recv_data_nbx(worker_, data, bytes->data(), length, &recv);
    if (request == nullptr) {
      delete op;
      complete(h.from, serial);
    } else if (UCS_PTR_IS_ERR(request)) {
      delete op;
      fail(h.from, "UCX cannot receive its frame: " + status_text(UCS_PTR_STATUS(request)));
    }
  }

  static void on_received(void* request, ucs_status_t status, std::size_t, void* user_data) {
    auto* op = static_cast<RecvOp*>(user_data);
    if (status == UCS_OK)
      op->impl->complete(op->from, op->serial);
    else if (status != UCS_ERR_CANCELED)
      op->impl->fail(op->from, "a UCX receive from it failed: " + status_text(status));
    delete op;
    ucp_request_free(request);
  }

  void complete(int from, uint64_t serial) {
    for (auto& a : inbox_[static_cast<std::size_t>(from)])
      if (a.serial == serial)
        a.done = true;
    deliver(from);
  }

  void deliver(int from) {
    if (closing_)
      return;
    auto& queue = inbox_[static_cast<std::size_t>(from)];
    while (!queue.empty() && queue.front().done) {
      auto a = std::move(queue.front());
      queue.pop_front();
      const auto* data = reinterpret_cast<const std::byte*>(a.bytes->data());
      const auto size = a.bytes->size();
      events_.frame(from, a.header, FrameBytes{std::move(a.bytes), data, size});
    }
  }

  void try_admit(int from) {
    const auto r = static_cast<std::size_t>(from);
    if (admitted_[r] || proof_[r].empty() || !peer_nonce_[r])
      return;
    const auto expected = auth::prove(setup_.key, auth::Role::dialer, transcript(from, setup_.rank));
    for (const auto& proof : proof_[r])
      if (auth::equal(proof, expected)) {
        admitted_[r] = true;
        proof_[r].clear();
        last_heard_[r].store(now_ns(), std::memory_order_relaxed);
        events_.admitted(from);
        return;
      }
    // Hellos that came before this process knew the peer's nonce are all
    // checked (a few are kept); once it knows, a wrong one fails the peer
    // (another token). Only a process of this user on this host can reach the
    // worker at all (docs/security.md).
    fail(from, "its UCX hello does not prove the cluster token (another TROUPE_CLUSTER_TOKEN?)");
  }

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  }

  void fail(int rank, std::string why) {
    if (closing_ || !valid_peer(rank) || dropped_[static_cast<std::size_t>(rank)])
      return;
    events_.failed(rank, std::move(why));
  }

  void refuse_log(const std::string& what) {
    // At most a few lines: a flood of forged messages must not flood the log.
    if (refusals_logged_ < 20) {
      ++refusals_logged_;
      TROUPE_LOG(error, "net") << "UCX data plane: dropped " << what;
    }
  }

  // Closes every endpoint, flushing (UCX can force-close only endpoints
  // with peer error handling); all together within 1 s, for peers that
  // are gone. Then what is left is the worker's to clean up.
  void close_endpoints() {
    std::vector<void*> requests;
    for (auto& ep : eps_) {
      if (!ep)
        continue;
      ucp_request_param_t param{};
      auto request = ucp_ep_close_nbx(ep, &param);
      ep = nullptr;
      if (request != nullptr && !UCS_PTR_IS_ERR(request))
        requests.push_back(request);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(1);
    for (auto* request : requests) {
      while (ucp_request_check_status(request) == UCS_INPROGRESS && Clock::now() < deadline)
        ucp_worker_progress(worker_);
      ucp_request_free(request);
    }
  }

  bool has_commands() {
    std::lock_guard<std::mutex> lock(mu_);
    return !commands_.empty();
  }

  bool run_commands() {
    std::vector<std::function<void()>> commands;
    {
      std::lock_guard<std::mutex> lock(mu_);
      commands.swap(commands_);
    }
    for (auto& command : commands)
      command();
    return !commands.empty();
  }

  void run() {
    progress_thread_of = this;
    auto last_busy = Clock::now();
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_)
          return;
      }
      std::unique_lock<std::mutex> worker(worker_mu_);
      // Commands between every progress call: one call can read a whole
      // rendezvous frame, and sends queued behind a stream of arriving
      // frames would wait for all of them (measured: 3.4 ms for an announce
      // behind eight 1 MiB frames).
      bool busy = run_commands();
      if (ucp_worker_progress(worker_) > 0)
        busy = true;
      const auto now = Clock::now();
      if (busy) {
        last_busy = now;
        continue;
      }
      if (now - last_busy < setup_.spin)
        continue;
      const auto armed = ucp_worker_arm(worker_);
      worker.unlock();
      if (armed == UCS_ERR_BUSY || has_commands())
        continue;
      pollfd p{efd_, POLLIN, 0};
      (void)::poll(&p, 1, 1000);
    }
  }

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

thread_local const UcxTransport::Impl* UcxTransport::Impl::progress_thread_of = nullptr;

std::unique_ptr<UcxTransport> UcxTransport::open(UcxSetup setup, UcxEvents events, std::string& why) {
  auto impl = std::make_unique<Impl>(std::move(setup), std::move(events));
  if (!impl->open(why))
    return nullptr;
  return std::unique_ptr<UcxTransport>(new UcxTransport(std::move(impl)));
}

UcxTransport::UcxTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

UcxTransport::~UcxTransport() = default;

const std::vector<uint8_t>& UcxTransport::address() const noexcept {
  return impl_->address();
}

const auth::Nonce& UcxTransport::nonce() const noexcept {
  return impl_->nonce();
}

void UcxTransport::connect(std::vector<UcxPeer> peers) {
  auto* impl = impl_.get();
  impl->post([impl, peers = std::move(peers)] { impl->connect(peers); });
}

void UcxTransport::send(int to, const FrameHeader& header, FrameBytes bytes) {
  auto* impl = impl_.get();
  if (impl->send_inline(to, header, bytes))
    return;
  impl->post([impl, to, header, bytes = std::move(bytes)]() mutable { impl->send(to, header, std::move(bytes)); });
}

void UcxTransport::flush() {
  auto* impl = impl_.get();
  impl->post([impl] { impl->flush(); });
}

void UcxTransport::drop(int rank) {
  auto* impl = impl_.get();
  impl->post([impl, rank] { impl->drop(rank); });
}

void UcxTransport::post(std::function<void()> work) {
  impl_->post(std::move(work));
}

void UcxTransport::shutdown() {
  impl_->shutdown();
}

int64_t UcxTransport::last_heard_ns(int rank) const {
  return impl_->last_heard(rank);
}

} // namespace troupe::internal

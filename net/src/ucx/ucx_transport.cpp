#include "ucx_transport_impl.hpp"

#include <cstring>
#include <fstream>

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <troupe/core/hop_trace.hpp>
#include <troupe/core/log.hpp>
#include <troupe/net/link/cross_memory.hpp>

namespace troupe::internal {

namespace {

using namespace ucx_detail;

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
  // The pid namespace too: a peer's pid is what cross-memory reads use.
  return first_line("/proc/sys/kernel/random/boot_id") + "/net:" + inode_of("/proc/self/ns/net")
         + "/ipc:" + inode_of("/proc/self/ns/ipc") + "/pid:" + inode_of("/proc/self/ns/pid")
         + "/shm:" + inode_of("/dev/shm") + "/uid:" + std::to_string(::getuid());
}

UcxTransport::Impl::Impl(UcxSetup setup, UcxEvents events) : setup_(std::move(setup)), events_(std::move(events)) {
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

UcxTransport::Impl::~Impl() {
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
void UcxTransport::Impl::shutdown() {
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
  // A sender on its own thread may still be inside send_inline (the
  // progress thread itself, were it ever here, already holds the mutex).
  std::unique_lock<std::mutex> worker(worker_mu_, std::defer_lock);
  if (progress_thread_of != this)
    worker.lock();
  closing_ = true; // the worker's last callbacks (closing endpoints) report nothing
  events_ = UcxEvents{};
}

bool UcxTransport::Impl::open(std::string& why) {
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

void UcxTransport::Impl::post(std::function<void()> command) {
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
bool UcxTransport::Impl::send_inline(int to, const FrameHeader& header, FrameBytes& bytes) {
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

void UcxTransport::Impl::connect(const std::vector<UcxPeer>& peers) {
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

void UcxTransport::Impl::send(int to, const FrameHeader& header, FrameBytes bytes) {
  if (!valid_peer(to) || dropped_[static_cast<std::size_t>(to)])
    return;
  if (!eps_[static_cast<std::size_t>(to)]) {
    fail(to, "a frame for it before its UCX endpoint exists");
    return;
  }
  send_am(to, header, std::move(bytes), AmKind::frame);
}

void UcxTransport::Impl::flush() {
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

void UcxTransport::Impl::drop(int rank) {
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

auth::Transcript UcxTransport::Impl::transcript(int from, int to) const {
  auth::Transcript t;
  t.spec_fingerprint = setup_.spec_fingerprint;
  t.dialer_rank = from;
  t.acceptor_rank = to;
  t.dialer_nonce = from == setup_.rank ? nonce_ : *peer_nonce_[static_cast<std::size_t>(from)];
  t.acceptor_nonce = to == setup_.rank ? nonce_ : *peer_nonce_[static_cast<std::size_t>(to)];
  return t;
}

void UcxTransport::Impl::send_am(int to, const FrameHeader& header, FrameBytes bytes, AmKind kind) {
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

void UcxTransport::Impl::on_sent(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<SendOp*>(user_data);
  if (status != UCS_OK && status != UCS_ERR_CANCELED)
    op->impl->fail(op->to, "a UCX send to it failed: " + status_text(status));
  delete op;
  ucp_request_free(request);
}

void UcxTransport::Impl::fail(int rank, std::string why) {
  if (closing_ || !valid_peer(rank) || dropped_[static_cast<std::size_t>(rank)])
    return;
  events_.failed(rank, std::move(why));
}

void UcxTransport::Impl::refuse_log(const std::string& what) {
  // At most a few lines: a flood of forged messages must not flood the log.
  if (refusals_logged_ < 20) {
    ++refusals_logged_;
    TROUPE_LOG(error, "net") << "UCX data plane: dropped " << what;
  }
}

// Closes every endpoint, flushing (UCX can force-close only endpoints
// with peer error handling); all together within 1 s, for peers that
// are gone. Then what is left is the worker's to clean up.
void UcxTransport::Impl::close_endpoints() {
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

bool UcxTransport::Impl::has_commands() {
  std::lock_guard<std::mutex> lock(mu_);
  return !commands_.empty();
}

bool UcxTransport::Impl::run_commands() {
  std::vector<std::function<void()>> commands;
  {
    std::lock_guard<std::mutex> lock(mu_);
    commands.swap(commands_);
  }
  for (auto& command : commands)
    command();
  return !commands.empty();
}

void UcxTransport::Impl::run() {
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

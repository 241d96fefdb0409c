// UcxTransport's receiving side, on the progress thread: admission of a
// peer by its hello's proof, the checks of every frame before anything is
// allocated, and each sender's frames delivered in the order it sent them.

#include "ucx_transport_impl.hpp"

#include <cstring>

#include <troupe/core/hop_trace.hpp>
#include <troupe/core/host_allocator.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

using namespace ucx_detail;

// A frame's receive buffer from troupe's host cache: not zeroed first (the
// frame fills it) and, for the large ones, reused instead of page-faulting
// fresh memory for every frame.
std::shared_ptr<std::byte> receive_buffer(std::size_t bytes) {
  if (bytes == 0)
    return {};
  auto* p = static_cast<std::byte*>(allocate_host(bytes));
  return std::shared_ptr<std::byte>(p, [bytes](std::byte* q) { deallocate_host(q, bytes); });
}

} // namespace

ucs_status_t UcxTransport::Impl::on_am(void* arg, const void* header, std::size_t header_length, void* data,
                                       std::size_t length, const ucp_am_recv_param_t* param) {
  static_cast<Impl*>(arg)->on_message(header, header_length, data, length, param);
  return UCS_OK; // eager bytes are copied before this returns
}

void UcxTransport::Impl::on_message(const void* raw_header, std::size_t header_length, void* data,
                                    std::size_t length, const ucp_am_recv_param_t* param) {
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
  std::shared_ptr<std::byte> bytes;
  try {
    bytes = receive_buffer(length);
  } catch (const std::bad_alloc&) {
    fail(h.from, "this task has no memory for its " + std::to_string(length) + "-byte UCX frame");
    return;
  }
  const uint64_t serial = ++next_serial_;
  inbox_[from].push_back(Arriving{serial, h.frame, bytes, length, !rendezvous});
  if (!rendezvous) {
    if (length > 0)
      std::memcpy(bytes.get(), data, length);
    deliver(h.from);
    return;
  }
  auto* op = new RecvOp{this, h.from, serial, bytes};
  ucp_request_param_t recv{};
  recv.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  recv.cb.recv_am = &Impl::on_received;
  recv.user_data = op;
  auto request = ucp_am_recv_data_nbx(worker_, data, bytes.get(), length, &recv);
  if (request == nullptr) {
    delete op;
    complete(h.from, serial);
  } else if (UCS_PTR_IS_ERR(request)) {
    delete op;
    fail(h.from, "UCX cannot receive its frame: " + status_text(UCS_PTR_STATUS(request)));
  }
}

void UcxTransport::Impl::on_received(void* request, ucs_status_t status, std::size_t, void* user_data) {
  auto* op = static_cast<RecvOp*>(user_data);
  if (status == UCS_OK)
    op->impl->complete(op->from, op->serial);
  else if (status != UCS_ERR_CANCELED)
    op->impl->fail(op->from, "a UCX receive from it failed: " + status_text(status));
  delete op;
  ucp_request_free(request);
}

void UcxTransport::Impl::complete(int from, uint64_t serial) {
  for (auto& a : inbox_[static_cast<std::size_t>(from)])
    if (a.serial == serial)
      a.done = true;
  deliver(from);
}

void UcxTransport::Impl::deliver(int from) {
  if (closing_)
    return;
  auto& queue = inbox_[static_cast<std::size_t>(from)];
  while (!queue.empty() && queue.front().done) {
    auto a = std::move(queue.front());
    queue.pop_front();
    const auto* data = a.bytes.get();
    const auto size = a.size;
    events_.frame(from, a.header, FrameBytes{std::move(a.bytes), data, size});
  }
}

void UcxTransport::Impl::try_admit(int from) {
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
} // namespace troupe::internal

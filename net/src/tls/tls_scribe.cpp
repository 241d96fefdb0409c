#include <troupe/net/tls/tls_scribe.hpp>

#include <troupe/core/errors.hpp>

namespace troupe::internal {

TlsScribe::TlsScribe(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
                     std::shared_ptr<TlsContext> context)
  : caf::io::scribe(caf::io::network::conn_hdl_from_socket(fd)), stream_(mpx, fd, std::move(context), fd) {}

TlsScribe::TlsScribe(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
                     std::shared_ptr<TlsContext> context, SSL* established)
  : caf::io::scribe(caf::io::network::conn_hdl_from_socket(fd)), stream_(mpx, fd, std::move(context), established) {}

void TlsScribe::configure_read(caf::io::receive_policy::config config) {
  stream_.configure_read(config);
  if (!launched_)
    launch();
}

void TlsScribe::ack_writes(bool enable) {
  stream_.ack_writes(enable);
}

std::vector<char>& TlsScribe::wr_buf() {
  return stream_.wr_buf();
}

std::vector<char>& TlsScribe::rd_buf() {
  return stream_.rd_buf();
}

void TlsScribe::graceful_shutdown() {
  stream_.graceful_shutdown();
  detach(&stream_.backend(), false);
}

void TlsScribe::flush() {
  stream_.flush(this);
}

std::string TlsScribe::addr() const {
  auto x = caf::io::network::remote_addr_of_fd(stream_.fd());
  return x ? *x : std::string{};
}

uint16_t TlsScribe::port() const {
  auto x = caf::io::network::remote_port_of_fd(stream_.fd());
  return x ? *x : uint16_t{0};
}

void TlsScribe::launch() {
  launched_ = true;
  stream_.start(this);
}

void TlsScribe::add_to_loop() {
  stream_.activate(this);
}

void TlsScribe::remove_from_loop() {
  stream_.passivate();
}

TlsDoorman::TlsDoorman(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
                       std::shared_ptr<TlsContext> context)
  : caf::io::network::doorman_impl(mpx, fd), context_(std::move(context)) {}

bool TlsDoorman::new_connection() {
  const auto fd = acceptor_.accepted_socket();
  if (detached()) { // the broker let go of this doorman while the loop still had its events
    caf::io::network::close_socket(fd);
    return false;
  }
  auto& mpx = acceptor_.backend();
  // Never throws for OpenSSL: a session it cannot make fails the first read.
  caf::io::scribe_ptr scribe = caf::make_counted<TlsScribe>(mpx, fd, context_);
  auto hdl = scribe->hdl();
  parent()->add_scribe(std::move(scribe));
  return doorman::new_connection(&mpx, hdl);
}

caf::io::network::default_multiplexer& default_multiplexer_of(caf::io::network::multiplexer& mpx) {
  auto* mine = dynamic_cast<caf::io::network::default_multiplexer*>(&mpx);
  if (mine == nullptr)
    fail(Errc::internal, "TROUPE_TLS=1 needs CAF's default network backend");
  return *mine;
}

} // namespace troupe::internal

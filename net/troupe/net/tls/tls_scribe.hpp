#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/doorman_impl.hpp>
#include <caf/io/network/stream_impl.hpp>
#include <caf/io/scribe.hpp>

#include <troupe/net/tls/tls_session.hpp>

namespace troupe::internal {

/// A CAF scribe whose bytes travel through TLS (TlsSession): any broker,
/// BASP included, uses it as it would CAF's plain one (scribe_impl, whose
/// shape this copies). Made on any thread; used on the middleman's.
class TlsScribe : public caf::io::scribe {
public:
  /// The server side of a connection CAF accepted (TlsDoorman): the
  /// handshake finishes inside the first reads.
  TlsScribe(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
            std::shared_ptr<TlsContext> context);
  /// Over `established`, a session whose handshake completed (either side).
  TlsScribe(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
            std::shared_ptr<TlsContext> context, SSL* established);

  void configure_read(caf::io::receive_policy::config config) override;
  void ack_writes(bool enable) override;
  std::vector<char>& wr_buf() override;
  std::vector<char>& rd_buf() override;
  void graceful_shutdown() override;
  void flush() override;
  std::string addr() const override;
  uint16_t port() const override;
  void add_to_loop() override;
  void remove_from_loop() override;

private:
  void launch();

  bool launched_ = false;
  caf::io::network::stream_impl<TlsSession> stream_;
};

/// A CAF doorman whose accepted connections are TlsScribes (server side).
class TlsDoorman : public caf::io::network::doorman_impl {
public:
  TlsDoorman(caf::io::network::default_multiplexer& mpx, caf::io::network::native_socket fd,
             std::shared_ptr<TlsContext> context);

  bool new_connection() override;

private:
  std::shared_ptr<TlsContext> context_;
};

/// The middleman's multiplexer as the default one TLS scribes need;
/// Error(internal) under another backend.
[[nodiscard]] caf::io::network::default_multiplexer& default_multiplexer_of(caf::io::network::multiplexer& mpx);

} // namespace troupe::internal

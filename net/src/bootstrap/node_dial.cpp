#include <troupe/net/bootstrap/node_dial.hpp>

#include <chrono>
#include <set>

#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp_broker.hpp>

#include <troupe/core/errors.hpp>
#include <troupe/net/auth/connection_auth.hpp>
#include <troupe/net/bootstrap/node_actor.hpp>
#include <troupe/net/link/tcp_dial.hpp>
#include <troupe/net/tls/tls_handshake.hpp>
#include <troupe/net/tls/tls_scribe.hpp>

namespace troupe::internal {

caf::expected<NodeActorHandle> dial_node(caf::actor_system& system, const NodeDialer& me,
                                         const NodeDialTarget& target, caf::timespan timeout) {
  using Clock = std::chrono::steady_clock;
  const auto& host = target.host;
  const auto port = target.port;
  const auto deadline = Clock::now() + timeout;
  auto dialed = dial_tcp(host, port, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  if (dialed.fd < 0)
    return caf::make_error(caf::sec::cannot_connect_to_node, "cannot connect to " + host + ":" + std::to_string(port)
                                                               + ": " + dialed.error);
  auth::DialOutcome proven;
  try {
    proven = auth::dial_handshake(dialed.fd, deadline, me.key, auth::Purpose::control_plane, me.spec_fingerprint,
                                  me.rank, target.rank, me.pid, me.tls != nullptr);
  } catch (const std::exception& e) { // OpenSSL failed: this attempt fails, the caller may try again
    proven = {auth::DialEnd::unreachable, e.what()};
  }
  if (proven.end != auth::DialEnd::proven) {
    ::close(dialed.fd);
    const auto at = host + ":" + std::to_string(port);
    switch (proven.end) {
      case auth::DialEnd::other_token:
        return caf::make_error(NodeActor::other_cluster_refusal,
                               "task " + target.task + " refused this process: its cluster token differs from task "
                                 + target.task + "'s (every task of a cluster must have the same TROUPE_CLUSTER_TOKEN)");
      case auth::DialEnd::other_spec:
        return caf::make_error(NodeActor::other_cluster_refusal,
                               "task " + target.task + " refused this process: its cluster spec differs from task "
                                 + target.task + "'s (every task must get the same TF_CONFIG \"cluster\")");
      case auth::DialEnd::other_tls:
        return caf::make_error(NodeActor::other_cluster_refusal,
                               "task " + target.task + " refused this process: its TROUPE_TLS differs from task "
                                 + target.task + "'s (set TROUPE_TLS alike on every task)");
      case auth::DialEnd::refused:
        return caf::make_error(Errc::invalid_argument, "task " + target.task + " at " + at + ": " + proven.why);
      case auth::DialEnd::impostor:
        return caf::make_error(Errc::invalid_argument, "the process at " + at + " is not task " + target.task + ": "
                                                         + proven.why);
      default:
        return caf::make_error(caf::sec::cannot_connect_to_node,
                               "troupe's handshake with " + at + " failed: " + proven.why);
    }
  }
  if (Clock::now() >= deadline) {
    ::close(dialed.fd);
    return caf::make_error(caf::sec::connection_timeout, "connecting to " + host + ":" + std::to_string(port)
                                                           + " took the whole time given; no time was left for "
                                                             "CAF's handshake");
  }
  auto& middleman = system.middleman();
  // The middleman made its BASP broker when it started; this finds it.
  auto basp = middleman.named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  caf::io::scribe_ptr scribe;
  if (me.tls) {
    // TLS before CAF gets the socket, within what is left of the deadline.
    std::string why;
    SSL* ssl = tls_connect(*me.tls, dialed.fd, deadline, why);
    caf::io::network::default_multiplexer* mpx = nullptr;
    try {
      mpx = ssl != nullptr ? &default_multiplexer_of(middleman.backend()) : nullptr;
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (mpx == nullptr) {
      TlsHandoff release(ssl);
      ::close(dialed.fd);
      return caf::make_error(caf::sec::cannot_connect_to_node, "TLS with " + host + ":" + std::to_string(port)
                                                                 + " failed: " + why);
    }
    scribe = caf::make_counted<TlsScribe>(*mpx, dialed.fd, me.tls, ssl);
  } else {
    scribe = middleman.backend().new_scribe(dialed.fd);
  }
  const auto left = std::max(caf::timespan{std::chrono::milliseconds(1)},
                             std::chrono::duration_cast<caf::timespan>(deadline - Clock::now()));
  caf::scoped_actor self{system};
  caf::expected<NodeActorHandle> result{caf::make_error(caf::sec::cannot_connect_to_node)};
  self->request(basp, left, caf::connect_atom::value, std::move(scribe), port)
    .receive(
      [&](caf::node_id&, caf::strong_actor_ptr& published, std::set<std::string>&) {
        // CAF checks no interface here: whoever listens on a task's
        // address is taken for its node actor, and its hello says whether it is.
        if (published)
          result = caf::actor_cast<NodeActorHandle>(std::move(published));
        else
          result = caf::make_error(caf::sec::no_actor_published_at_port,
                                   "nothing is published at " + host + ":" + std::to_string(port));
      },
      [&](caf::error& e) {
        if (e == caf::sec::request_timeout)
          result = caf::make_error(caf::sec::connection_timeout,
                                   host + ":" + std::to_string(port)
                                     + " accepted the connection but never completed CAF's handshake");
        else
          result = std::move(e);
      });
  return result;
}

} // namespace troupe::internal

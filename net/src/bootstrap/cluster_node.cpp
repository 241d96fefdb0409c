#include <troupe/net/bootstrap/cluster_node.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <utility>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <caf/io/basp_broker.hpp>

#include <troupe/net/bootstrap/cluster_types.hpp>
#include <troupe/net/bootstrap/control_plane_gate.hpp>
#include <troupe/net/bootstrap/node_actor.hpp>
#include <troupe/net/bootstrap/node_dial.hpp>
#include <troupe/net/handshake.hpp>
#include <troupe/net/auth/cluster_auth.hpp>
#include <troupe/net/auth/token_policy.hpp>
#include <troupe/net/link/cross_memory.hpp>
#include <troupe/net/link/data_plane_broker.hpp>
#include <troupe/net/link/transport_choice.hpp>
#include <troupe/net/ucx/ucx_transport.hpp>
#include <troupe/net/tls/tls_scribe.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/core/log.hpp>

namespace troupe::internal {

namespace {

using Clock = std::chrono::steady_clock;

// IP literals are bound as given (tasks on distinct addresses of one host);
// host names bind every interface, since a name may not resolve to one.
std::string bind_host_of(const std::string& host) {
  if (host == "localhost")
    return "127.0.0.1";
  const bool ipv4 = host.find_first_not_of("0123456789.") == std::string::npos;
  const bool ipv6 = host.find(':') != std::string::npos;
  return ipv4 || ipv6 ? host : std::string{};
}

caf::timespan left_until(Clock::time_point deadline) {
  return std::max(caf::timespan{std::chrono::milliseconds(1)},
                  std::chrono::duration_cast<caf::timespan>(deadline - Clock::now()));
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", s);
  return buf;
}

caf::timespan timespan_of(double seconds) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(seconds));
}

// The data plane of task `rank`: which port, and when a peer or a connection counts as gone.
DataPlaneSetup data_plane_setup(int rank, const std::vector<std::string>& task_names, uint16_t task_port,
                                const std::string& bind_host, std::shared_ptr<TlsContext> tls) {
  const auto& me = task_names[static_cast<size_t>(rank)];
  const auto& k = knobs();
  DataPlaneSetup setup;
  setup.tls = tls;
  setup.max_frame_bytes = static_cast<uint32_t>(k.max_frame_bytes);
  setup.rank = rank;
  setup.task_names = task_names;
  setup.key = auth::derive_key(k.cluster_token, auth::Purpose::data_plane);
  setup.bind_host = bind_host;
  if (k.data_port_offset != 0) {
    // A fixed port beside the task's own, for firewalls: TF_CONFIG lists only the task's port.
    if (task_port + k.data_port_offset > 65535)
      fail(Errc::invalid_argument, "task " + me + " cannot place its data port at " + std::to_string(task_port)
                                     + " + TROUPE_DATA_PORT_OFFSET=" + std::to_string(k.data_port_offset)
                                     + ": ports end at 65535; choose a smaller offset");
    setup.port = static_cast<uint16_t>(task_port + k.data_port_offset);
    setup.port_origin = "the task's port " + std::to_string(task_port) + " + TROUPE_DATA_PORT_OFFSET="
                        + std::to_string(k.data_port_offset);
  }
  setup.peer_timeout = timespan_of(k.peer_timeout_seconds);
  setup.hint_grace = timespan_of(k.peer_heartbeat_seconds);
  setup.hello_timeout = timespan_of(k.handshake_timeout_seconds);
  setup.transport = k.transport;
  setup.ucx_spin = std::chrono::microseconds(k.ucx_spin_us);
  return setup;
}

// How long a process refused for its token or spec goes on presenting
// itself to the members it has not reached: the ones that started answer
// within milliseconds (and are not retried), so this only bounds the wait
// for members that start later; one that starts after it waits for the
// refused task until its own init timeout.
constexpr auto refusal_spread_window = std::chrono::seconds(10);

// Presents this (refused) process to every member but itself and the one
// that refused it, retrying those not reached until the window closes.
// `present(r, bound)` is one attempt of at most `bound`; false when r was
// not reached.
void spread_refusal(int members, int me, int refused_by, Clock::time_point deadline,
                    const std::function<bool(int, caf::timespan)>& present) {
  std::set<int> untold;
  for (int r = 0; r < members; ++r)
    if (r != me && r != refused_by)
      untold.insert(r);
  const auto until = std::min(deadline, Clock::now() + refusal_spread_window);
  for (;;) {
    for (auto it = untold.begin(); it != untold.end() && Clock::now() < until;)
      it = present(*it, std::min<caf::timespan>(std::chrono::seconds(2), left_until(until))) ? untold.erase(it)
                                                                                              : std::next(it);
    if (untold.empty() || Clock::now() >= until)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // members still starting: retry
  }
}

} // namespace

ClusterNode::ClusterNode(caf::actor_system& system, std::shared_ptr<const ClusterResolver> resolver)
  : system_(system), resolver_(std::move(resolver)), task_type_(resolver_->task_type()),
    task_index_(resolver_->task_id()), members_(resolver_->cluster_spec()) {
  try {
    join();
  } catch (...) {
    // The actor system would wait for these actors forever.
    stop_actors();
    throw;
  }
}

void ClusterNode::join() {
  const auto spec = resolver_->cluster_spec();
  member_index_ = members_.index_of(task_type_, task_index_);
  // The chief (TensorFlow's worker 0 when there is one), then the workers:
  // the first members, so that a participant's member index is its rank.
  const int participants = members_.participants();
  task_names_.assign(members_.names().begin(), members_.names().begin() + participants);
  if (member_index_ >= 0 && member_index_ < participants)
    rank_ = member_index_;
  // Every log line of this process names its task from here on.
  set_log_task(task_type_ + ":" + std::to_string(task_index_));
  if (member_index_ < 0)
    return; // evaluator tasks run outside the cluster, as in TensorFlow
  const auto& k = knobs();
  const auto join_started = Clock::now();
  const auto deadline =
    join_started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(k.cluster_init_timeout_seconds));
  const auto& names = members_.names();
  const auto& addresses = members_.addresses();
  {
    std::vector<std::string> hosts;
    for (const auto& address : addresses)
      hosts.push_back(parse_task_address(address).host);
    if (auto warning = auth::check_token_policy(k.cluster_token, hosts, k.allow_unauthenticated); !warning.empty())
      TROUPE_LOG(warning, "net") << warning;
  }
  const auto me = names[static_cast<size_t>(member_index_)];
  const auto my_address = parse_task_address(addresses[static_cast<size_t>(member_index_)]);
  const auto bind_host = bind_host_of(my_address.host);
  caf::scoped_actor self{system_};
  // TROUPE_TLS=1: one context (its key from the token) for every connection of both planes.
  const auto tls = k.tls ? TlsContext::make(auth::derive_key(k.cluster_token, auth::Purpose::tls))
                         : std::shared_ptr<TlsContext>{};

  // 1. The data plane (chief and workers) listens on a free port of the
  //    task's interface (or the task's port + TROUPE_DATA_PORT_OFFSET).
  uint16_t data_port = 0;
  UcxOffer ucx_offer;
  std::string error;
  if (participates()) {
    caf::actor_config cfg{&system_.middleman().backend()};
    auto setup = data_plane_setup(rank_, task_names_, my_address.port, bind_host, tls);
    setup.spec_fingerprint = spec.fingerprint();
    data_plane_ = system_.spawn_class<DataPlaneBroker, caf::no_spawn_options>(cfg, std::move(setup));
    self->request(data_plane_, std::chrono::seconds(10), DataPlanePortMsg{})
      .receive([&](uint16_t port) { data_port = port; }, [&](caf::error& e) { error = system_.render(e); });
    if (data_port == 0)
      fail(Errc::not_found, "task " + me + " cannot open its data plane: " + error);
    TROUPE_LOG(info, "net") << "task " << me << "'s data plane listens on port " << data_port;
    self->request(data_plane_, std::chrono::seconds(10), DataPlaneUcxOfferMsg{})
      .receive([&](UcxOffer& offer) { ucx_offer = std::move(offer); },
               [&](caf::error& e) { ucx_offer.error = system_.render(e); });
  }

  // 2. The node actor answers hellos on the task's own address.
  HelloMsg hello;
  hello.rank = member_index_;
  hello.task = me;
  hello.spec_fingerprint = spec.fingerprint();
  hello.data_port = data_port;
  hello.pid = static_cast<int32_t>(::getpid());
  hello.host = bind_host.empty() ? my_address.host : bind_host;
  hello.ucx_address = ucx_offer.address;
  hello.ucx_nonce = ucx_offer.nonce;
  hello.ucx_error = ucx_offer.error;
  hello.shm_domain = shared_memory_domain();
  hello.transport = k.transport;
  hello.cross_memory = k.transport != "tcp" && !k.tls && cross_memory_attach_works();
  // Every data-plane task's offer, this one's first: the transport is chosen from them.
  std::map<int, TransportOffer> offers;
  const auto offer_of = [](const HelloMsg& h) {
    return TransportOffer{h.task, h.transport, !h.ucx_address.empty(), h.ucx_error, h.shm_domain};
  };
  offers[member_index_] = offer_of(hello);
  // The members whose memory this task may read (parameter-server bulk
  // bytes): same boot, namespaces and user, by their hellos, which came over
  // the authenticated control plane, and reading others too.
  std::map<caf::node_id, int32_t> readable;
  const auto note_readable = [&](const HelloMsg& h, const NodeActorHandle& node) {
    if (may_read_each_other(hello, h) && node)
      readable[node.node()] = h.pid;
  };
  // A parameter-server coordinator goes on with the workers it has, so a
  // restarted worker process may join again; in a cluster without ps tasks
  // every task is part of every collective and none rejoins.
  const std::string restartable_job = members_.tasks_of("ps").empty() ? "" : "worker";
  node_ = system_.spawn<NodeActor>(NodeSetup{hello, names, addresses, participants, data_plane_, join_started,
                                             k.cluster_init_timeout_seconds, restartable_job});
  hello.node = node_;
  nodes_[member_index_] = node_;
  // Only dialers that proved the cluster token reach CAF's BASP broker
  // (ControlPlaneGate); to BASP each is a connection accepted on a port
  // where the node is published. Published as a plain actor: a typed handle
  // would put its interface into CAF's handshake, naming in-process messages
  // that have no type ID, and no peer checks it (dial_node casts what it gets).
  const auto control_key = auth::derive_key(k.cluster_token, auth::Purpose::control_plane);
  {
    ControlPlaneGateSetup gate;
    gate.bind_host = bind_host;
    gate.port = my_address.port;
    gate.key = control_key;
    gate.spec_fingerprint = spec.fingerprint();
    gate.rank = member_index_;
    gate.tls = tls;
    gate.handshake_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(k.handshake_timeout_seconds));
    auto basp = system_.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
    gate.admit = [this, basp, tls, node = caf::actor_cast<caf::strong_actor_ptr>(node_),
                  port = my_address.port](int fd, SSL* ssl) {
      caf::io::scribe_ptr scribe;
      if (!tls) {
        scribe = system_.middleman().backend().new_scribe(fd);
      } else {
        // The gate completed TLS: the scribe takes the established session.
        scribe = caf::make_counted<TlsScribe>(default_multiplexer_of(system_.middleman().backend()), fd, tls, ssl);
      }
      caf::anon_send(basp, caf::publish_atom_v, std::move(scribe), port, node, std::set<std::string>{});
    };
    gate.refused = [node = node_](const GateRefusal& r) {
      caf::anon_send(node, NodeGateRefusalMsg{r.address, r.claimed_rank, r.pid, r.other_token, r.other_spec,
                                              r.other_tls, r.spec_fingerprint, r.why});
    };
    std::string why;
    gate_ = ControlPlaneGate::open(std::move(gate), why);
    if (!gate_)
      fail(Errc::failed_precondition, "task " + me + " cannot listen on its address "
                                        + addresses[static_cast<size_t>(member_index_)] + ": " + why
                                        + "; is another process using that port (a second process started as task "
                                        + me + "?), or is the address not this host's?");
  }
  const NodeDialer dialer{control_key, spec.fingerprint(), member_index_, static_cast<int>(::getpid()), tls};

  // 3. Reach every member of lower index, retrying while it starts. When
  //    the first one answers that the cluster formed and took this process
  //    back (a restarted worker of a parameter-server cluster), nobody will
  //    dial it: it reaches every member itself, and skips steps 4 and 5.
  //    Each attempt is bounded (dial_node), so that a peer that never speaks
  //    cannot hold this task past its deadline, and a doom is seen within one.
  std::vector<DataPlanePeer> peers;
  const auto progress_every = join_progress_interval(k.cluster_init_timeout_seconds);
  auto next_progress = join_started + progress_every;
  bool rejoined = false;
  // A connect and CAF's handshake get 2 s at most, so that a doom is seen
  // soon; a peer that connected answers its hello within milliseconds, but
  // gets 10 s on a busy machine (a repeated hello is answered as the first).
  const auto dial_bound = [&] { return std::min<caf::timespan>(std::chrono::seconds(2), left_until(deadline)); };
  const auto hello_bound = [&] { return std::min<caf::timespan>(std::chrono::seconds(10), left_until(deadline)); };
  // One hello to member r: accepted (the peer is recorded), refused (why in
  // `refusal`; `other_cluster` when for this process's token or spec), or
  // not reached (why in `last_error`); connected within `dial_within`, and
  // the whole attempt within `total_within`.
  enum class Presented { accepted, refused, unreached };
  auto present_to = [&](int r, caf::timespan dial_within, caf::timespan total_within, std::string& refusal,
                        bool& other_cluster, std::string& last_error) {
    const auto& address = addresses[static_cast<size_t>(r)];
    const auto target = parse_task_address(address);
    const auto attempt_started = Clock::now();
    auto remote = dial_node(system_, dialer, NodeDialTarget{r, names[static_cast<size_t>(r)], target.host, target.port},
                            dial_within);
    if (!remote) {
      const auto& e = remote.error();
      if (e.category() == caf::atom("troupe")) { // refused in troupe's handshake, or an impostor
        refusal = system_.render(e);
        other_cluster = static_cast<Errc>(e.code()) == NodeActor::other_cluster_refusal;
        return Presented::refused;
      }
      last_error = system_.render(e);
      return Presented::unreached;
    }
    const auto answer_within = std::max<caf::timespan>(
      std::chrono::milliseconds(1),
      std::chrono::duration_cast<caf::timespan>(total_within - (Clock::now() - attempt_started)));
    auto outcome = Presented::unreached;
    self->request(*remote, answer_within, hello)
      .receive(
        [&](HelloMsg& reply) {
          if (reply.rank != r || reply.task != names[static_cast<size_t>(r)]) {
            refusal = "the process at " + address + " is task " + reply.task + ", not " + names[static_cast<size_t>(r)];
            outcome = Presented::refused;
            return;
          }
          if (participates() && r < participants) {
            peers.push_back({r, target.host, reply.data_port, reply.ucx_address, reply.ucx_nonce});
            offers[r] = offer_of(reply);
          }
          if (reply.rejoined && !rejoined) {
            rejoined = true;
            anon_send(node_, NodeRejoinedMsg{});
          }
          nodes_[r] = *remote;
          note_readable(reply, *remote);
          anon_send(node_, NodePeerMsg{*remote, reply});
          outcome = Presented::accepted;
        },
        [&](caf::error& e) {
          if (e.category() == caf::atom("troupe")) {
            refusal = system_.render(e);
            other_cluster = static_cast<Errc>(e.code()) == NodeActor::other_cluster_refusal;
            outcome = Presented::refused;
          } else {
            last_error = system_.render(e);
          }
        });
    return outcome;
  };
  for (int r = 0; r < static_cast<int>(names.size()); ++r) {
    if (r == member_index_)
      continue;
    if (r > member_index_ && !rejoined)
      break;
    const auto& address = addresses[static_cast<size_t>(r)];
    std::string last_error;
    for (;;) {
      // A process refused as one of the higher ranks dooms the cluster: fail
      // now rather than after reaching every lower rank.
      std::string doomed;
      self->request(node_, std::chrono::seconds(10), NodeDoomedMsg{})
        .receive([&](std::string& why) { doomed = std::move(why); }, [](caf::error&) {});
      if (!doomed.empty())
        fail(Errc::failed_precondition, "task " + me + " cannot form the cluster: " + doomed);
      std::string refusal;
      bool other_cluster = false;
      const auto presented =
        present_to(r, dial_bound(), std::min(dial_bound() + hello_bound(), left_until(deadline)), refusal,
                   other_cluster, last_error);
      if (presented == Presented::refused) {
        // Refused for its token or spec, this process was started with other
        // settings than the cluster's: the members still waiting for the task
        // it claims to be learn that from its hello and fail at once, naming
        // the cause, instead of waiting out their init timeout.
        if (other_cluster)
          spread_refusal(static_cast<int>(names.size()), member_index_, r, deadline,
                         [&](int other, caf::timespan bound) {
                           std::string ignored_refusal, ignored_error;
                           bool ignored = false;
                           return present_to(other, bound, bound, ignored_refusal, ignored, ignored_error)
                                  != Presented::unreached;
                         });
        fail(Errc::failed_precondition, "task " + me + " cannot join the cluster: " + refusal);
      }
      if (presented == Presented::accepted)
        break;
      if (Clock::now() >= deadline)
        fail(Errc::timeout, "task " + me + " could not reach task " + names[static_cast<size_t>(r)] + " at "
                              + address + " within " + seconds(k.cluster_init_timeout_seconds)
                              + " (TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS): " + last_error
                              + ". Start every task of TF_CONFIG's cluster, and check the address.");
      if (Clock::now() >= next_progress) {
        next_progress += progress_every;
        TROUPE_LOG(warning, "net") << "task " << me << " is waiting for task " << names[static_cast<size_t>(r)]
                                   << " at " << address << " to start "
                                   << join_progress(join_started, k.cluster_init_timeout_seconds) << ": " << last_error;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100)); // the peer is still starting: retry
    }
  }

  if (rejoined) {
    // A parameter-server cluster runs no collectives: the rejoined worker
    // needs no data plane, and its control connections decide losses.
    if (data_plane_)
      caf::anon_send_exit(data_plane_, caf::exit_reason::user_shutdown);
    data_plane_ = nullptr;
    TROUPE_LOG(info, "net") << "task " << me << " rejoined a formed cluster of " << names.size()
                            << " tasks in place of its earlier process";
    CrossMemoryPeers::set(std::move(readable));
    return;
  }

  // 4. Wait for the members of higher index to say hello.
  std::vector<HelloMsg> all;
  error.clear();
  auto code = Errc::timeout;
  self->request(node_, caf::infinite, NodeAwaitMsg{left_until(deadline)})
    .receive([&](std::vector<HelloMsg>& hellos) { all = std::move(hellos); },
             [&](caf::error& e) {
               error = system_.render(e);
               if (e.category() == caf::atom("troupe"))
                 code = static_cast<Errc>(e.code());
             });
  if (!error.empty())
    fail(code, "task " + me + " cannot form the cluster: " + error);
  for (const auto& h : all)
    if (h.rank > member_index_) {
      nodes_[h.rank] = h.node;
      note_readable(h, h.node);
      if (participates() && h.rank < participants) {
        peers.push_back({h.rank, parse_task_address(addresses[static_cast<size_t>(h.rank)]).host, h.data_port,
                         h.ucx_address, h.ucx_nonce});
        offers[h.rank] = offer_of(h);
      }
    }

  // 5. Connect the data plane: lower ranks are dialled, higher ones dial in.
  if (participates()) {
    std::vector<TransportOffer> all_offers;
    for (auto& [rank, offer] : offers)
      all_offers.push_back(std::move(offer));
    const auto transport = choose_transport(all_offers);
    if (!transport.error.empty())
      fail(Errc::failed_precondition, "task " + me + " cannot connect its data plane: " + transport.error);
    TROUPE_LOG(info, "net") << "task " << me << "'s data plane runs over "
                            << (transport.ucx ? "UCX shared memory" : "TCP") << ": " << transport.why;
    bool connected = false;
    self->request(data_plane_, left_until(deadline),
                  DataPlaneConnectMsg{peers, left_until(deadline), transport.ucx})
      .receive([&](bool) { connected = true; }, [&](caf::error& e) { error = system_.render(e); });
    if (!connected)
      fail(Errc::timeout, "task " + me + " cannot connect its data plane to the other tasks: " + error);
    if (transport.ucx)
      self->request(data_plane_, std::chrono::seconds(10), DataPlaneSenderMsg{})
        .receive([&](FrameSenderRef& ref) { frame_sender_ = std::move(ref.sender); }, [](caf::error&) {});
  }
  CrossMemoryPeers::set(std::move(readable));
  TROUPE_LOG(info, "net") << "task " << me << " joined a cluster of " << names.size() << " tasks";
}

NodeActorHandle ClusterNode::node_of(std::string_view task) const {
  if (!is_member())
    fail(Errc::invalid_argument, "task " + task_type_ + ":" + std::to_string(task_index_)
                                   + " is no member of the cluster (only chief, worker and ps tasks are), so it "
                                     "cannot reach task " + std::string(task));
  const int index = members_.index_of(task);
  auto i = nodes_.find(index);
  if (index < 0 || i == nodes_.end()) {
    std::string all;
    for (const auto& name : members_.names())
      all += (all.empty() ? "" : ", ") + name;
    fail(Errc::invalid_argument, "no task \"" + std::string(task) + "\" in the cluster: its members are " + all);
  }
  return i->second;
}

void ClusterNode::publish(const std::string& name, const caf::actor& actor) {
  if (!node_)
    fail(Errc::failed_precondition, "task " + task_type_ + ":" + std::to_string(task_index_)
                                      + " is no member of the cluster: it cannot publish \"" + name + "\"");
  if (name.size() > NodeLookupMsg::max_name_bytes)
    fail(Errc::invalid_argument, "cannot publish an actor as a " + std::to_string(name.size())
                                   + "-byte name: names have at most "
                                   + std::to_string(NodeLookupMsg::max_name_bytes) + " bytes");
  caf::anon_send(node_, NodePublishMsg{name, actor});
}

caf::actor ClusterNode::lookup(std::string_view task, const std::string& name, caf::timespan timeout) const {
  const auto node = node_of(task);
  caf::scoped_actor self{system_};
  caf::actor found;
  std::string error;
  auto code = Errc::timeout;
  self->request(node, timeout, NodeLookupMsg{name})
    .receive([&](caf::actor& actor) { found = std::move(actor); },
             [&](caf::error& e) {
               error = system_.render(e);
               if (e.category() == caf::atom("troupe"))
                 code = static_cast<Errc>(e.code());
               else if (e != caf::sec::request_timeout)
                 code = Errc::peer_lost;
             });
  if (!found)
    fail(code, "task " + task_type_ + ":" + std::to_string(task_index_) + " found no actor \"" + name
                 + "\" on task " + std::string(task) + " within " + seconds(std::chrono::duration<double>(timeout).count())
                 + ": " + error + " (is it published there, and is the task running?)");
  return found;
}

void ClusterNode::watch_losses(const caf::actor& listener) {
  if (node_ && listener)
    caf::anon_send(node_, NodeWatchMsg{listener});
}

void ClusterNode::say_farewell(const std::string& job_error) {
  if (!node_ || std::exchange(farewell_said_, true))
    return;
  caf::scoped_actor self{system_};
  std::string bounded_error = job_error.substr(0, NodeFarewellMsg::max_job_error_bytes);
  self->request(node_, std::chrono::seconds(2), NodeSayFarewellMsg{std::move(bounded_error), std::chrono::seconds(1)})
    .receive([](bool) {}, [](caf::error&) {});
}

ClusterNode::~ClusterNode() {
  CrossMemoryPeers::clear();
  // The chief's leaving ends the job everywhere, so every member must see it
  // as leaving: one that decides by the control connection alone (a ps task,
  // a rejoined worker) may see the connection drop before the chief's node's
  // exit reaches it. The other members are on their way out by now.
  if (task_type_ == "chief")
    say_farewell("");
  if (data_plane_) {
    caf::scoped_actor self{system_};
    // Bounded: a peer that stopped reading must not keep this process alive.
    self->request(data_plane_, std::chrono::seconds(5), DataPlaneByeMsg{}).receive([](bool) {}, [](caf::error&) {});
  }
  stop_actors();
}

void ClusterNode::stop_actors() {
  gate_.reset(); // first: it hands connections to the node
  if (data_plane_)
    caf::anon_send_exit(data_plane_, caf::exit_reason::user_shutdown);
  if (node_)
    caf::anon_send_exit(node_, caf::exit_reason::user_shutdown);
  data_plane_ = nullptr;
  frame_sender_ = nullptr;
  node_ = nullptr;
}

} // namespace troupe::internal

#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/system_messages.hpp>
#include <caf/error.hpp>
#include <caf/event_based_actor.hpp>

#include <troupe/actors/fibers/completion.hpp>
#include <troupe/actors/ps/parameter_server_messages.hpp>
#include <troupe/actors/ps/ps_cross_memory.hpp>
#include <troupe/actors/runtime/executor.hpp>
#include <troupe/actors/runtime/request_error.hpp>
#include <troupe/core/errors.hpp>

namespace troupe::internal {

/// TROUPE_COLLECTIVE_TIMEOUT_SECONDS: the deadline of every request to a server.
[[nodiscard]] caf::timespan ps_request_timeout();
/// "<what> failed: <err>", with a hint on a timeout.
[[nodiscard]] std::string request_failure(caf::local_actor& self, const std::string& what, const caf::error& err,
                                          Errc code);
/// "<what> failed: the server's actor terminated (<reason>): its task was lost".
[[nodiscard]] std::string lost_server_failure(caf::local_actor& self, const std::string& what,
                                              const caf::down_msg& msg);

namespace detail {
template <class Reply>
struct ReplyCallback {
  using type = std::function<void(Reply&)>;
};
template <>
struct ReplyCallback<void> {
  using type = std::function<void()>;
};
} // namespace detail

/// The requests one actor makes to parameter servers, each settled exactly
/// once: by its answer, by its error, or by its server's down. CAF fails a
/// request to a lost actor only at its deadline, so the client monitors
/// every server it asks and, when one goes down (its process died, or froze
/// past the peer timeout), fails the requests to it at once. Every request
/// has the collective timeout (TROUPE_COLLECTIVE_TIMEOUT_SECONDS) as its
/// deadline. Failures name the request (`what`, e.g. "ShardedVariable 'w':
/// read of shard 1 on parameter server /job:ps/replica:0/task:0/device:CPU:0")
/// and the cause, in the same words for every caller.
///
/// Lives in its actor (one per actor; the actor's down handler calls
/// server_down) and is used from its handlers only. `Self` is the actor's
/// type (an event-based actor, typed or not).
template <class Self>
class BasicPsClient {
public:
  /// A failed request: its code and its message ("<what> failed: <why>").
  using OnFailure = std::function<void(Errc code, std::string message)>;
  template <class Reply>
  using OnReply = typename detail::ReplyCallback<Reply>::type;

  explicit BasicPsClient(Self* self) : self_(self), timeout_(ps_request_timeout()) {}
  // Its requests' callbacks point to it.
  BasicPsClient(const BasicPsClient&) = delete;
  BasicPsClient& operator=(const BasicPsClient&) = delete;

  /// Sends `msg` to `server` and calls exactly one of `on_reply` and
  /// `on_failure`. `Reply` is the answer's type (void: an empty answer).
  template <class Reply, class Msg>
  void request(const ParameterServerActorHandle& server, std::string what, Msg msg, OnReply<Reply> on_reply, OnFailure on_failure);

  /// To be called from the actor's down handler: fails the open requests to
  /// the server that went down (any other down is ignored).
  void server_down(const caf::down_msg& msg) {
    auto i = in_flight_.find(msg.source);
    if (i == in_flight_.end())
      return;
    auto requests = std::move(i->second);
    in_flight_.erase(i);
    for (auto& request : requests)
      if (std::exchange(*request.open, false))
        request.on_failure(Errc::peer_lost, lost_server_failure(*self_, request.what, msg));
  }

private:
  struct Open {
    std::shared_ptr<bool> open;
    std::string what;
    OnFailure on_failure;
  };

  /// Records a new request to `server` (monitoring it first); returns its open flag.
  std::shared_ptr<bool> track(const ParameterServerActorHandle& server, const std::string& what,
                              const OnFailure& on_failure) {
    auto& open = in_flight_[server.address()];
    if (open.empty())
      self_->monitor(server);
    std::erase_if(open, [](const Open& request) { return !*request.open; });
    auto flag = std::make_shared<bool>(true);
    open.push_back({flag, what, on_failure});
    return flag;
  }

  Self* self_;
  caf::timespan timeout_;
  std::map<caf::actor_addr, std::vector<Open>> in_flight_;
};

/// Sets `remote` (and empties `update`'s value) when `server` runs on this
/// host and the value is worth reading from this process's memory; returns
/// the loan (ps_cross_memory.hpp's lend), to keep while the request lives.
[[nodiscard]] std::shared_ptr<const void> lend_to_server(const ParameterServerActorHandle& server,
                                                         ShardUpdate& update, CrossMemoryTensor& remote);
/// The read's value: from the reply, or read out of the server's memory
/// (`pid`, when this client allowed it; not at all unless `wanted`) and
/// released there in every case; `why` says what went wrong.
[[nodiscard]] Tensor take_read_reply(const ParameterServerActorHandle& server, std::optional<int32_t> pid,
                                     PsReadReply& reply, bool wanted, std::string& why);

/// The client of an untyped actor (ps_request_all's helper).
using PsClient = BasicPsClient<caf::event_based_actor>;

template <class Self>
template <class Reply, class Msg>
void BasicPsClient<Self>::request(const ParameterServerActorHandle& server, std::string what, Msg msg, OnReply<Reply> on_reply,
                       OnFailure on_failure) {
  auto open = track(server, what, on_failure);
  // An update's value a server on this host reads from this process's
  // memory stays lent while the request's handlers live; after that a late
  // server's read is refused by the loan, never served from reused memory.
  std::shared_ptr<const void> lent;
  if constexpr (std::is_same_v<Msg, PsApplyMsg> || std::is_same_v<Msg, PsStageMsg>)
    lent = lend_to_server(server, msg.update, msg.remote);
  auto on_error = [this, open, what, on_failure, lent](caf::error& err) {
    if (!std::exchange(*open, false))
      return;
    const auto code = request_errc(err);
    on_failure(code, request_failure(*self_, what, err, code));
  };
  if constexpr (std::is_same_v<Msg, PsReadMsg>) {
    static_assert(std::is_same_v<Reply, Tensor>, "a read answers a Tensor");
    const auto pid = CrossMemoryPeers::pid_of(server.node());
    msg.cross_memory = pid.has_value();
    self_->request(server, timeout_, std::move(msg))
      .then(
        [server, pid, open, what, on_reply = std::move(on_reply), on_failure](PsReadReply& reply) {
          // Released even when the request already settled: the server holds the bytes until then.
          std::string why;
          const bool wanted = std::exchange(*open, false);
          Tensor value = take_read_reply(server, pid, reply, wanted, why);
          if (!wanted)
            return;
          if (why.empty())
            on_reply(value);
          else
            on_failure(Errc::data_loss, what + " failed: " + why);
        },
        std::move(on_error));
  } else if constexpr (std::is_void_v<Reply>)
    self_->request(server, timeout_, std::move(msg))
      .then(
        [open, on_reply = std::move(on_reply), lent] {
          if (std::exchange(*open, false))
            on_reply();
        },
        std::move(on_error));
  else
    self_->request(server, timeout_, std::move(msg))
      .then(
        [open, on_reply = std::move(on_reply)](Reply& reply) {
          if (std::exchange(*open, false))
            on_reply(reply);
        },
        std::move(on_error));
}

/// One request of ps_request_all: where it goes, the words that start its
/// error, and the message.
template <class Msg>
struct PsRequest {
  ParameterServerActorHandle server;
  std::string what;
  Msg msg;
};

namespace detail {

/// Where ps_request_all's helper actor leaves the replies for the waiting thread.
template <class Reply>
struct PsRepliesSlot {
  using Value = std::conditional_t<std::is_void_v<Reply>, bool, Reply>;
  std::vector<std::optional<Value>> replies;
  std::optional<std::string> error; ///< the first failure
  Errc code = Errc::internal;
  std::size_t pending = 0;
  Completion done;
};

} // namespace detail

/// Sends every request at once from a helper actor (a PsClient) and waits,
/// through `runtime` (so a simulation steps the actors, and a fiber
/// suspends), until each one is settled; throws Error for the first
/// failure. The helper ends as soon as the last one is settled, rather
/// than outliving the job by the timeout of a request its server's down
/// settled. With `missing_ok`, a request the server answers with
/// Error(not_found) leaves its reply empty instead of failing the call.
/// Returns the replies in request order (for Reply = void: whether each
/// request was answered).
template <class Reply, class Msg>
auto ps_request_all(Executor& runtime, std::vector<PsRequest<Msg>> requests, const std::string& wait_what,
                    bool missing_ok) {
  using Slot = detail::PsRepliesSlot<Reply>;
  auto slot = std::make_shared<Slot>();
  slot->replies.resize(requests.size());
  slot->pending = requests.size();
  if (requests.empty())
    return std::move(slot->replies);
  runtime.system().spawn([slot, requests = std::move(requests), missing_ok](caf::event_based_actor* self) mutable {
    auto client = std::make_shared<PsClient>(self);
    self->set_down_handler([client](caf::down_msg& msg) { client->server_down(msg); });
    auto settled = [slot, self] {
      if (--slot->pending == 0) {
        slot->done.set();
        self->quit();
      }
    };
    for (std::size_t i = 0; i < requests.size(); ++i) {
      auto on_failure = [slot, settled, missing_ok](Errc code, std::string message) {
        if (!(missing_ok && code == Errc::not_found) && !slot->error) {
          slot->code = code;
          slot->error = std::move(message);
        }
        settled();
      };
      typename PsClient::template OnReply<Reply> on_reply;
      if constexpr (std::is_void_v<Reply>)
        on_reply = [slot, settled, i] {
          slot->replies[i] = true;
          settled();
        };
      else
        on_reply = [slot, settled, i](Reply& reply) {
          slot->replies[i] = std::move(reply);
          settled();
        };
      client->request<Reply>(requests[i].server, std::move(requests[i].what), std::move(requests[i].msg),
                             std::move(on_reply), std::move(on_failure));
    }
  });
  runtime.wait(slot->done, wait_what.c_str());
  if (slot->error)
    fail(slot->code, *slot->error);
  return std::move(slot->replies);
}

} // namespace troupe::internal

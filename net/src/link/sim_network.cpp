#include <troupe/net/link/sim_network.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace troupe::internal {

namespace {

std::string at_seconds(caf::timespan t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "t=%.3fs", std::chrono::duration<double>(t).count());
  return buf;
}

bool across(const SimNetwork::Window& w, int a, int b) {
  return (w.side_a.count(a) != 0 && w.side_b.count(b) != 0) || (w.side_a.count(b) != 0 && w.side_b.count(a) != 0);
}

} // namespace

SimNetwork::SimNetwork(uint64_t seed, std::vector<std::string> names, Rates rates, std::vector<Window> windows,
                       std::vector<Kill> kills, caf::timespan peer_timeout)
  : rng_(seed), names_(std::move(names)), rates_(rates), windows_(std::move(windows)), kills_(std::move(kills)),
    peer_timeout_(peer_timeout) {
}

bool SimNetwork::dead(int rank, caf::timespan now) const {
  return std::any_of(kills_.begin(), kills_.end(), [&](const Kill& k) {
    return k.rank == rank && now >= k.at
           && std::none_of(revivals_.begin(), revivals_.end(),
                           [&](const Kill& r) { return r.rank == rank && r.at > k.at && now >= r.at; });
  });
}

std::optional<caf::timespan> SimNetwork::message_delay(int from, int to, caf::timespan now) {
  ++counts_.messages;
  if (dead(from, now) || dead(to, now))
    return std::nullopt;
  const auto span = std::max<int64_t>(0, (rates_.max_delay - rates_.min_delay).count());
  std::uniform_int_distribution<int64_t> jitter(0, span);
  auto at = now + rates_.min_delay + caf::timespan{jitter(rng_)};
  auto& last = last_message_[{from, to}];
  at = std::max(at, last);
  // A window that is there when the message is sent, or that opens while it
  // is on its way, holds it (to its heal) or loses it (past the peer timeout).
  for (const auto& w : windows_) {
    if (!across(w, from, to) || w.from > at || (w.heal && *w.heal <= now))
      continue;
    if (!w.heal || *w.heal - w.from > peer_timeout_)
      return std::nullopt;
    at = std::max(at, *w.heal);
  }
  last = at;
  return at - now;
}

const SimNetwork::Window* SimNetwork::window_at(int a, int b, caf::timespan now) const {
  for (const auto& w : windows_)
    if (across(w, a, b) && now >= w.from && (!w.heal || now < *w.heal))
      return &w;
  return nullptr;
}

std::vector<caf::timespan> SimNetwork::deliveries(int from, int to, caf::timespan now, FrameType type) {
  ++counts_.frames;
  if (dead(from, now) || dead(to, now))
    return {};
  // Every draw is made for every frame, so that one fault's outcome does
  // not shift the draws of the frames after it.
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto span = std::max<int64_t>(0, (rates_.max_delay - rates_.min_delay).count());
  std::uniform_int_distribution<int64_t> jitter(0, span);
  const auto delay = rates_.min_delay + caf::timespan{jitter(rng_)};
  const bool drop = unit(rng_) < rates_.drop;
  const bool duplicate = unit(rng_) < rates_.duplicate;
  const bool reorder = unit(rng_) < rates_.reorder;
  const auto hold_back = caf::timespan{jitter(rng_)} + std::chrono::milliseconds(1);
  auto at = now + delay;
  if (delay > caf::timespan{0})
    ++counts_.delayed;
  if (const auto* w = window_at(from, to, now)) {
    // A window that outlasts the peer timeout ends in verdicts: its frames never arrive.
    if (!w->heal || *w->heal - w->from > peer_timeout_) {
      ++counts_.dropped;
      return {};
    }
    ++counts_.held;
    at = std::max(at, *w->heal);
  }
  const bool notice = type == FrameType::abort || type == FrameType::run_done || type == FrameType::bye;
  if (drop || (rates_.lose_notices && notice)) {
    ++counts_.dropped;
    return {};
  }
  auto& last = last_delivery_[{from, to}];
  if (reorder) {
    ++counts_.reordered;
    at += hold_back; // later frames of this link may pass it: `last` stays
  } else {
    at = std::max(at, last);
    last = at;
  }
  std::vector<caf::timespan> out{at - now};
  if (duplicate) {
    ++counts_.duplicated;
    out.push_back(at - now);
  }
  return out;
}

std::vector<SimNetwork::Verdict> SimNetwork::verdicts_for(int rank) const {
  std::vector<Verdict> out;
  const auto n = static_cast<int>(names_.size());
  for (const auto& k : kills_) {
    if (k.rank == rank) {
      for (int other = 0; other < n; ++other)
        if (other != rank)
          out.push_back({k.at, other, "this task (" + name(rank) + ") was killed at " + at_seconds(k.at)
                                        + " (simulated fault)"});
    } else {
      out.push_back({k.at, k.rank, name(k.rank) + " was killed at " + at_seconds(k.at) + " (simulated fault)"});
    }
  }
  for (const auto& w : windows_) {
    if (w.heal && *w.heal - w.from <= peer_timeout_)
      continue;
    const auto at = w.from + peer_timeout_;
    const std::set<int>* other =
      w.side_a.count(rank) != 0 ? &w.side_b : w.side_b.count(rank) != 0 ? &w.side_a : nullptr;
    if (other == nullptr)
      continue;
    for (int lost : *other)
      out.push_back({at, lost, name(lost) + " sent nothing for the peer timeout ("
                                 + at_seconds(peer_timeout_).substr(2) + ") after the " + w.what + " at "
                                 + at_seconds(w.from) + " (simulated fault)"});
  }
  std::stable_sort(out.begin(), out.end(), [](const Verdict& a, const Verdict& b) { return a.at < b.at; });
  return out;
}

} // namespace troupe::internal

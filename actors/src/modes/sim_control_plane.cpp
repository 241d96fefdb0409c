// SimControlPlane: a SimulatedCluster's tasks' ClusterNodes, as one object.

#include <troupe/actors/modes/sim_control_plane.hpp>

#include <algorithm>

#include <caf/all.hpp>

#include <troupe/actors/runtime/executor.hpp>
#include <troupe/core/errors.hpp>
#include <troupe/net/bootstrap/task_joined.hpp>

namespace troupe::internal {

namespace {

// What a ParameterServer cluster publishes its worker actor under (PsCluster).
constexpr const char* published_worker = "troupe.worker";

} // namespace

/// One task's view: its ClusterDirectory.
class SimControlPlane::Directory final : public ClusterDirectory {
public:
  Directory(SimControlPlane& plane, int member) : plane_(plane), member_(member) {}

  [[nodiscard]] const std::string& task_type() const noexcept override { return task().job; }
  [[nodiscard]] int task_index() const noexcept override { return task().index; }
  [[nodiscard]] const std::vector<std::string>& members() const noexcept override { return plane_.names_; }
  [[nodiscard]] std::vector<std::string> tasks_of(std::string_view job) const override {
    std::vector<std::string> out;
    for (const auto& t : plane_.tasks_)
      if (t.job == job)
        out.push_back(t.name);
    return out;
  }

  void publish(const std::string& name, const caf::actor& actor) override {
    auto& me = plane_.tasks_[static_cast<std::size_t>(member_)];
    if (!actor) {
      me.published.erase(name);
      return;
    }
    me.published[name] = actor;
    if (me.rejoined && name == published_worker) {
      // A restarted worker is back: the others take it back (ClusterNode
      // tells of the rejoin; here the worker itself comes with it).
      me.rejoined = false;
      for (std::size_t o = 0; o < plane_.tasks_.size(); ++o) {
        auto& observer = plane_.tasks_[o];
        if (static_cast<int>(o) == member_ || !observer.alive)
          continue;
        observer.decided.erase(member_);
        const auto worker = plane_.route_(static_cast<int>(o), member_, actor);
        for (const auto& watcher : observer.watchers)
          caf::anon_send(watcher, TaskJoinedMsg{me.name, {}, worker});
      }
    }
    plane_.wake_lookups();
  }

  [[nodiscard]] caf::actor lookup(std::string_view task, const std::string& name,
                                  caf::timespan timeout) const override {
    const int target = plane_.member_of(task, "lookup");
    const auto deadline = plane_.host_.now() + timeout;
    for (;;) {
      const auto& me = plane_.tasks_[static_cast<std::size_t>(member_)];
      if (auto v = me.decided.find(target); v != me.decided.end())
        fail(Errc::peer_lost, "task " + me.name + " looked up \"" + name + "\" on task " + std::string(task)
                                + ", which is gone: " + v->second.why);
      const auto& other = plane_.tasks_[static_cast<std::size_t>(target)];
      if (auto a = other.published.find(name); a != other.published.end())
        return plane_.route_(member_, target, a->second);
      const auto now = plane_.host_.now();
      if (now >= deadline)
        fail(Errc::timeout, "task " + me.name + " looked up \"" + name + "\" on task " + std::string(task)
                              + ", which did not publish it within TROUPE_CLUSTER_INIT_TIMEOUT_SECONDS; does "
                                "every task run the same program?");
      auto published = std::make_shared<Completion>();
      plane_.waiting_.push_back(published);
      caf::delayed_anon_send(plane_.timer_, deadline - now,
                             SimActionMsg{[wake = std::weak_ptr<Completion>(published)] {
                               if (auto w = wake.lock(); w && !w->done())
                                 w->set();
                             }});
      plane_.host_.wait(*published, "a simulated task to publish an actor another task looks up");
    }
  }

  void watch_losses(const caf::actor& listener) override {
    auto& me = plane_.tasks_[static_cast<std::size_t>(member_)];
    me.watchers.push_back(listener);
    for (const auto& [member, msg] : me.decided)
      caf::anon_send(listener, msg);
  }

  void say_farewell(const std::string& job_error) override {
    auto& me = plane_.tasks_[static_cast<std::size_t>(member_)];
    if (!me.farewell)
      me.farewell = job_error;
  }

private:
  [[nodiscard]] const Task& task() const noexcept { return plane_.tasks_[static_cast<std::size_t>(member_)]; }

  SimControlPlane& plane_;
  int member_;
};

SimControlPlane::SimControlPlane(Executor& host, std::vector<std::string> members, Route route,
                                 SimTimerActorHandle timer)
  : host_(host), route_(std::move(route)), timer_(std::move(timer)), names_(std::move(members)) {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    Task t;
    t.name = names_[i];
    t.job = t.name.substr(0, t.name.find(':'));
    t.index = std::stoi(t.name.substr(t.name.find(':') + 1));
    tasks_.push_back(std::move(t));
  }
  for (std::size_t i = 0; i < tasks_.size(); ++i)
    tasks_[i].directory = std::make_unique<Directory>(*this, static_cast<int>(i));
}

SimControlPlane::~SimControlPlane() = default;

ClusterDirectory& SimControlPlane::directory(int member) {
  return *tasks_.at(static_cast<std::size_t>(member)).directory;
}

int SimControlPlane::member_of(std::string_view task, const char* what) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == task)
      return static_cast<int>(i);
  std::string all;
  for (const auto& n : names_)
    all += (all.empty() ? "" : ", ") + n;
  fail(Errc::invalid_argument, std::string(what) + ": no task \"" + std::string(task) + "\" in this simulated "
                                 "cluster (members: " + all + ")");
}

TaskLostMsg SimControlPlane::verdict_on(int member, std::string why, bool left) const {
  const auto& t = tasks_[static_cast<std::size_t>(member)];
  TaskLostMsg msg{t.name, std::move(why), left, left ? t.farewell.value_or("") : std::string{}, false, {}};
  // As ClusterNode tells it: whether the chief said farewell (or left) first.
  const auto& chief = tasks_.front();
  if (chief.job == "chief" && member != 0 && chief.farewell) {
    msg.chief_said_farewell = true;
    msg.chief_job_error = chief.farewell.value_or("");
  }
  return msg;
}

void SimControlPlane::deliver(int observer, int member, TaskLostMsg msg) {
  auto& o = tasks_[static_cast<std::size_t>(observer)];
  if (observer == member || !o.alive || o.decided.count(member) != 0)
    return;
  for (const auto& watcher : o.watchers)
    caf::anon_send(watcher, msg);
  o.decided.emplace(member, std::move(msg));
}

void SimControlPlane::wake_lookups() {
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& w : waiting)
    if (!w->done()) // its timeout may have woken it
      w->set();
}

void SimControlPlane::leave(int member) {
  auto& t = tasks_[static_cast<std::size_t>(member)];
  if (!t.alive)
    return;
  // The chief's farewell counts from its end on (its destructor says it).
  if (!t.farewell && t.job == "chief")
    t.farewell = std::string{};
  auto msg = verdict_on(member, "it shut down (its program ended)", true);
  t.alive = false;
  t.ended = msg;
  for (std::size_t o = 0; o < tasks_.size(); ++o)
    deliver(static_cast<int>(o), member, msg);
  wake_lookups();
}

void SimControlPlane::kill(int member, const std::string& why) {
  auto& t = tasks_[static_cast<std::size_t>(member)];
  if (!t.alive)
    return;
  t.alive = false;
  for (const auto& [name, actor] : t.published)
    // An exit message is no part of any interface: sent as to a plain actor.
    caf::anon_send(actor, caf::exit_msg{actor.address(), caf::make_error(Errc::peer_lost, t.name + " " + why)});
  t.published.clear();
  auto msg = verdict_on(member, why, false);
  t.ended = msg;
  for (std::size_t o = 0; o < tasks_.size(); ++o)
    deliver(static_cast<int>(o), member, msg);
  wake_lookups();
}

void SimControlPlane::verdict(int observer, int lost, const std::string& why) {
  deliver(observer, lost, verdict_on(lost, why, false));
  wake_lookups();
}

void SimControlPlane::restart(int member) {
  auto& t = tasks_[static_cast<std::size_t>(member)];
  t.alive = true;
  t.rejoined = true;
  t.published.clear();
  t.watchers.clear();
  t.decided.clear();
  t.farewell.reset();
  t.ended.reset();
  // A new process knows of the tasks that are gone: it cannot reach them.
  for (std::size_t o = 0; o < tasks_.size(); ++o)
    if (tasks_[o].ended && static_cast<int>(o) != member)
      t.decided.emplace(static_cast<int>(o), *tasks_[o].ended);
}

SimTimerActorHandle spawn_sim_timer(caf::actor_system& system) {
  return system.spawn([]() -> SimTimerActorHandle::behavior_type {
    return {[](SimActionMsg& msg) { msg.action(); }};
  });
}

} // namespace troupe::internal

// SimulatedCluster: every task of a cluster in one process, each with a
// Runtime of its own on one simulated actor system, over a simulated network.

#include <troupe/actors/simulated_cluster.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>

#include <boost/context/fiber.hpp>
#include <caf/all.hpp>

#include <troupe/actors/modes/runtime_impl.hpp>
#include <troupe/actors/modes/sim_control_plane.hpp>
#include <troupe/actors/modes/sim_routes.hpp>
#include <troupe/actors/modes/simulated_task_actor.hpp>
#include <troupe/core/config.hpp>
#include <troupe/core/timeline.hpp>
#include <troupe/net/cluster_spec.hpp>
#include <troupe/net/link/sim_link_actor.hpp>
#include <troupe/net/link/sim_network.hpp>
#include <troupe/net/simple_cluster_resolver.hpp>

namespace troupe {

namespace {

// A user's main program: more stack than a replica's fiber.
constexpr std::size_t task_stack_bytes = std::size_t{8} << 20;

std::string at_seconds(std::chrono::nanoseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "t=%.3fs", std::chrono::duration<double>(t).count());
  return buf;
}

void check_probability(const char* what, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    fail(Errc::invalid_argument, std::string("SimulatedFaults::") + what + "(" + std::to_string(p)
                                   + "): a probability lies in [0, 1]");
}

void check_time(const char* what, std::chrono::nanoseconds t) {
  if (t.count() < 0)
    fail(Errc::invalid_argument, std::string("SimulatedFaults::") + what + ": the time " + at_seconds(t)
                                   + " is negative; times count from the start of run()");
}

} // namespace

// -- SimulatedFaults ------------------------------------------------------------

SimulatedFaults& SimulatedFaults::delay(Duration min, Duration max) {
  check_time("delay", min);
  if (max < min)
    fail(Errc::invalid_argument, "SimulatedFaults::delay(" + at_seconds(min) + ", " + at_seconds(max)
                                   + "): max is below min");
  rates_.min_delay = min;
  rates_.max_delay = max;
  return *this;
}

SimulatedFaults& SimulatedFaults::drop(double p) {
  check_probability("drop", p);
  rates_.drop = p;
  return *this;
}

SimulatedFaults& SimulatedFaults::duplicate(double p) {
  check_probability("duplicate", p);
  rates_.duplicate = p;
  return *this;
}

SimulatedFaults& SimulatedFaults::reorder(double p) {
  check_probability("reorder", p);
  rates_.reorder = p;
  return *this;
}

SimulatedFaults& SimulatedFaults::lose_failure_notices() {
  rates_.lose_notices = true;
  return *this;
}

SimulatedFaults& SimulatedFaults::partition(std::vector<std::string> side_a, std::vector<std::string> side_b,
                                            Duration at, std::optional<Duration> heal) {
  check_time("partition", at);
  if (heal && *heal < at)
    fail(Errc::invalid_argument, "SimulatedFaults::partition: it heals at " + at_seconds(*heal)
                                   + ", before it starts at " + at_seconds(at));
  partitions_.push_back({std::move(side_a), std::move(side_b), at, heal, "partition"});
  return *this;
}

SimulatedFaults& SimulatedFaults::kill(std::string task, Duration at) {
  check_time("kill", at);
  kills_.push_back({std::move(task), at});
  return *this;
}

SimulatedFaults& SimulatedFaults::restart(std::string task, Duration at) {
  check_time("restart", at);
  restarts_.push_back({std::move(task), at});
  return *this;
}

SimulatedFaults& SimulatedFaults::freeze(std::string task, Duration at, Duration length) {
  check_time("freeze", at);
  check_time("freeze", length);
  partitions_.push_back({{task}, {}, at, at + length, "freeze of " + task});
  return *this;
}

// -- SimulatedCluster -----------------------------------------------------------

struct SimulatedCluster::Impl {
  std::unique_ptr<internal::RuntimeImpl> host;
  std::shared_ptr<internal::SimNetwork> network;
  std::vector<std::optional<Error>> errors;
  std::vector<bool> killed;
  std::vector<bool> restarted;
  bool ran = false;
  uint64_t trace_hash = 0;
  uint64_t steps = 0;
  std::chrono::nanoseconds virtual_time{0};
};

SimulatedCluster::SimulatedCluster(SimulatedClusterOptions options)
  : options_(options), random_(options.seed ^ 0x5851f42d4c957f2dull), impl_(std::make_unique<Impl>()) {
  if (options_.chief < 0 || options_.chief > 1 || options_.workers < 0 || options_.ps < 0
      || options_.chief + options_.workers < 1 || options_.devices_per_worker < 1)
    fail(Errc::invalid_argument, "SimulatedCluster{.chief = " + std::to_string(options_.chief) + ", .workers = "
                                   + std::to_string(options_.workers) + ", .ps = " + std::to_string(options_.ps)
                                   + ", .devices_per_worker = " + std::to_string(options_.devices_per_worker)
                                   + "}: chief is 0 or 1, ps 0 or more, there is at least one chief or worker, "
                                     "and each has a device");
  if (options_.ps > 0 && options_.chief != 1)
    fail(Errc::invalid_argument, "SimulatedCluster{.ps = " + std::to_string(options_.ps)
                                   + "}: a parameter-server cluster needs its coordinator: set .chief = 1");
  if (options_.deadline.count() <= 0)
    fail(Errc::invalid_argument, "SimulatedCluster: the deadline must be positive");
  if (options_.chief == 1)
    tasks_.push_back("chief:0");
  for (int w = 0; w < options_.workers; ++w)
    tasks_.push_back("worker:" + std::to_string(w));
  for (int p = 0; p < options_.ps; ++p)
    tasks_.push_back("ps:" + std::to_string(p));
  impl_->host = std::make_unique<internal::RuntimeImpl>(Simulation{.seed = options_.seed});
}

SimulatedCluster::~SimulatedCluster() = default;

namespace {

int rank_of(const std::vector<std::string>& tasks, const std::string& task, const char* fault) {
  auto i = std::find(tasks.begin(), tasks.end(), task);
  if (i == tasks.end()) {
    std::string names;
    for (const auto& t : tasks)
      names += (names.empty() ? "" : ", ") + t;
    fail(Errc::invalid_argument, std::string("SimulatedFaults::") + fault + ": no task \"" + task
                                   + "\" in this cluster (tasks: " + names + ")");
  }
  return static_cast<int>(i - tasks.begin());
}

} // namespace

void SimulatedCluster::run_tasks(const std::function<void(Runtime&, std::size_t)>& body) {
  if (impl_->ran)
    fail(Errc::failed_precondition, "SimulatedCluster::run: a SimulatedCluster runs once; make another for the "
                                    "next run (the same seed replays the same run)");
  impl_->ran = true;
  // The run's own timeline, written however the run ends.
  struct TimelineScope {
    bool own;
    explicit TimelineScope(const std::string& path) : own(!path.empty()) {
      if (own)
        internal::Timeline::process().start(path);
    }
    ~TimelineScope() {
      if (own)
        internal::Timeline::process().stop();
    }
    TimelineScope(const TimelineScope&) = delete;
    TimelineScope& operator=(const TimelineScope&) = delete;
  } timeline(options_.trace_path);
  auto& host = *impl_->host;
  auto& system = host.system();
  const auto n = tasks_.size();
  const auto seed_text = "seed " + std::to_string(options_.seed);

  // The network and its faults, by rank.
  std::vector<internal::SimNetwork::Window> windows;
  for (const auto& p : faults_.partitions()) {
    internal::SimNetwork::Window w;
    for (const auto& t : p.side_a)
      w.side_a.insert(rank_of(tasks_, t, p.what.c_str()));
    for (const auto& t : p.side_b)
      w.side_b.insert(rank_of(tasks_, t, p.what.c_str()));
    if (p.side_b.empty()) // a freeze: the task against every other
      for (std::size_t r = 0; r < n; ++r)
        if (w.side_a.count(static_cast<int>(r)) == 0)
          w.side_b.insert(static_cast<int>(r));
    w.from = p.at;
    w.heal = p.heal;
    w.what = p.what;
    windows.push_back(std::move(w));
  }
  std::vector<internal::SimNetwork::Kill> kills;
  for (const auto& k : faults_.kills())
    kills.push_back({rank_of(tasks_, k.task, "kill"), k.at});
  const auto peer_timeout = options_.peer_timeout.count() > 0
                              ? caf::timespan{options_.peer_timeout}
                              : std::chrono::duration_cast<caf::timespan>(
                                  std::chrono::duration<double>(knobs().peer_timeout_seconds));
  const auto& r = faults_.rates();
  impl_->network = std::make_shared<internal::SimNetwork>(
    options_.seed ^ 0x9e3779b97f4a7c15ull, tasks_,
    internal::SimNetwork::Rates{r.min_delay, r.max_delay, r.drop, r.duplicate, r.reorder, r.lose_notices},
    std::move(windows),
    std::move(kills), peer_timeout);

  // The cluster spec every task's resolver describes.
  ClusterSpec::JobMap jobs;
  for (const auto& t : tasks_) {
    const auto job = t.substr(0, t.find(':'));
    jobs[job].push_back("sim-" + job + "-" + std::to_string(jobs[job].size()) + ":2222"); // never dialled
  }
  const ClusterSpec spec(jobs);

  const auto actors_before = system.registry().running();
  // Collectives run among the chief and the workers, the first members.
  const auto ranks = static_cast<std::size_t>(options_.chief + options_.workers);
  const std::vector<std::string> rank_names(tasks_.begin(), tasks_.begin() + static_cast<std::ptrdiff_t>(ranks));
  std::vector<internal::SimLinkActorHandle> links;
  for (std::size_t i = 0; i < ranks; ++i)
    links.push_back(system.spawn<internal::SimLinkActor>(static_cast<int>(i), impl_->network));
  // A parameter-server cluster's control plane, and the actor that runs its timed events.
  auto timer = internal::spawn_sim_timer(system);
  std::unique_ptr<internal::SimControlPlane> plane;
  auto routes = std::make_shared<internal::SimRoutes>(system, impl_->network);
  if (options_.ps > 0)
    plane = std::make_unique<internal::SimControlPlane>(
      host, tasks_, [routes](int from, int to, const caf::actor& actor) { return routes->route(from, to, actor); },
      timer);

  // Each run of a task's function: one per task, and one more per restart.
  struct Incarnation {
    std::size_t task = 0;
    std::unique_ptr<Runtime> runtime;
    std::shared_ptr<internal::SimTaskOutcome> outcome;
    internal::SimulatedTaskActorHandle actor;
    std::shared_ptr<bool> started; ///< false for a restart until it starts (its kill may have come too late)
  };
  std::vector<Incarnation> runs;
  for (std::size_t i = 0; i < n; ++i)
    runs.push_back({i, nullptr, nullptr, {}, std::make_shared<bool>(true)});
  for (const auto& r : faults_.restarts()) {
    const auto task = static_cast<std::size_t>(rank_of(tasks_, r.task, "restart"));
    const bool worker = tasks_[task].rfind("worker:", 0) == 0;
    const bool killed_before = std::any_of(faults_.kills().begin(), faults_.kills().end(),
                                           [&](const auto& k) { return k.task == r.task && k.at < r.at; });
    const bool once = std::count_if(faults_.restarts().begin(), faults_.restarts().end(),
                                    [&](const auto& o) { return o.task == r.task; }) == 1;
    if (!worker || options_.ps == 0 || !killed_before || !once)
      fail(Errc::invalid_argument, "SimulatedFaults::restart(\"" + r.task + "\", " + at_seconds(r.at)
                                     + "): a restarted process rejoins only as a worker of a cluster with ps "
                                       "tasks, once, after a kill of that task before " + at_seconds(r.at));
    runs.push_back({task, nullptr, nullptr, {}, std::make_shared<bool>(false)});
  }
  impl_->errors.assign(n, std::nullopt);
  impl_->killed.assign(n, false);
  impl_->restarted.assign(n, false);
  auto all_done = std::make_shared<internal::Completion>();
  auto left = std::make_shared<std::size_t>(runs.size());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    auto& run = runs[k];
    const auto i = run.task;
    const bool first = k < n;
    const auto& t = tasks_[i];
    const auto job = t.substr(0, t.find(':'));
    const int index = std::stoi(t.substr(t.find(':') + 1));
    internal::SimulatedTask task;
    task.host = &host;
    task.resolver = std::make_shared<SimpleClusterResolver>(
      spec, SimpleClusterResolverOptions{.task_type = job, .task_id = index});
    task.member = static_cast<int>(i);
    task.name = t;
    // A restarted worker has no data plane (no collectives), as in a real cluster.
    const bool has_rank = i < ranks && first;
    task.membership = {has_rank ? static_cast<int>(i) : -1, rank_names,
                       has_rank ? links[i] : internal::SimLinkActorHandle{}, nullptr, task.resolver};
    task.directory = plane ? &plane->directory(static_cast<int>(i)) : nullptr;
    task.logical_cpu_devices = options_.devices_per_worker;
    task.tpu_slice_cores = job == "worker" ? options_.logical_tpu_cores : 0;
    auto impl = std::make_unique<internal::RuntimeImpl>(task);
    auto* task_impl = impl.get();
    run.runtime = std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
    run.outcome = std::make_shared<internal::SimTaskOutcome>();
    // Counts the runs down on the simulation's thread, as each one ends.
    run.outcome->finished.call_when_set([all_done, left] {
      if (--*left == 0)
        all_done->set();
    });
    auto* runtime = run.runtime.get();
    auto* errors = &impl_->errors;
    auto body_of_task = [&body, runtime, task_impl, errors, i] {
      // This task's part of a parameter-server cluster ends with its program,
      // as its process's Runtime would, told whether an exception ended it.
      // (Not from a destructor during the unwinding: on the one thread the
      // tasks share, std::uncaught_exceptions() counts the other tasks' too.)
      // A task unwound at teardown leaves it to its Runtime's destructor.
      bool by_exception = true;
      try {
        (*errors)[i].reset();
        task_impl->join_ps_cluster();
        body(*runtime, i);
        by_exception = false;
      } catch (const boost::context::detail::forced_unwind&) {
        throw; // the task is being torn down: let Boost unwind its stack
      } catch (const Error& e) {
        (*errors)[i] = e;
      } catch (const std::exception& e) {
        (*errors)[i] = Error(Errc::unknown, e.what());
      } catch (...) {
        (*errors)[i] = Error(Errc::unknown, "a non-standard exception");
      }
      task_impl->leave_ps_cluster(by_exception);
    };
    // Its process exits once its actors settled (a timer of no delay fires
    // when nothing can run): the aborts its strategies' groups send as they
    // stop go out before its bye, and the control plane's verdict.
    const auto link = has_rank ? links[i] : internal::SimLinkActorHandle{};
    auto* control = plane.get();
    auto on_return = [link, timer, control, i] {
      if (link)
        caf::delayed_anon_send(link, caf::timespan{0}, internal::SimLeaveMsg{});
      if (control)
        caf::delayed_anon_send(timer, caf::timespan{0},
                               internal::SimActionMsg{[control, i] { control->leave(static_cast<int>(i)); }});
    };
    run.actor = system.spawn<internal::SimulatedTaskActor>(body_of_task, run.outcome, on_return,
                                                           &task_impl->functions(), task_stack_bytes);
  }

  // The run starts now: the network's times and the timed faults count from here.
  const auto start = host.now();
  impl_->network->start_at(start);
  for (auto& link : links)
    caf::anon_send(link, internal::SimPeersMsg{links});
  // The run a kill at `at` hits: the task's restarted one from its restart on.
  auto run_at = [&](std::size_t task, std::chrono::nanoseconds at) {
    for (std::size_t k = n; k < runs.size(); ++k)
      if (runs[k].task == task && faults_.restarts()[k - n].at <= at)
        return k;
    return task;
  };
  for (const auto& k : faults_.kills()) {
    const auto rank = static_cast<std::size_t>(rank_of(tasks_, k.task, "kill"));
    caf::delayed_anon_send(runs[run_at(rank, k.at)].actor, caf::timespan{k.at}, internal::SimTaskKillMsg{});
    if (plane)
      caf::delayed_anon_send(timer, caf::timespan{k.at}, internal::SimActionMsg{[p = plane.get(), rank, at = k.at] {
                               p->kill(static_cast<int>(rank),
                                       "was killed (simulated fault at " + at_seconds(at) + ")");
                             }});
  }
  for (std::size_t k = n; k < runs.size(); ++k) {
    const auto& r = faults_.restarts()[k - n];
    impl_->network->revive(static_cast<int>(runs[k].task), r.at);
    caf::delayed_anon_send(
      timer, caf::timespan{r.at},
      internal::SimActionMsg{[p = plane.get(), member = runs[k].task, actor = runs[k].actor,
                              before = runs[runs[k].task].outcome, outcome = runs[k].outcome, started = runs[k].started] {
        if (!before->killed) { // it returned before its kill: nothing to restart
          outcome->finished.set();
          return;
        }
        *started = true;
        p->restart(static_cast<int>(member));
        caf::anon_send(actor, internal::SimTaskStartMsg{});
      }});
  }
  // The failure detector's verdicts on partitions and freezes, for the
  // parameter-server cluster (the links give them to collectives).
  if (plane)
    for (std::size_t o = 0; o < n; ++o)
      for (auto& v : impl_->network->verdicts_for(static_cast<int>(o)))
        caf::delayed_anon_send(timer, v.at, internal::SimActionMsg{[p = plane.get(), o, lost = v.lost, why = v.why] {
                                 p->verdict(static_cast<int>(o), lost, why);
                               }});
  for (std::size_t k = 0; k < n; ++k)
    caf::anon_send(runs[k].actor, internal::SimTaskStartMsg{});

  std::string hang;
  const auto steps_before = host.steps();
  try {
    if (!host.simulate_until(*all_done, start + caf::timespan{options_.deadline}, options_.max_steps,
                             "every simulated task to return"))
      hang = host.steps() - steps_before >= options_.max_steps ? "it took more than " + std::to_string(options_.max_steps)
                                                    + " actor steps (a livelock?)"
                                                : "the deadline " + at_seconds(options_.deadline) + " passed";
  } catch (const Error& e) {
    hang = e.what();
  }
  std::string stuck;
  if (!hang.empty())
    for (const auto& run : runs)
      if (!run.outcome->finished.done() && stuck.find(tasks_[run.task]) == std::string::npos)
        stuck += (stuck.empty() ? "" : ", ") + tasks_[run.task];
  impl_->virtual_time = host.now() - start;
  if (!hang.empty())
    hang += "; the last event was at " + at_seconds(impl_->virtual_time);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (!*runs[k].started)
      continue;
    impl_->killed[runs[k].task] = runs[k].outcome->killed;
    impl_->restarted[runs[k].task] = k >= n;
  }

  // Teardown: the tasks (a killed or stuck one's function is unwound), their
  // runtimes, then the network; nothing of the run may be left.
  for (auto& run : runs)
    caf::anon_send_exit(run.actor, caf::exit_reason::user_shutdown);
  for (auto& run : runs)
    run.actor = internal::SimulatedTaskActorHandle{};
  host.drain();
  runs.clear();
  for (auto& link : links)
    caf::anon_send_exit(link, caf::exit_reason::user_shutdown);
  links.clear();
  caf::anon_send_exit(timer, caf::exit_reason::user_shutdown);
  timer = internal::SimTimerActorHandle{};
  host.drain();
  plane.reset();
  routes->clear();
  impl_->trace_hash = host.trace_hash();
  impl_->steps = host.steps();
  if (!stuck.empty())
    fail(Errc::deadlock, "simulated cluster, " + seed_text + ": " + stuck + " did not return (" + hang
                           + "). Replay it with the same seed");
  const auto actors_after = system.registry().running();
  if (actors_after > actors_before)
    fail(Errc::internal, "simulated cluster, " + seed_text + ": " + std::to_string(actors_after - actors_before)
                           + " actors of the run are still running after it ended");
}

std::optional<Error> SimulatedCluster::error_of(std::size_t task) const {
  if (impl_->killed.at(task) && !impl_->errors.at(task))
    return Error(Errc::cancelled, tasks_.at(task) + " was killed (simulated fault)");
  return impl_->errors.at(task);
}

bool SimulatedCluster::killed(std::size_t task) const {
  return impl_->killed.at(task);
}

bool SimulatedCluster::restarted(std::size_t task) const {
  return impl_->restarted.at(task);
}

uint64_t SimulatedCluster::trace_hash() const noexcept {
  return impl_->trace_hash;
}

uint64_t SimulatedCluster::steps() const noexcept {
  return impl_->steps;
}

std::chrono::nanoseconds SimulatedCluster::virtual_time() const noexcept {
  return impl_->virtual_time;
}

SimulatedNetworkCounts SimulatedCluster::network_counts() const noexcept {
  if (!impl_->network)
    return {};
  const auto& c = impl_->network->counts();
  return {c.frames, c.delayed, c.held, c.dropped, c.duplicated, c.reordered, c.messages};
}

} // namespace troupe

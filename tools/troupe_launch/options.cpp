#include "options.hpp"

#include <charconv>
#include <set>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "number_option.hpp"

namespace troupe::launch {

namespace {

/// A bounded number whose error says what is `expected`.
template <class T>
void add_number(CLI::App& app, const std::string& flag, T& target, T min, T max, const std::string& expected) {
  cli::add_number(app, flag, target, min, max, {}, expected)->type_name("VALUE");
}

std::vector<std::string> split_hosts(const std::string& flag, const std::string& text) {
  std::vector<std::string> hosts;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    std::string host =
      text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (host.empty())
      throw CLI::ValidationError(flag + " \"" + text
                                 + "\" has an empty host name: expected a comma-separated list "
                                   "such as node1,node2");
    hosts.push_back(std::move(host));
    if (comma == std::string::npos)
      return hosts;
    begin = comma + 1;
  }
}

/// Adds `flag`, which takes no value ("--chief=yes" is an error).
void add_flag(CLI::App& app, const std::string& flag, bool& target) {
  app.add_flag(flag, target)
    ->check(CLI::Validator(
      [flag](std::string& value) {
        // CLI11 passes "true" for the bare flag.
        return value == "true" ? std::string() : "takes no value: write " + flag + " alone";
      },
      ""));
}

// The flags each mode accepts, for messages that name the fix.
const std::set<std::string, std::less<>> local_only = {
  "--workers", "--ps", "--chief", "--evaluator", "--grace-seconds", "--host", "--timeout-seconds",
  "--gpus-per-worker"};
const std::set<std::string, std::less<>> attach_only = {"--base-port", "--hosts",
                                                        "--workers-per-node"};

std::string attach_conflict(const std::string& flag) {
  if (flag == "--workers")
    return "--workers does not apply with --attach: the number of ranks comes from mpirun -n or "
           "srun -n";
  if (flag == "--ps" || flag == "--evaluator")
    return flag
           + " does not apply with --attach: every rank becomes a worker (rank 0 the chief with "
             "--chief); drop "
           + flag;
  if (flag == "--host")
    return "--host does not apply with --attach: name the ranks' hosts with --hosts h1,h2,...";
  if (flag == "--gpus-per-worker")
    return "--gpus-per-worker does not apply with --attach: bind GPUs to ranks with the launcher "
           "(srun --gpus-per-task, or CUDA_VISIBLE_DEVICES per rank under mpirun)";
  return flag
         + " does not apply with --attach: troupe-launch becomes the program; use the time limits "
           "of mpirun or srun";
}

} // namespace

std::string usage() {
  return "usage: troupe-launch [options] [--] program [args...]\n"
         "       troupe-launch --attach [--chief] [--base-port P] [--hosts H,...] -- program ...\n"
         "\n"
         "Starts one process per task of a troupe (tf.distribute) cluster on this machine, each\n"
         "with TF_CONFIG, TROUPE_TASK_NAME and TROUPE_CLUSTER_TOKEN set, prefixes their output\n"
         "with [type:index] and fails when one of them fails.\n"
         "\n"
         "  --workers N           worker tasks (default 2)\n"
         "  --ps M                parameter-server tasks (default 0). With M > 0 the cluster is a\n"
         "                        ParameterServerStrategy cluster: a chief task (the coordinator)\n"
         "                        is added, and the chief's exit ends the job (see below)\n"
         "  --chief               one chief task besides the workers (TF's chief/worker layout)\n"
         "  --evaluator           one evaluator task; as in TF it is not part of the cluster\n"
         "  --host H              this machine's address for the tasks (default 127.0.0.1)\n"
         "  --tls                 encrypt both planes of every task: TROUPE_TLS=1, TLS 1.3 keyed by\n"
         "                        the run's fresh TROUPE_CLUSTER_TOKEN (no certificates needed)\n"
         "  --grace-seconds S     after the first task fails, how long the others get to finish\n"
         "                        before SIGTERM, then SIGKILL 2 s later (default 10)\n"
         "  --timeout-seconds T   whole-cluster deadline: then kill every task and exit 124\n"
         "                        (default 0: none)\n"
         "  --gpus-per-worker N   give the chief and each worker N GPUs of their own (its\n"
         "                        CUDA_VISIBLE_DEVICES: consecutive GPUs of this machine, or of\n"
         "                        troupe-launch's CUDA_VISIBLE_DEVICES), ps and evaluator tasks\n"
         "                        none; for MultiWorkerMirroredStrategy over NCCL, which takes one\n"
         "                        rank per GPU (default 0: CUDA_VISIBLE_DEVICES untouched)\n"
         "  --help                this text\n"
         "\n"
         "Rank mode, one troupe-launch per rank of `mpirun -n N` or `srun -n N`:\n"
         "  --attach              read rank and size from Open MPI, MPICH (PMI), Slurm or PMIx\n"
         "                        variables, set TF_CONFIG and exec the program; every rank is a\n"
         "                        worker (with --chief rank 0 is the chief)\n"
         "  --base-port P         port of the first rank on each host (default 23456); the others\n"
         "                        follow by local rank\n"
         "  --hosts h1,h2,...     one host per rank, or one host for all ranks (default: Slurm's\n"
         "                        node list, else 127.0.0.1)\n"
         "  --workers-per-node N  accepted and ignored\n"
         "In rank mode set TROUPE_CLUSTER_TOKEN yourself and export it to every rank\n"
         "(mpirun -x TROUPE_CLUSTER_TOKEN; srun exports it by default).\n"
         "\n"
         "With --ps: the exit status is the chief's. Once the chief exits (0 or not), the other\n"
         "tasks get --grace-seconds to exit on their own, then are stopped and named. A worker that\n"
         "fails before the chief is reported and the chief goes on without it (the coordinator\n"
         "runs its functions on the other workers); a ps task that fails stops the cluster as below,\n"
         "and the status is the chief's if it exits within the grace period, else the ps task's.\n"
         "\n"
         "Exit status: 0 when every task exits 0, else the first failed task's status (128+signal\n"
         "for a signal), 124 at --timeout-seconds, 2 for a bad command line, 127 when the program\n"
         "cannot be started. A task stopped by a signal (SIGSTOP: frozen) when another fails is\n"
         "named as the first cause, and the status is 128 + its stop signal.\n";
}

Options parse_options(const std::vector<std::string>& args) {
  Options opts;
  CLI::App app;
  // Repeating an option is no error: the last value counts.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_number(app, "--workers", opts.workers, 0, 4096, "a whole number of workers from 0 to 4096");
  add_number(app, "--ps", opts.ps, 0, 4096, "a whole number of parameter servers from 0 to 4096");
  add_flag(app, "--chief", opts.chief);
  add_flag(app, "--evaluator", opts.evaluator);
  add_flag(app, "--tls", opts.tls);
  app
    .add_option_function<std::string>(
      "--host",
      [&](const std::string& host) {
        if (host.empty())
          throw CLI::ValidationError("--host needs an address of this machine, such as 127.0.0.1");
        opts.host = host;
      })
    ->type_name("VALUE");
  add_number(app, "--grace-seconds", opts.grace_seconds, 0.0, 86400.0, "seconds from 0 to 86400");
  add_number(app, "--timeout-seconds", opts.timeout_seconds, 0.0, 31536000.0,
             "seconds from 0 (no deadline) to 31536000");
  add_number(app, "--gpus-per-worker", opts.gpus_per_worker, 0, 1024, "a whole number of GPUs from 0 to 1024");
  add_flag(app, "--attach", opts.attach);
  add_number(app, "--base-port", opts.base_port, 1, 65535, "a TCP port from 1 to 65535");
  app
    .add_option_function<std::string>(
      "--hosts", [&](const std::string& text) { opts.hosts = split_hosts("--hosts", text); })
    ->type_name("VALUE");
  // Accepted for command lines written for other launchers; the layout comes
  // from mpirun or srun.
  int workers_per_node = 1;
  add_number(app, "--workers-per-node", workers_per_node, 1, 4096, "a whole number from 1 to 4096");
  // Options end at the program: it and everything after it are the program's.
  app.prefix_command();

  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    opts.help = true;
    return opts;
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string(e.what()) + "; see troupe-launch --help");
  }
  opts.program = app.remaining();
  if (!opts.program.empty() && opts.program.front() == "--") {
    opts.program.erase(opts.program.begin());
  } else if (!opts.program.empty() && opts.program.front().starts_with('-')) {
    // prefix_command() leaves an unknown option to the program: refuse it here.
    const auto& arg = opts.program.front();
    throw std::invalid_argument("unknown option \"" + arg.substr(0, arg.find('='))
                                + "\"; see troupe-launch --help (put the program after "
                                  "-- if the option is the program's)");
  }

  if (opts.attach) {
    for (const auto& flag : local_only)
      if (app.count(flag) > 0 && flag != "--chief")
        throw std::invalid_argument(attach_conflict(flag));
  } else {
    for (const auto& flag : attach_only)
      if (app.count(flag) > 0)
        throw std::invalid_argument(
          flag + " is only used with --attach (rank mode under mpirun or srun); drop " + flag
          + " or add --attach");
    if (opts.workers == 0 && !opts.chief && opts.ps == 0)
      throw std::invalid_argument(
        "--workers 0 leaves the cluster without a worker or chief: pass --workers 1 or "
        "more, or add --chief");
    if (opts.ps > 0 && opts.workers == 0)
      throw std::invalid_argument("--ps " + std::to_string(opts.ps)
                                  + " with --workers 0 leaves the parameter servers without a worker "
                                    "to run functions: pass --workers 1 or more");
    // TensorFlow's rule: a parameter-server cluster has a coordinator, the chief.
    if (opts.ps > 0)
      opts.chief = true;
  }
  if (opts.program.empty())
    throw std::invalid_argument(
      "no program to launch: troupe-launch [options] [--] program [args...]");
  return opts;
}

} // namespace troupe::launch

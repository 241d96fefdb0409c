"""TensorFlow's side of bench/ps_throughput (issue 15): ParameterServerStrategy
and ClusterCoordinator over a cluster of --workers workers and --ps parameter
servers on localhost, timed on the figures troupe's bench prints beside it.

--cluster in-process (default): one tf.distribute.Server per task in this
process, as multi_worker_test_base.create_in_process_cluster builds them.
--cluster processes: one Python process per task (this script with --serve),
the coordinator in this one. Either way SimpleClusterResolver over gRPC on free
localhost ports, no chief task: this process is the coordinator.

Figures, each the median over --repeats timed rounds after one untimed warm-up
round (which also traces the functions):
  trivial_per_s, trivial_ms    a tf.function returning a constant, scheduled
                               with coordinator.schedule and fetched with
                               RemoteValue.fetch() one at a time, --calls times
  trivial_pipelined_per_s      the same function scheduled --calls times, then
                               coordinator.join(), then every result fetched
  var_per_s, var_gb_per_s      a function that reads a float32 variable of
                               --var-mib MiB on the ps (sharded over --ps ps
                               when more than one) and assign_adds a delta
                               computed on the worker from it, scheduled and
                               fetched one at a time, --var-calls times; bytes
                               moved = read + update = 2 x the variable's size
  var_pipelined_per_s, var_pipelined_gb_per_s
                               the same, scheduled --var-calls times, joined,
                               fetched
Prints one line per figure:
  `TF_ROW,<figure>,<cluster>,<workers>,<ps>,<value>`
(cluster is in-process or processes), after a `#` line naming the run.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("localhost", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def server_configs(tf, workers):
    worker_config = tf.compat.v1.ConfigProto()
    # The cluster may hang if workers don't have enough inter-op threads
    # (multi_worker_test_base, b/172296720).
    if worker_config.inter_op_parallelism_threads < workers + 1:
        worker_config.inter_op_parallelism_threads = workers + 1
    ps_config = tf.compat.v1.ConfigProto()
    return {"worker": worker_config, "ps": ps_config}


def exit_with_parent():
    """A --serve task ends when its coordinator does, even when that one was
    killed (bench/ps_throughput kills a run that overstays --tf-timeout)."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def serve(args):
    """One task of --cluster processes: start its server and wait until the
    coordinator kills it or exits."""
    exit_with_parent()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    cluster = json.loads(args.cluster_json)
    job, index = args.serve.split(":")
    config = server_configs(tf, len(cluster["worker"]))[job]
    server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=job,
                                  task_index=int(index), config=config,
                                  protocol="grpc", start=True)
    server.join()


def wait_listening(port, deadline):
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("localhost", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"no server on localhost:{port}")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps", type=int, default=1)
    parser.add_argument("--cluster", choices=["in-process", "processes"], default="in-process")
    parser.add_argument("--calls", type=int, default=200,
                        help="trivial functions per timed round")
    parser.add_argument("--var-calls", type=int, default=20,
                        help="variable functions per timed round")
    parser.add_argument("--var-mib", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds per figure")
    parser.add_argument("--serve", help=argparse.SUPPRESS)          # job:index
    parser.add_argument("--cluster-json", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args)

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    ports = free_ports(args.workers + args.ps)
    cluster = {"worker": [f"localhost:{p}" for p in ports[:args.workers]],
               "ps": [f"localhost:{p}" for p in ports[args.workers:]]}
    spec = tf.train.ClusterSpec(cluster)
    children = []
    if args.cluster == "in-process":
        configs = server_configs(tf, args.workers)
        for job in ("worker", "ps"):
            for i in range(len(cluster[job])):
                # In-process servers cannot be stopped; they live as long as
                # this process.
                tf.distribute.Server(spec, job_name=job, task_index=i, config=configs[job],
                                     protocol="grpc", start=True)
    else:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        for job in ("worker", "ps"):
            for i in range(len(cluster[job])):
                children.append(subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), "--serve", f"{job}:{i}",
                     "--cluster-json", json.dumps(cluster)], env=env))
        deadline = time.monotonic() + 120
        for p in ports:
            wait_listening(p, deadline)

    try:
        run(tf, args, spec)
    finally:
        sys.stdout.flush()
        for child in children:
            child.kill()
            child.wait()
    # The coordinator's threads and in-process servers can keep the
    # interpreter from exiting.
    os._exit(0)


def run(tf, args, spec):
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, rpc_layer="grpc")
    partitioner = (tf.distribute.experimental.partitioners.FixedShardsPartitioner(args.ps)
                   if args.ps > 1 else None)
    strategy = tf.distribute.experimental.ParameterServerStrategy(
        resolver, variable_partitioner=partitioner)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    elements = args.var_mib * 1024 * 1024 // 4
    with strategy.scope():
        var = tf.Variable(tf.zeros([elements], tf.float32), name="v")
    moved_bytes = 2 * elements * 4

    @tf.function
    def trivial():
        return tf.constant(1)

    @tf.function
    def read_update():
        # Read on the ps, delta computed on the worker from what was read,
        # assign_add back on the ps; return a scalar, not the variable.
        value = tf.convert_to_tensor(var)
        var.assign_add(value * 0.5 + 1.0)
        return value[0]

    def sequential(fn, calls):
        start = time.perf_counter()
        for _ in range(calls):
            coordinator.schedule(fn).fetch()
        return time.perf_counter() - start

    def pipelined(fn, calls):
        start = time.perf_counter()
        results = [coordinator.schedule(fn) for _ in range(calls)]
        coordinator.join()
        for r in results:
            r.fetch()
        return time.perf_counter() - start

    def median_seconds(measure, fn, calls):
        measure(fn, max(1, calls // 4))              # warm-up, untimed
        return statistics.median(measure(fn, calls) for _ in range(args.repeats))

    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    print(f"# TensorFlow {tf.__version__}; {cpu}, {os.cpu_count()} cores; "
          f"{args.cluster} cluster, {args.workers} workers, {args.ps} ps; "
          f"median of {args.repeats} rounds of {args.calls} trivial / "
          f"{args.var_calls} x {args.var_mib} MiB variable functions", flush=True)

    def row(figure, value):
        print(f"TF_ROW,{figure},{args.cluster},{args.workers},{args.ps},{value:.4g}", flush=True)

    seconds = median_seconds(sequential, trivial, args.calls)
    row("trivial_per_s", args.calls / seconds)
    row("trivial_ms", 1000 * seconds / args.calls)
    seconds = median_seconds(pipelined, trivial, args.calls)
    row("trivial_pipelined_per_s", args.calls / seconds)

    seconds = median_seconds(sequential, read_update, args.var_calls)
    row("var_per_s", args.var_calls / seconds)
    row("var_gb_per_s", args.var_calls * moved_bytes / seconds / 1e9)
    seconds = median_seconds(pipelined, read_update, args.var_calls)
    row("var_pipelined_per_s", args.var_calls / seconds)
    row("var_pipelined_gb_per_s", args.var_calls * moved_bytes / seconds / 1e9)


if __name__ == "__main__":
    sys.exit(main())

"""TensorFlow's side of bench/ps_training_vs_tensorflow.sh (issue 15): the
parameter-server job of samples/train_fashion_mnist (--strategy ps) in
TensorFlow, timed per epoch.

ParameterServerStrategy and ClusterCoordinator over an in-process cluster of
--workers workers and --ps parameter servers on localhost (one
tf.distribute.Server per task, SimpleClusterResolver over gRPC, this process
the coordinator), as bench/tf_ps_throughput.py builds it; the weights sharded
FixedShardsPartitioner(--ps) when --ps > 1. MLP 784-256-128-10 (ReLU,
Glorot-uniform kernels, zero biases) as six tf.Variables (Keras 3 layers
cannot hold ShardedVariables), sparse softmax cross-entropy averaged over the
step's batch, Keras' Adam 3e-3 with cosine decay to 5% over all steps, its
slots on the servers beside the weights.
Each worker reads its own endless shuffle of the training set (shuffle, batch
--batch, repeat); every step is one tf.function scheduled on whichever worker
is free (forward, backward, optimizer.apply_gradients), ceil(60000 / batch)
of them per epoch, then coordinator.join(). The test accuracy is computed
from the variables after the epoch. Prints one line per epoch:
`EPOCH,tensorflow_ps,<workers>,<ps>,<epoch>,<seconds>,<train loss>,<test accuracy>`.
"""
import argparse
import os
import sys
import time

import numpy as np

# Helpers beside this script: the data reader of every peer, and the
# in-process cluster's, shared with the throughput peer.
from fashion_mnist_idx import read_idx
from tf_ps_throughput import free_ports, server_configs


def start_in_process_cluster(tf, workers, ps):
    ports = free_ports(workers + ps)
    spec = tf.train.ClusterSpec({"worker": [f"localhost:{p}" for p in ports[:workers]],
                                 "ps": [f"localhost:{p}" for p in ports[workers:]]})
    configs = server_configs(tf, workers)
    for job, count in (("worker", workers), ("ps", ps)):
        for i in range(count):
            # In-process servers cannot be stopped; they live as long as this process.
            tf.distribute.Server(spec, job_name=job, task_index=i, config=configs[job],
                                 protocol="grpc", start=True)
    return spec


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()
    for flag, value in (("--workers", args.workers), ("--ps", args.ps),
                        ("--epochs", args.epochs), ("--batch", args.batch)):
        if value < 1:
            parser.error(f"{flag} {value}: must be at least 1")

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    def split(prefix):
        images = read_idx(f"{args.data_dir}/{prefix}-images-idx3-ubyte.gz")
        labels = read_idx(f"{args.data_dir}/{prefix}-labels-idx1-ubyte.gz")
        return images.reshape(-1, 784), labels.astype(np.int64)

    try:
        x_train, y_train = split("train")
        x_test, y_test = split("t10k")
    except OSError as e:
        sys.exit(f"cannot read Fashion-MNIST from --data-dir {args.data_dir}: {e}; "
                 "install dataset-fashion-mnist or pass --data-dir")
    x_test = x_test.astype(np.float32) / 255.0
    steps_per_epoch = (len(x_train) + args.batch - 1) // args.batch

    spec = start_in_process_cluster(tf, args.workers, args.ps)
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, rpc_layer="grpc")
    partitioner = (tf.distribute.experimental.partitioners.FixedShardsPartitioner(args.ps)
                   if args.ps > 1 else None)
    strategy = tf.distribute.experimental.ParameterServerStrategy(
        resolver, variable_partitioner=partitioner)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)

    # The weights as plain tf.Variables, not Keras layers: Keras 3 cannot
    # read the ShardedVariables a partitioner makes. Each shard is an
    # ordinary variable on its ps; Adam is elementwise, so applying it shard
    # by shard is applying it to the whole weight.
    rng = np.random.default_rng(args.seed)
    layer_sizes = [(784, 256), (256, 128), (128, 10)]
    with strategy.scope():
        weights = []
        for fan_in, fan_out in layer_sizes:
            limit = np.sqrt(6.0 / (fan_in + fan_out))  # Glorot uniform
            weights.append(tf.Variable(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)))
            weights.append(tf.Variable(np.zeros(fan_out, np.float32)))
        shards = [s for w in weights
                  for s in (w.variables if type(w).__name__ == "ShardedVariable" else [w])]
        schedule = tf.keras.optimizers.schedules.CosineDecay(
            3e-3, decay_steps=steps_per_epoch * args.epochs, alpha=0.05)
        optimizer = tf.keras.optimizers.Adam(schedule)
        # Its slots now, on the servers, not lazily inside the first step.
        optimizer.build(shards)

    def logits_of(x):
        hidden = x
        for i in range(0, len(weights), 2):
            hidden = tf.matmul(hidden, weights[i]) + weights[i + 1]
            if i + 2 < len(weights):
                hidden = tf.nn.relu(hidden)
        return hidden

    def dataset_fn():
        # The images stay uint8 in the dataset's graph (47 MB rather than
        # 188 MB of float32 sent to every worker); each batch is scaled there.
        # No seed: each worker shuffles in its own order, as troupe's do.
        return (tf.data.Dataset.from_tensor_slices((x_train, y_train))
                .shuffle(len(x_train), reshuffle_each_iteration=True)
                .batch(args.batch)
                .map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
                .repeat()
                .prefetch(2))

    per_worker_dataset = coordinator.create_per_worker_dataset(dataset_fn)
    per_worker_iterator = iter(per_worker_dataset)

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            logits = logits_of(x)
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            loss = tf.reduce_mean(per_example)
        grads = tape.gradient(loss, shards)
        optimizer.apply_gradients(zip(grads, shards))
        return tf.reduce_sum(per_example), tf.cast(tf.shape(y)[0], tf.float32)

    @tf.function
    def train_step(iterator):
        x, y = next(iterator)
        # strategy.run: Keras' optimizer needs a replica context (as in
        # TensorFlow's parameter-server training tutorial).
        return strategy.run(replica_step, args=(x, y))

    for epoch in range(args.epochs):
        start = time.perf_counter()
        results = [coordinator.schedule(train_step, args=(per_worker_iterator,))
                   for _ in range(steps_per_epoch)]
        coordinator.join()
        seconds = time.perf_counter() - start
        loss_sum, examples = 0.0, 0.0
        for result in results:
            step_loss, step_examples = result.fetch()
            loss_sum += float(step_loss)
            examples += float(step_examples)
        logits = logits_of(tf.constant(x_test))
        accuracy = float(np.mean(np.argmax(np.asarray(logits), axis=1) == y_test))
        print(f"EPOCH,tensorflow_ps,{args.workers},{args.ps},{epoch + 1},{seconds:.3f},"
              f"{loss_sum / examples:.4f},{accuracy:.4f}", flush=True)
    sys.stdout.flush()
    # The coordinator's threads and in-process servers keep the interpreter
    # from exiting.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())

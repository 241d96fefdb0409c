"""TensorFlow's side of bench/train_epoch_vs_tensorflow.sh: the main job's
model, data, batch, optimizer and schedule in TensorFlow, timed per epoch.

MLP 784-256-128-10 (ReLU, Glorot-uniform kernels, zero biases), sparse softmax
cross-entropy summed and divided by the global batch, Adam 3e-3 with cosine
decay to 5% over all steps, global batch 256, a fresh shuffle every epoch,
MirroredStrategy over --replicas logical CPU devices, custom loop in a
tf.function: as samples/train_fashion_mnist does it. Prints one line per epoch:
`EPOCH,tensorflow,<replicas>,<epoch>,<seconds>,<train loss>,<test accuracy>`.
"""
import argparse
import os
import sys
import time

import numpy as np

from fashion_mnist_idx import read_idx


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration() for _ in range(args.replicas)])
    devices = [f"/cpu:{i}" for i in range(args.replicas)]
    strategy = tf.distribute.MirroredStrategy(devices)

    def split(prefix):
        images = read_idx(f"{args.data_dir}/{prefix}-images-idx3-ubyte.gz")
        labels = read_idx(f"{args.data_dir}/{prefix}-labels-idx1-ubyte.gz")
        return (images.reshape(-1, 784).astype(np.float32) / 255.0), labels.astype(np.int64)

    x_train, y_train = split("train")
    x_test, y_test = split("t10k")
    steps_per_epoch = (len(x_train) + args.batch - 1) // args.batch

    tf.keras.utils.set_random_seed(args.seed)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input(shape=(784,)),
            tf.keras.layers.Dense(256, activation="relu"),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        schedule = tf.keras.optimizers.schedules.CosineDecay(
            3e-3, decay_steps=steps_per_epoch * args.epochs, alpha=0.05)
        optimizer = tf.keras.optimizers.Adam(schedule)
        # Its slots now, not lazily inside the first replicated step.
        optimizer.build(model.trainable_variables)

    def step_fn(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            loss = tf.reduce_sum(per_example) / args.batch
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def train_step(batch):
        x, y = batch
        losses = strategy.run(step_fn, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    for epoch in range(args.epochs):
        dataset = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
                   .shuffle(len(x_train), seed=args.seed * 1000003 + epoch)
                   .batch(args.batch))
        dist = strategy.experimental_distribute_dataset(dataset)
        start = time.perf_counter()
        total, steps = 0.0, 0
        for batch in dist:
            total += float(train_step(batch))
            steps += 1
        seconds = time.perf_counter() - start
        logits = model(x_test, training=False)
        accuracy = float(np.mean(np.argmax(logits.numpy(), axis=1) == y_test))
        print(f"EPOCH,tensorflow,{args.replicas},{epoch + 1},{seconds:.3f},"
              f"{total / steps:.4f},{accuracy:.4f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

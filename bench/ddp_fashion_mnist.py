#!/usr/bin/python3
"""The peer of samples/libtorch_fashion_mnist: the same model, data order,
global batch, optimizer and learning rate, trained with PyTorch's own
distributed data parallel (torch.nn.parallel.DistributedDataParallel, gloo
backend) over --workers processes on this host. Debian's python3-torch (the
same PyTorch 1.13 as libtorch-dev). Prints, from rank 0,
  epoch E/N: ..., S s
  RESULT test_accuracy A
in the sample's format, for bench/libtorch_vs_ddp.sh."""
import argparse
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

from fashion_mnist_idx import read_idx


def load(data_dir, prefix):
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(images.reshape(len(images), 784).astype(np.float32) / 255.0)
    return x, torch.from_numpy(labels.astype(np.int64))


def make_model(seed):
    """The sample's initial weights: each parameter in turn uniform in
    +-1/sqrt(fan_in) after seeding (LibTorch's C++ and Python Linear
    initialise differently, so both draw them this way)."""
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 10))
    torch.manual_seed(seed)
    with torch.no_grad():
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                bound = 1.0 / layer.in_features ** 0.5
                layer.weight.uniform_(-bound, bound)
                layer.bias.uniform_(-bound, bound)
    return model


def worker(rank, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=args.workers)
    images, labels = load(args.data_dir, "train")
    test_images, test_labels = load(args.data_dir, "t10k")
    model = torch.nn.parallel.DistributedDataParallel(make_model(args.seed))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
    n = images.shape[0]
    per_worker = args.batch // args.workers
    steps = n // args.batch if args.max_steps == 0 else min(args.max_steps, n // args.batch)
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        torch.manual_seed(args.seed + epoch)  # every process draws the same order
        order = torch.randperm(n)
        loss_sum = 0.0
        for step in range(steps):
            begin = step * args.batch + rank * per_worker
            rows = order[begin:begin + per_worker]
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(images[rows]), labels[rows])
            loss.backward()  # DDP all-reduces the gradients (mean over workers)
            optimizer.step()
            loss_sum += loss.item()
        seconds = time.perf_counter() - start
        if rank == 0:
            with torch.no_grad():
                accuracy = (model.module(test_images).argmax(1) == test_labels).float().mean().item()
            print(f"epoch {epoch}/{args.epochs}: train loss {loss_sum / steps:.4f} (this process's replicas), "
                  f"test accuracy {accuracy:.4f}, {seconds:.2f} s", flush=True)
    if rank == 0:
        print(f"RESULT test_accuracy {accuracy:.4f}", flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=0, help="steps per epoch at most (0: every batch)")
    parser.add_argument("--port", type=int, default=29541)
    parser.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.workers)


if __name__ == "__main__":
    main()

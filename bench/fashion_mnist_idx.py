"""Fashion-MNIST's IDX files (gzipped), as the bench peers read them: one
reader for the TensorFlow and PyTorch peers, so they all see the same bytes."""

import gzip

import numpy as np


def read_idx(path):
    """The array in the gzipped IDX file at `path` (uint8, its stored shape)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)

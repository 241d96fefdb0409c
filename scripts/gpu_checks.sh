#!/usr/bin/env bash
# The checks of troupe's GPU code that need a GPU, in one run: the GPU tests
# (tests/gpu), bench/gpu_device (dispatch cost and the all-reduce between
# logical GPUs, each beside bare CUDA on the same card), bench/allreduce_nccl
# (troupe's NCCL all-reduce beside raw NCCL on the same GPUs), the main job's
# epoch time on the GPU beside 4 CPU replicas on the same host, and, with 2
# GPUs or more, the main job on 2 workers through NCCL.
# Usage: scripts/gpu_checks.sh [build dir (default build)] [Fashion-MNIST dir]
# Each figure is also written under $OUT when it is set.
set -uo pipefail

build="${1:-build}"
data="${2:-/usr/share/datasets/fashion-mnist}"
out="${OUT:-$(mktemp -d)}"
job="${build}/samples/train_fashion_mnist/train_fashion_mnist"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi: no GPU driver"
status=0
run() {
  local name="$1" seconds="$2"
  shift 2
  echo "=== ${name}: $*"
  timeout "${seconds}" "$@" 2>&1 | tee "${out}/${name}.txt"
  local rc=${PIPESTATUS[0]}
  [ "${rc}" -eq 0 ] || { echo "=== ${name}: exit ${rc}"; status=1; }
}
run gpu_tests 120 "${build}/tests/gpu/troupe_gpu_tests"
run gpu_device 150 "${build}/bench/gpu_device"
run allreduce_nccl 200 "${build}/bench/allreduce_nccl"
run train_gpu 90 "${job}" --data-dir "${data}" --epochs 2 --quiet --device gpu --out "${out}/gpu"
run train_gpu4 90 "${job}" --data-dir "${data}" --epochs 1 --quiet --device gpu --replicas 4 --out "${out}/gpu4"
run train_cpu 90 "${job}" --data-dir "${data}" --epochs 2 --quiet --device cpu --out "${out}/cpu"
# Two workers through NCCL need a GPU each (NCCL takes one rank per GPU).
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
if [ "${gpus}" -ge 2 ]; then
  run train_workers_nccl 180 "${build}/tools/troupe_launch/troupe-launch" --workers 2 --gpus-per-worker 1 -- \
    "${job}" --data-dir "${data}" --epochs 1 --quiet --device gpu --out "${out}/workers"
else
  echo "=== train_workers_nccl: skipped, ${gpus} GPU(s): two workers through NCCL need a GPU each"
fi
exit "${status}"

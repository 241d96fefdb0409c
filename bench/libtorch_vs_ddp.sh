#!/usr/bin/env bash
# A LibTorch model distributed by troupe against PyTorch's own distributed
# data parallel, in the same run.
#
#   bench/libtorch_vs_ddp.sh [--epochs N] [--rounds R] [--workers W] [--out DIR]
#
# Alternates R times: samples/libtorch_fashion_mnist --strategy multi_worker
# under troupe-launch with W workers, and bench/ddp_fashion_mnist.py
# (DistributedDataParallel, gloo, W processes; Debian's python3-torch), both
# N epochs of the same model, initial weights, data order, global batch 256
# and Adam at 0.003, one LibTorch thread per process. Prints each run's lines,
# then
#   ROW,workers,troupe_epoch_s,ddp_epoch_s,troupe/ddp,troupe_accuracy,ddp_accuracy,target
# with the median epoch time over all rounds and the last round's test
# accuracy. The target (issue 31): troupe/ddp <= 1.0 at accuracies within 0.005.
# The row also goes to DIR/libtorch_vs_ddp.csv (default bench_output/libtorch_vs_ddp)
# and, with gnuplot, both epoch times to DIR/libtorch_vs_ddp.png.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TROUPE_BUILD_DIR:-${repo}/build}"
epochs=2
rounds=2
workers=2
out_dir="bench_output/libtorch_vs_ddp"
while (($#)); do
  case "$1" in
    --epochs) epochs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --out) out_dir="$2"; shift 2 ;;
    *) echo "usage: $0 [--epochs N] [--rounds R] [--workers W] [--out DIR]" >&2; exit 2 ;;
  esac
done

sample="${build_dir}/samples/libtorch_fashion_mnist/libtorch_fashion_mnist"
launch="${build_dir}/tools/troupe_launch/troupe-launch"
[[ -x "${sample}" ]] || { echo "no ${sample}: install libtorch-dev and run scripts/setup.sh" >&2; exit 1; }
/usr/bin/python3 -c "import torch.distributed" 2>/dev/null \
  || { echo "the peer needs Debian's python3-torch: apt-get install python3-torch" >&2; exit 1; }

out="$(mktemp -d)"
trap 'rm -rf "${out}"' EXIT
for ((round = 1; round <= rounds; ++round)); do
  echo "# round ${round}/${rounds}: troupe (MultiWorkerMirroredStrategy, ${workers} workers)"
  "${launch}" --workers "${workers}" -- "${sample}" --strategy multi_worker --epochs "${epochs}" \
    | tee "${out}/troupe.${round}"
  echo "# round ${round}/${rounds}: PyTorch DistributedDataParallel (gloo, ${workers} processes)"
  /usr/bin/python3 "${repo}/bench/ddp_fashion_mnist.py" --workers "${workers}" --epochs "${epochs}" \
    | tee "${out}/ddp.${round}"
done

median_epoch() { # files... -> the median of every "epoch ..., S s" line's S
  grep -h -o '[0-9.]* s$' "$@" | awk '{print $1}' | sort -g \
    | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
accuracy() { grep -h -o 'RESULT test_accuracy [0-9.]*' "$1" | awk '{print $3}'; }
troupe_s="$(median_epoch "${out}"/troupe.*)"
ddp_s="$(median_epoch "${out}"/ddp.*)"
troupe_acc="$(accuracy "${out}/troupe.${rounds}")"
ddp_acc="$(accuracy "${out}/ddp.${rounds}")"
mkdir -p "${out_dir}"
csv="${out_dir}/libtorch_vs_ddp.csv"
{
echo "ROW,workers,troupe_epoch_s,ddp_epoch_s,troupe/ddp,troupe_accuracy,ddp_accuracy,target"
awk -v w="${workers}" -v t="${troupe_s}" -v d="${ddp_s}" -v ta="${troupe_acc}" -v da="${ddp_acc}" 'BEGIN {
  printf "ROW,%d,%.2f,%.2f,%.3f,%.4f,%.4f,<= 1.0 and |accuracy difference| <= 0.005 (%s)\n", w, t, d, t / d, ta, da,
         (t / d <= 1.0 && (ta - da <= 0.005 && da - ta <= 0.005)) ? "met" : "not met" }'
} | tee "${csv}"
echo "# wrote ${csv}"
"${repo}/bench/plot_epoch_times.sh" "${csv}" "${out_dir}/libtorch_vs_ddp.png" \
  "LibTorch MLP epoch: troupe vs PyTorch DDP (gloo)" "workers" "troupe" "PyTorch DDP"

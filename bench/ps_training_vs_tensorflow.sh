#!/usr/bin/env bash
# The parameter-server training epoch, troupe against TensorFlow, in the same run (issue 15).
#
#   bench/ps_training_vs_tensorflow.sh [--epochs N] [--rounds R] [--workers "2"] [--ps P]
#
# For each worker count, alternates R times: samples/train_fashion_mnist
# --strategy ps (a LocalCluster of W workers and P parameter servers in one
# process) and bench/tf_ps_training_epoch.py (TensorFlow's
# ParameterServerStrategy and ClusterCoordinator over an in-process cluster of
# as many tasks; tensorflow-cpu from PyPI in bench/.venv, installed on first
# use), both N epochs of the same model, data, batch 128 per step, Adam and
# schedule. The figure is the median epoch time of epochs 2..N of all rounds
# (TensorFlow traces its step function in epoch 1). Prints
#   ROW,workers,ps,troupe_s,tensorflow_s,troupe/tensorflow,target<=0.5,troupe_accuracy,tensorflow_accuracy
# with each side's test accuracy after its last epoch of its last round.
# P is 1 by default, as the issue measured TensorFlow. TROUPE_BUILD_DIR as setup.sh.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TROUPE_BUILD_DIR:-${repo}/build}"
venv="${repo}/bench/.venv"
epochs=3
rounds=2
worker_counts="2"
ps=1
usage="usage: $0 [--epochs N>=2] [--rounds R>=1] [--workers \"2 4\"] [--ps P>=1]"
while (($#)); do
  case "$1" in
    --epochs) epochs="${2:?${usage}}"; shift 2 ;;
    --rounds) rounds="${2:?${usage}}"; shift 2 ;;
    --workers) worker_counts="${2:?${usage}}"; shift 2 ;;
    --ps) ps="${2:?${usage}}"; shift 2 ;;
    *) echo "${usage}" >&2; exit 2 ;;
  esac
done
for value in "${epochs}" "${rounds}" "${ps}" ${worker_counts}; do
  [[ "${value}" =~ ^[1-9][0-9]*$ ]] || { echo "\"${value}\" is not a positive whole number; ${usage}" >&2; exit 2; }
done
if ((epochs < 2)); then
  echo "--epochs must be at least 2: epoch 1 is not timed (TensorFlow traces in it)" >&2
  exit 2
fi

job="${build_dir}/samples/train_fashion_mnist/train_fashion_mnist"
[[ -x "${job}" ]] || { echo "no ${job}: run scripts/setup.sh first (or set TROUPE_BUILD_DIR)" >&2; exit 1; }
if [[ ! -x "${venv}/bin/python" ]] || ! "${venv}/bin/python" -c "import tensorflow" 2>/dev/null; then
  echo "installing tensorflow-cpu into ${venv} (once)" >&2
  python3 -m venv "${venv}"
  "${venv}/bin/pip" install -q tensorflow-cpu
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Fails loudly rather than printing a ratio of nothing.
require() {
  local what="$1" value="$2" output="$3"
  if [[ -z "${value}" ]]; then
    echo "no ${what} in this output:" >&2
    echo "${output}" >&2
    exit 1
  fi
}

out_dir="$(mktemp -d)"
trap 'rm -rf "${out_dir}"' EXIT
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
     "load $(cut -d' ' -f1-3 /proc/loadavg); ${ps} ps; ${epochs} epochs x ${rounds} rounds"
echo "ROW,workers,ps,troupe_s,tensorflow_s,troupe/tensorflow,target<=0.5,troupe_accuracy,tensorflow_accuracy"
for workers in ${worker_counts}; do
  troupe_times=""
  tf_times=""
  troupe_accuracy=""
  tf_accuracy=""
  for ((round = 0; round < rounds; ++round)); do
    out="$("${job}" --strategy ps --workers "${workers}" --ps "${ps}" --epochs "${epochs}" --quiet \
           --out "${out_dir}")"
    times="$(sed -n 's/^epoch \([0-9]*\)\/[0-9]*: .*, \([0-9.]*\) s, .*examples\/s$/\1 \2/p' <<<"${out}" \
             | awk '$1 > 1 { print $2 }')"
    require "troupe epoch times" "${times}" "${out}"
    troupe_times+="${times}"$'\n'
    troupe_accuracy="$(sed -n 's/^final test accuracy \([0-9.]*\)$/\1/p' <<<"${out}")"
    require "troupe final test accuracy" "${troupe_accuracy}" "${out}"

    out="$("${venv}/bin/python" "${repo}/bench/tf_ps_training_epoch.py" --workers "${workers}" --ps "${ps}" \
           --epochs "${epochs}")"
    times="$(awk -F, '/^EPOCH,/ && $5 > 1 { print $6 }' <<<"${out}")"
    require "TensorFlow epoch times" "${times}" "${out}"
    tf_times+="${times}"$'\n'
    tf_accuracy="$(awk -F, '/^EPOCH,/ { a = $8 } END { print a }' <<<"${out}")"
  done
  t="$(grep . <<<"${troupe_times}" | median)"
  f="$(grep . <<<"${tf_times}" | median)"
  awk -v w="${workers}" -v p="${ps}" -v t="${t}" -v f="${f}" -v ta="${troupe_accuracy}" -v fa="${tf_accuracy}" \
    'BEGIN { printf "ROW,%s,%s,%.3f,%.3f,%.3f,0.5,%s,%s\n", w, p, t, f, t / f, ta, fa }'
done

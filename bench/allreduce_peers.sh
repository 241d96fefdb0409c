#!/usr/bin/env bash
# troupe's cross-process all-reduce beside OpenMPI and Gloo, in the same run.
#
#   bench/allreduce_peers.sh [--ranks "2 4"] [--sizes 4096,65536,1048576,16777216,67108864] [--seconds S]
#                            [--out DIR]
#
# For each process count: OpenMPI's MPI_Allreduce over TCP (--mca btl
# tcp,self) and over shared memory (vader,self), Gloo's best algorithm per
# size (TCP on 127.0.0.1), then troupe over its TCP broker and over UCX shared
# memory (bench/allreduce_cluster, which also probes raw loopback TCP), then
# the peers again, so that a drift of the
# machine shows. float32 SUM, 1 process per rank, every result checked; each
# figure is the median over calls of the slowest rank's time. The peers are
# built from bench/peers/ into $TROUPE_BUILD_DIR/bench-peers; their Debian
# packages (openmpi-bin, libopenmpi-dev, libgloo-dev) are installed when
# missing (root or sudo), here and not by the README's commands.
#
# Prints every ROW as it comes, then per process count and size:
#   CMP,ranks,bytes,troupe_tcp_us,troupe_ucx_us,mpi_tcp_us,mpi_shm_us,gloo_us,
#       tcp/mpi_tcp,ucx/mpi_shm,best/gloo
# (a peer's figure is the better of its two runs; tcp/mpi_tcp is troupe over
# TCP against OpenMPI over TCP, ucx/mpi_shm troupe over shared memory against
# OpenMPI's, best/gloo troupe's better transport against Gloo; ratios > 1:
# troupe slower). The CMP lines also go to DIR/allreduce_peers.csv (default
# bench_output/allreduce_peers), and with gnuplot (gnuplot-nox) a plot of
# every implementation's bus bandwidth against the size, a panel per process
# count, to DIR/allreduce_peers.png.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TROUPE_BUILD_DIR:-${repo}/build}"
peers_dir="${build_dir}/bench-peers"
ranks_list="2 4"
sizes="4096,65536,1048576,16777216,67108864"
seconds=0.5
out_dir="bench_output/allreduce_peers"
while (($#)); do
  case "$1" in
    --ranks) ranks_list="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --out) out_dir="$2"; shift 2 ;;
    *) echo "usage: $0 [--ranks \"2 4\"] [--sizes BYTES,...] [--seconds S per size and peer] [--out DIR]" >&2
       exit 2 ;;
  esac
done

troupe_bench="${build_dir}/bench/allreduce_cluster"
[[ -x "${troupe_bench}" ]] || { echo "no ${troupe_bench}: run scripts/setup.sh first" >&2; exit 1; }

# -- the peers' packages and programs ------------------------------------------
missing=()
for pkg in openmpi-bin libopenmpi-dev libgloo-dev; do
  [[ "$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)" == "install ok installed" ]] || missing+=("${pkg}")
done
if ((${#missing[@]} > 0)); then
  echo "# installing the peers' packages: ${missing[*]}" >&2
  as_root=()
  [[ "$(id -u)" -eq 0 ]] || as_root=(sudo)
  "${as_root[@]}" apt-get install -y -q "${missing[@]}" >&2
fi
mkdir -p "${peers_dir}"
mpicc -O2 -o "${peers_dir}/mpi_allreduce" "${repo}/bench/peers/mpi_allreduce.c"
g++ -O2 -std=c++17 -o "${peers_dir}/gloo_allreduce" "${repo}/bench/peers/gloo_allreduce.cpp" -lgloo -lpthread

# mpirun as root needs to be told; the machine's 2 cores hold 4 ranks only oversubscribed.
mpirun=(mpirun --oversubscribe --bind-to none --mca pml ob1)
[[ "$(id -u)" -ne 0 ]] || mpirun+=(--allow-run-as-root)

rows="$(mktemp)"
trap 'rm -f "${rows}"' EXIT

run_peers() {
  local ranks="$1"
  "${mpirun[@]}" -n "${ranks}" --mca btl tcp,self "${peers_dir}/mpi_allreduce" tcp "${sizes}" "${seconds}" | tee -a "${rows}"
  "${mpirun[@]}" -n "${ranks}" --mca btl vader,self "${peers_dir}/mpi_allreduce" shm "${sizes}" "${seconds}" \
    | tee -a "${rows}"
  local store
  store="$(mktemp -d)"
  local pids=()
  for ((r = 1; r < ranks; ++r)); do
    "${peers_dir}/gloo_allreduce" "${r}" "${ranks}" "${store}" "${sizes}" "${seconds}" &
    pids+=("$!")
  done
  "${peers_dir}/gloo_allreduce" 0 "${ranks}" "${store}" "${sizes}" "${seconds}" | tee -a "${rows}"
  wait "${pids[@]}"
  rm -rf "${store}"
}

echo "# allreduce_peers: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores;" \
     "$(mpirun --version 2>&1 | head -1); Gloo $(dpkg-query -W -f='${Version}' libgloo-dev)"
for ranks in ${ranks_list}; do
  echo "# --- ${ranks} processes: peers before troupe"
  run_peers "${ranks}"
  echo "# --- ${ranks} processes: troupe"
  "${troupe_bench}" --ranks "${ranks}" --sizes "${sizes}" | tee -a "${rows}"
  echo "# --- ${ranks} processes: peers after troupe"
  run_peers "${ranks}"
done

mkdir -p "${out_dir}"
csv="${out_dir}/allreduce_peers.csv"
{
echo "CMP,ranks,bytes,troupe_tcp_us,troupe_ucx_us,mpi_tcp_us,mpi_shm_us,gloo_us,tcp/mpi_tcp,ucx/mpi_shm,best/gloo"
awk -F, '
  function ratio(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f", a / b) : "" }
  /^ROW,/ {
    key = $4 "," $5
    if ($2 == "troupe") who = $3 == "ucx-shm" ? "troupe_ucx" : "troupe_tcp"
    else who = $2 == "gloo" ? "gloo" : "mpi_" $3
    if (!((who, key) in best) || $6 < best[who, key]) best[who, key] = $6
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  }
  END {
    for (i = 1; i <= n; ++i) {
      k = order[i]
      t = best["troupe_tcp", k]; u = best["troupe_ucx", k]
      fastest = (u > 0 && (t <= 0 || u < t)) ? u : t
      print "CMP," k "," t "," u "," best["mpi_tcp", k] "," best["mpi_shm", k] "," best["gloo", k] "," \
            ratio(t, best["mpi_tcp", k]) "," ratio(u, best["mpi_shm", k]) "," ratio(fastest, best["gloo", k])
    }
  }' "${rows}"
} | tee "${csv}"
echo "# wrote ${csv}"

# -- the plot: bus bandwidth (GB/s, as nccl-tests count it: 2(n-1)/n bytes per
# rank and call) against the size, every implementation, a panel per process count.
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "# no plot: gnuplot is not installed (apt-get install gnuplot-nox)"
  exit 0
fi
png="${out_dir}/allreduce_peers.png"
panels=(${ranks_list})
{
  echo "set terminal pngcairo size $((640 * ${#panels[@]})),480 noenhanced"
  echo "set output '${png}'"
  echo "set datafile separator ','"
  echo "set logscale x 2; set format x '%.0s%cB'; set key top left; set grid"
  echo "set xlabel 'bytes per rank'; set ylabel 'bus bandwidth (GB/s)'"
  echo "set multiplot layout 1,${#panels[@]}"
  for ranks in "${panels[@]}"; do
    echo "set title 'float32 SUM all-reduce, ${ranks} processes'"
    bw="(column(3)*2*(${ranks}-1)/${ranks}/(column(i)*1000.0))"
    echo -n "plot "
    first=1
    for series in "4:troupe TCP" "5:troupe UCX shm" "6:OpenMPI TCP" "7:OpenMPI shm (vader)" "8:Gloo"; do
      ((first)) || echo -n ", "
      first=0
      i="${series%%:*}"
      echo -n "'${csv}' using (\$2 == ${ranks} && \$${i} > 0 ? \$3 : 1/0):(${bw//column(i)/column(${i})})"
      echo -n " with linespoints title '${series#*:}'"
    done
    echo
  done
  echo "unset multiplot"
} > "${out_dir}/allreduce_peers.gnuplot"
gnuplot "${out_dir}/allreduce_peers.gnuplot" && echo "# wrote ${png}"

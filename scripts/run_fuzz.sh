#!/usr/bin/env bash
# Builds the libFuzzer targets under fuzz/ into build-fuzz/ with clang
# (TROUPE_FUZZ=ON: ASan + UBSan + coverage; only the libraries the targets
# need), then runs them with `ctest -L fuzz`: each target fuzzes a scratch
# copy of its seed corpus fuzz/corpus/<target>/ for TROUPE_FUZZ_SECONDS
# seconds (10 unless set; CI runs the default). A failing input is left
# under build-fuzz/fuzz/work/<target>/. scripts/setup.sh installs clang and
# libFuzzer (libclang-rt-14-dev). Extra arguments go to ctest, e.g.
# `TROUPE_FUZZ_SECONDS=600 scripts/run_fuzz.sh -R handshake`.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TROUPE_FUZZ_BUILD_DIR:-${repo}/build-fuzz}"
seconds="${TROUPE_FUZZ_SECONDS:-10}"

log() { printf 'run_fuzz: %s\n' "$*" >&2; }

if [[ ! -f "${build_dir}/CMakeCache.txt" ]]; then
  log "configuring ${build_dir}"
  # The project's CMakeLists.txt uses ccache when it is installed.
  cmake -S "${repo}" -B "${build_dir}" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DTROUPE_FUZZ=ON \
    -DTROUPE_ENABLE_CUDA=OFF -DTROUPE_BUILD_TESTS=OFF -DTROUPE_BUILD_BENCH=OFF -DTROUPE_BUILD_SAMPLES=OFF
fi
log "building the fuzz targets in ${build_dir}"
cmake --build "${build_dir}" --target troupe_fuzz -j "$(nproc)"
# Each target stops itself after ${seconds} s; the deadline leaves room for
# its start and a crash report.
exec ctest --test-dir "${build_dir}" -L fuzz --output-on-failure -j2 --timeout $((seconds + 120)) "$@"

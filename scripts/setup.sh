#!/usr/bin/env bash
# Prepares a Debian 12 machine for troupe and builds it into build/.
#
# Idempotent: installs only the Debian packages that are missing (apt-get, as
# root or through sudo), configures build/ with CMake + Ninja on the first run
# and rebuilds incrementally afterwards. ccache is used when installed (the
# project's CMakeLists.txt picks it up; CCACHE_DIR keeps ccache's default
# unless you set it).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TROUPE_BUILD_DIR:-${repo}/build}"

packages=(
  cmake ninja-build g++ ccache
  libcaf-dev libboost-context-dev catch2 libeigen3-dev zlib1g-dev
  nlohmann-json3-dev libcli11-dev libssl-dev
  libucx-dev pkg-config # the data plane over shared memory (net/ucx)
  libdlpack-dev # Tensor::from_dlpack / to_dlpack (core/src/dlpack.cpp)
  doxygen # the API reference (target docs: build/docs/api/html/index.html)
  libtorch-dev # samples/libtorch_fashion_mnist (LibTorch 1.13, CPU; ~157 packages, about a minute)
  clang libclang-rt-14-dev # libFuzzer for scripts/run_fuzz.sh
  dataset-fashion-mnist gnuplot-nox
)

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# -- Debian packages -------------------------------------------------------------
missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null || true)"
  if [[ "${status}" != "install ok installed" ]]; then
    missing+=("${pkg}")
  fi
done

if ((${#missing[@]} > 0)); then
  log "installing missing packages: ${missing[*]}"
  if [[ "$(id -u)" -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    die "missing packages (${missing[*]}) and this is neither root nor has sudo;" \
        "run as root: apt-get install -y ${missing[*]}"
  fi
  apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q)
  "${apt[@]}" update || log "apt-get update failed; trying the package lists there are"
  "${apt[@]}" install -y --no-install-recommends "${missing[@]}" \
    || die "apt-get could not install: ${missing[*]} (see its messages above)"
fi

# -- configure and build ----------------------------------------------------------
if [[ ! -f "${build_dir}/CMakeCache.txt" ]]; then
  log "configuring ${build_dir}"
  cmake -S "${repo}" -B "${build_dir}" -G Ninja
fi
log "building ${build_dir}"
cmake --build "${build_dir}" -j "$(nproc)"

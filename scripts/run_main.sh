#!/usr/bin/env bash
# Builds troupe (scripts/setup.sh), then runs the main job; extra arguments are
# passed to it, e.g. `scripts/run_main.sh --simulate --seed 7`.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TROUPE_BUILD_DIR:-${repo}/build}"

# The main job, relative to the build directory.
main_job="samples/train_fashion_mnist/train_fashion_mnist"

bash "${repo}/scripts/setup.sh" >&2
exec "${build_dir}/${main_job}" "$@"

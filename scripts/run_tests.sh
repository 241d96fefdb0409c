#!/usr/bin/env bash
# Builds troupe (scripts/setup.sh), then runs the whole test suite with ctest,
# then the fuzz targets (scripts/run_fuzz.sh: TROUPE_FUZZ_SECONDS, 10 unless
# set, per target). Every test has a deadline set by the project; the exit
# status is the suite's, else the fuzz run's, and the last lines printed are
# ctest's summaries. Extra arguments go to the suite's ctest, e.g.
# `scripts/run_tests.sh -R install` (which then skips the fuzz run).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TROUPE_BUILD_DIR:-${repo}/build}"

bash "${repo}/scripts/setup.sh"
ctest --test-dir "${build_dir}" --output-on-failure -j2 "$@"
if (($# == 0)); then
  bash "${repo}/scripts/run_fuzz.sh"
fi

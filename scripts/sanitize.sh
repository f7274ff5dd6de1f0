#!/usr/bin/env bash
# The sanitizer run: every GPU test binary and every program at a small size
# under compute-sanitizer's memcheck, racecheck, synccheck and initcheck.
# Each must report 0 errors. Needs a GPU (without one, everything is skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x "$(command -v nvcc)" ] || export PATH=/usr/local/cuda/bin:$PATH
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset default
cmake --build --preset default -j "$jobs"
ctest --preset sanitize -j "${SANITIZE_JOBS:-4}" "$@"

#!/usr/bin/env bash
# README command 2: build everything and run every test.
# Without a GPU, the GPU tests are skipped and say why; the run still passes.
#   scripts/test.sh               preset "default" (build/)
#   scripts/test.sh --preset ci   warnings as errors (build-ci/), as CI runs it
# GPU CI runners: CUDA_EXAMPLES_REQUIRE_GPU=1 scripts/test.sh  (a skip becomes a failure)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=default
if [ "${1:-}" = "--preset" ]; then preset=${2:?--preset needs a name}; fi
[ -x "$(command -v nvcc)" ] || export PATH=/usr/local/cuda/bin:$PATH
scripts/setup.sh test
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"

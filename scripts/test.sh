#!/usr/bin/env bash
# README command 2: build everything and run every test, then summarise: how many
# passed, failed and were skipped, and why each group was skipped.
# Without a GPU, the GPU tests are skipped and say why; the run still passes.
#   scripts/test.sh                 presets "default": build/, the tree the tour uses too
#   scripts/test.sh --preset ci     warnings as errors (build-ci/), as .ci/run runs it
#   scripts/test.sh --preset gpu    a GPU CI runner: no GPU is a failure (build-gpu/)
#   scripts/test.sh -R VA-GPU-NN    anything else goes to ctest: here, one program's tests
# Each run writes a JUnit report: <build folder>/junit.xml.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=default
if [ "${1:-}" = "--preset" ]; then preset=${2:?--preset needs a name}; shift 2; fi
[ -x "$(command -v nvcc)" ] || export PATH=/usr/local/cuda/bin:$PATH
scripts/setup.sh test
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
junit=$(python3 scripts/test_summary.py --preset "$preset" --where 2>/dev/null || true)
[ -n "$junit" ] && rm -f "$junit"   # a report left from an earlier run must not be summarised
status=0
ctest --preset "$preset" -j "$jobs" "$@" || status=$?
if [ -n "$junit" ]; then
  python3 scripts/test_summary.py "$junit" || true
else
  echo "(no python3 to summarise the skip reasons: see Testing/Temporary/LastTest.log)"
fi
exit $status

#!/usr/bin/env bash
# The sanitizer runs: every GPU test binary and every program at a small size
# under compute-sanitizer's memcheck, racecheck, synccheck and initcheck; each
# must report 0 errors. Needs compute-sanitizer and a GPU, and says so when one
# is missing, rather than succeed while checking nothing:
#   compute-sanitizer missing   exit 1, with where to get it
#   no usable GPU               exit 77, with the reason (as the programs do);
#                               exit 1 when CUDA_EXAMPLES_REQUIRE_GPU=1
#   scripts/sanitize.sh                          build/, test preset "sanitize"
#   scripts/sanitize.sh --preset gpu-sanitize    a GPU CI runner (build-gpu/)
#   scripts/sanitize.sh -R VA-GPU-NN             anything else goes to ctest
# Parallel runs: SANITIZE_JOBS (default 4; each run holds GPU memory).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=sanitize
if [ "${1:-}" = "--preset" ]; then preset=${2:?--preset needs a name}; shift 2; fi
case $preset in
  sanitize) configure=default ;;
  gpu-sanitize) configure=gpu ;;
  *) echo "sanitize: --preset must be sanitize or gpu-sanitize" >&2; exit 2 ;;
esac
[ -x "$(command -v nvcc)" ] || export PATH=/usr/local/cuda/bin:$PATH

# compute-sanitizer ships with the CUDA Toolkit, next to nvcc.
sanitizer=$(command -v compute-sanitizer || true)
nvcc_dir=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
for candidate in "$nvcc_dir/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$candidate" ] && sanitizer=$candidate
done
if [ -z "$sanitizer" ]; then
  cat >&2 <<EOM
sanitize: FAILED: compute-sanitizer is not installed, so nothing can be checked.
  It is part of the CUDA Toolkit and belongs next to nvcc ($nvcc_dir/); install the
  toolkit's sanitizer component (NVIDIA's apt repository: apt-get install cuda-sanitizer-13-0),
  or put an existing compute-sanitizer on PATH.
EOM
  exit 1
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$configure" -DCUDA_EXAMPLES_SANITIZER="$sanitizer"
cmake --build --preset "$configure" -j "$jobs"

# A GPU, before hundreds of runs that would each skip or fail for the same reason.
binary_dir=$(dirname "$(python3 scripts/test_summary.py --preset "$preset" --where)")
probe_status=0
probe=$(env -u CUDA_EXAMPLES_REQUIRE_GPU "$binary_dir/ceilings" --quick 2>&1) || probe_status=$?
if [ "$probe_status" = 77 ]; then
  echo "sanitize: no usable GPU, so nothing can be checked: $(tail -n 1 <<<"$probe")" >&2
  [ "${CUDA_EXAMPLES_REQUIRE_GPU:-0}" = 1 ] && exit 1
  exit 77
fi

junit=$(python3 scripts/test_summary.py --preset "$preset" --where)
rm -f "$junit"
status=0
ctest --preset "$preset" -j "${SANITIZE_JOBS:-4}" --output-junit "$junit" "$@" || status=$?
python3 scripts/test_summary.py "$junit" || true
exit $status

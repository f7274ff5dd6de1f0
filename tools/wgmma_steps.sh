#!/usr/bin/env bash
# MM-GPU-WGMMA's four steps against cuBLAS in the same run, for docs/ch04_tensor_cores.md: BF16 at
# Width 4096 and 8192, TF32 at 4096, uniform data, 20 timed launches each; every output
# after a '$ MM-GPU-WGMMA ARGS' line (docs/gen/g.py: wgmma_runs reads it).
#   tools/wgmma_steps.sh BUILD_DIR > docs/runs/h200/side/wgmma-steps.log
# BUILD_DIR: a build folder (configured if needed; only MM-GPU-WGMMA is built). Needs an
# H100 or H200 (compute capability 9.0). About a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: tools/wgmma_steps.sh BUILD_DIR}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
        -DCUDA_EXAMPLES_CHAPTERS=ch04_matmul >&2
fi
cmake --build "$build" --target MM-GPU-WGMMA -j "$(nproc)" >&2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/# GPU: /'
for run in "bf16 4096" "bf16 8192" "tf32 4096"; do
    set -- $run
    args=(--precision "$1" --width "$2" --data uniform --compare-cublas --repeats 20)
    echo "\$ MM-GPU-WGMMA ${args[*]}"
    "$build/ch04_matmul/MM-GPU-WGMMA" "${args[@]}"
done

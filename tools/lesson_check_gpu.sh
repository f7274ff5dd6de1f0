#!/usr/bin/env bash
# On a GPU machine, from the repository root: build (CUDA_ARCH, default 90), then
#   tools/lesson_check_gpu.sh mutants   the planted bugs of the lessons and the ceilings
#                                         (ctest -L mutant, one at a time: the lessons are timings)
#   tools/lesson_check_gpu.sh runs N    every lesson program N times: each ratio's spread
#                                         and each Lesson line (tools/lesson_runs.py)
#   tools/lesson_check_gpu.sh ctest     ctest -L lesson, one test at a time
# Logs go to $OUT (default results/lessons/). Stops starting rounds after DEADLINE seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/lessons}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
export CUDA_EXAMPLES_REQUIRE_GPU=1
# Issue 23's planted bugs: each keeps the answers right and breaks a lesson or a rate.
LESSON_MUTANTS='mutant\.(bytes_counted_twice|flops_counted_twice|tf32_truncated|bf16_truncated|'\
'strided_index|cap_put_back|sequential_made_divergent|tiles_unused|spheres_in_global|'\
'pinned_is_pageable|kernels_on_stream_0|everything_on_stream_0)\.caught'

target=""  # the runs need the programs only; ctest and the planted bugs need the tests too
[[ "${1:-runs}" == runs ]] && target="--target programs"
started=$SECONDS
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DBUILD_TESTING=ON \
    > "$OUT/build.log" 2>&1 && cmake --build "$BUILD" -j "$(nproc)" $target >> "$OUT/build.log" 2>&1 \
    || { tail -30 "$OUT/build.log"; exit 1; }
echo "built in $((SECONDS - started)) s"
case "${1:-runs}" in
    mutants) (cd "$BUILD" && ctest -L mutant -R "$LESSON_MUTANTS" -j1 --output-on-failure) \
                 | tee "$OUT/mutants.txt" ;;
    runs) python3 tools/lesson_runs.py --build "$BUILD" --runs "${2:-10}" --pairs \
              --deadline "${DEADLINE:-0}" --out "$OUT/lessons.json" | tee "$OUT/lessons.txt" ;;
    ctest) (cd "$BUILD" && ctest -L lesson -j1 --output-on-failure) | tee "$OUT/ctest-lesson.txt" ;;
    *) echo "usage: $0 mutants | runs N | ctest" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# On a GPU machine, from the repository root: build (CUDA_ARCH, default 90), then
#   scripts/lesson_check_gpu.sh mutants   the planted bugs of the lessons and the ceilings,
#                                         each beside its control (scripts/lesson_mutants.py)
#   scripts/lesson_check_gpu.sh runs N    every lesson program N times: each ratio's spread
#                                         and each Lesson line (scripts/lesson_runs.py)
#   scripts/lesson_check_gpu.sh ctest     ctest -L lesson, one test at a time
# Logs go to $OUT (default results/lessons/). Stops starting rounds after DEADLINE seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/lessons}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
export CUDA_EXAMPLES_REQUIRE_GPU=1
started=$SECONDS
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DBUILD_TESTING=ON \
    > "$OUT/build.log" 2>&1 && cmake --build "$BUILD" -j "$(nproc)" >> "$OUT/build.log" 2>&1 \
    || { tail -30 "$OUT/build.log"; exit 1; }
echo "built in $((SECONDS - started)) s"
case "${1:-runs}" in
    mutants) python3 scripts/lesson_mutants.py --build "$BUILD" --control | tee "$OUT/mutants.md" ;;
    runs) python3 scripts/lesson_runs.py --build "$BUILD" --runs "${2:-10}" --pairs \
              --deadline "${DEADLINE:-0}" --out "$OUT/lessons.json" | tee "$OUT/lessons.txt" ;;
    ctest) (cd "$BUILD" && ctest -L lesson -j1 --output-on-failure) | tee "$OUT/ctest-lesson.txt" ;;
    *) echo "usage: $0 mutants | runs N | ctest" >&2; exit 2 ;;
esac

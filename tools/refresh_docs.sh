#!/usr/bin/env bash
# Measures everything again on this machine's GPU and regenerates every handout from it: the one
# command that refreshes docs/ (docs/README.md, "Keeping the handouts true").
#
#   tools/refresh_docs.sh [--preset P] [--tours N]   (default preset: gpu, build folder
#                                                       build-gpu/; N = 3 tours)
#
# 1. the tour, at full size, into a new results folder (README command 1; it builds the programs
#    and makes .venv/ with matplotlib and cogapp through scripts/setup.sh);
# 2. the side measurements the handouts quote besides the tour (chapter 5's compare.py), into the
#    same folder;
# 3. scripts/docs.py import: that folder becomes the committed results run docs/runs/h200/
#    (results.json, logs, the side measurements; plots redrawn), refused if any check failed;
#    then N - 1 more tours of the same build, kept beside it as repeats/ (scripts/docs.py
#    repeat): host-timed figures (end to end, the CPU, pageable copies, the tour's length) move
#    by tens of percent between runs, so the handouts give them as median [range] over all N;
#    and the handouts' exercises that change the code (tests/exercises/), each built and run,
#    into side/exercises.json (the answer key's exercise answers; exercise.py check);
#    and chapter 3's racecheck run of stencil_1d without its barrier into
#    side/racecheck-stencil_1d.log (its report's line numbers, shown in the handout);
# 4. scripts/docs.py update: every marked block of README.md and docs/*.md rewritten;
# 5. scripts/docs.py check: the blocks are current and every measured number in prose has a
#    source; a stale hand-written number is named here, to be fixed by hand.
# Then review `git diff docs README.md` and commit. Needs a GPU (exit 77 from the tour without).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=gpu
tours=3
while [ $# -ge 2 ]; do
    case $1 in
        --preset) preset=$2; shift 2 ;;
        --tours) tours=$2; shift 2 ;;
        *) break ;;
    esac
done
[ $# -eq 0 ] && [[ $tours =~ ^[1-9][0-9]*$ ]] ||
    { echo "usage: tools/refresh_docs.sh [--preset P] [--tours N]" >&2; exit 2; }
build=$(python3 -c "import sys; sys.path.insert(0, 'scripts'); import tour; print(tour.preset_binary_dir('$preset'))")
run="results/refresh-$(date +%Y%m%d-%H%M%S)"
echo "refresh_docs: 1/5 the tour (preset $preset, build $build) into $run"
CUDA_EXAMPLES_REQUIRE_GPU=1 python3 scripts/tour.py --preset "$preset" --results "$run"
echo "refresh_docs: 2/5 chapter 5's constant-versus-global comparison"
python3 ch05_raytrace/compare.py --build "$build" --rounds 3 --repeats 50 > "$run/ch05_compare.md"
echo "refresh_docs: 3/5 import $run as docs/runs/h200/"
.venv/bin/python scripts/docs.py import "$run"
for i in $(seq 2 "$tours"); do
    echo "refresh_docs: 3/5 repeat $i of $tours of the tour, kept as docs/runs/h200/repeats/"
    CUDA_EXAMPLES_REQUIRE_GPU=1 python3 scripts/tour.py --preset "$preset" --results "$run-r$i"
    .venv/bin/python scripts/docs.py repeat "$run-r$i"
done
echo "refresh_docs: 3/5 the handouts' exercises (tests/exercises/) into docs/runs/h200/side/exercises.json"
python3 tests/exercises/exercise.py run --out docs/runs/h200/side/exercises.json \
    --commit "$(git rev-parse HEAD 2>/dev/null || echo unknown)"
echo "refresh_docs: 3/5 chapter 3's racecheck run of stencil_1d --no-barrier into docs/runs/h200/side/"
(cd ch03_dot_product &&
    nvcc -std=c++17 -O2 -lineinfo -o /tmp/stencil_1d-racecheck stencil_1d.cu &&
    { echo "# stencil_1d.cu sha256 $(sha256sum stencil_1d.cu | cut -c1-64)"
      echo "# GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
      echo '$ nvcc -std=c++17 -O2 -lineinfo -o stencil_1d stencil_1d.cu'
      echo '$ compute-sanitizer --tool racecheck ./stencil_1d --no-barrier --n 1000 --repeats 1'
      compute-sanitizer --tool racecheck /tmp/stencil_1d-racecheck --no-barrier --n 1000 --repeats 1 2>&1 |
          sed 's|/tmp/stencil_1d-racecheck|./stencil_1d|g' || true
    } > ../docs/runs/h200/side/racecheck-stencil_1d.log)
echo "refresh_docs: 4/5 regenerate the marked blocks"
.venv/bin/python scripts/docs.py update --build "$build"
echo "refresh_docs: 5/5 check"
.venv/bin/python scripts/docs.py check --build "$build"
echo "refresh_docs: done; review with: git diff --stat docs README.md"

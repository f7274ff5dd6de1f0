#!/usr/bin/env bash
# Fuzzes the scene-file parser with libFuzzer (clang), with AddressSanitizer
# and UndefinedBehaviorSanitizer watching.
#   tests/ch05_raytrace/fuzz_scene_parser.sh [SECONDS]     (default 300)
# Builds into build-fuzz/ch05/, starts from the scene files in the repository
# and keeps the corpus it grows there. A crash leaves crash-* files in that
# folder and makes this script fail; replay one with
#   build-fuzz/ch05/fuzz_scene_parser crash-...
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-300}
out=build-fuzz/ch05
mkdir -p "$out/corpus"
CXX=${CXX:-clang++}
"$CXX" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -o "$out/fuzz_scene_parser" tests/ch05_raytrace/fuzz_scene_parser.cpp
cp ch05_raytrace/scenes/*.txt tests/ch05_raytrace/scenes/*.txt "$out/corpus/"
cd "$out"
./fuzz_scene_parser -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 \
  -dict=../../tests/ch05_raytrace/scene.dict corpus 2>&1 | tee fuzz.log |
  grep -E "^#[0-9]+ +(DONE|pulse)|stat::|ERROR|SUMMARY" || true
grep -q "^stat::number_of_executed_units" fuzz.log && ! grep -q "ERROR:" fuzz.log

#!/usr/bin/env bash
# tools/clock_record.sh OUT [clock.py all options]: on a GPU machine, the independent clock's
# table (tests/clock/README.md) from a fresh build: configures and builds the programs in a new
# folder ($CLOCK_BUILD, or a new temporary one), compiles the injection library, runs every run
# of tests/clock/runs.json
# under it, and writes OUT/clock.json, OUT/clock.md (every record: claimed count, clocked time,
# event time, ratio, tolerance, verdict) and OUT/logs.tar.gz (each run's output and GPU trace).
# On an H200 with 16 cores: 95 s, the build (21 s) included. Exit 1 when a record fails.
#   tools/clock_record.sh results/clock            every run
#   tools/clock_record.sh results/clock --only MM  the runs whose name matches
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tools/clock_record.sh OUT [--only REGEX]}
shift
mkdir -p "$out" && out=$(cd "$out" && pwd)
build=${CLOCK_BUILD:-$(mktemp -d)/build}  # not under OUT: only the table and logs go there
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
started=$(date +%s)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
echo "clock_record: configure and build the programs in $build"
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
  -DCUDA_EXAMPLES_MUTANTS=off -DCMAKE_CUDA_ARCHITECTURES="${CUDAARCHS:-90}" >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target programs >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
g++ -shared -fPIC -O2 -I"$cuda/include" "$root/tests/clock/clock_inject.cpp" \
  -o "$build/libclock_inject.so" -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -lcupti \
  -Wl,-rpath,"$cuda/lib64:$cuda/extras/CUPTI/lib64" || exit 1
echo "clock_record: built in $(($(date +%s) - started)) s; the runs:"
python3 "$root/tests/clock/clock.py" all --bin-dir "$build" --lib "$build/libclock_inject.so" \
  --out "$out" --repeats 5 --gpus "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" "$@"
status=$?
tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$out/logs"  # one file: each run's output and trace
python3 "$root/tests/clock/clock.py" table "$out/clock.json" --markdown "$out/clock.md" \
  --gpu "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "clock_record: exit $status after $(($(date +%s) - started)) s; table $out/clock.md"
exit $status

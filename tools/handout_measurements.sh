#!/usr/bin/env bash
# The measurements behind three sentences of the handouts that no results run makes (issue 44),
# in one pass on a GPU machine (an H200: about two minutes, the build included):
#   tools/handout_measurements.sh            writes into ${OUT:-/tmp}/handouts/
#
# 1. side/reduction-modulo.json: chapter 3's interleaved trees, "divergence or the division?".
#    reduction is built as it is (CMake) and with the interleaved trees' test
#    `x % (2 * stride) == 0` written `(x & (2 * stride - 1)) == 0` (the same test for a power of
#    two, without the division; its standalone nvcc line, on a copy). Nsight Compute counts each
#    kernel's executed instructions (warp and thread level) and its duration on one launch of
#    each, with the GPU's clocks left as they are (--clock-control none); then each build runs
#    its four kernels with its own events (`--json`). docs/gen/ch03.py's reduction_modulo()
#    reads the record.
# 2. side/streams-two.json: chapter 6, two streams when the three stages are not equal:
#    `streams --streams 2` at `--work auto` and at 3 times and a third of the 479 steps `auto`
#    picks on an H200 (exercise 2's values); docs/gen/ch06.py's two_streams() reads it.
# 3. side/exercises.json and tests/exercises/ch02_vector_add.1.exercise: chapter 2's exercise 1
#    with two more runs, 4224 (= 32 blocks per SM x 132 SMs) one-thread blocks and 132 blocks
#    of 32 threads (the same 4224 threads), and claims on them: what limits one-thread blocks.
#    exercise.py reruns that exercise alone into a copy of the committed record.
# Copy side/* into docs/runs/h200/side/ (its README.md lists them) and the exercise file into
# tests/exercises/, then `scripts/docs.py update` and `scripts/docs.py check`.
# Never changes the GPU's clocks or settings. Exit 0 when every step ran, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp}/handouts"
side="$out/side"
work="$out/reduction-modulo"                            # what the record is made from
scratch=$(mktemp -d "${TMPDIR:-/tmp}/handout-measurements.XXXXXX")  # builds: not sent back
trap 'rm -rf "$scratch"' EXIT
build="$scratch/build"
mkdir -p "$side" "$work"
log="$out/measurements.log"
: > "$log"
say() { echo "handout_measurements: $*" | tee -a "$log" >&2; }
fail=0
step() {  # step NAME COMMAND...: run it, its output into the log, and say how it ended
    local name=$1; shift
    say "\$ $*"
    "$@" >> "$log" 2>&1
    local rc=$?
    say "$name: exit $rc"
    return $rc
}
step_to() {  # step_to FILE NAME COMMAND...: the same, its standard output into FILE
    local file=$1 name=$2; shift 2
    say "\$ $* > $file"
    "$@" > "$file" 2>> "$log"
    local rc=$?
    say "$name: exit $rc"
    return $rc
}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
say "GPU: ${gpu:-none}, commit $commit, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
command -v ncu >/dev/null || { say "ncu is not on PATH"; exit 1; }

# ---- the builds ---------------------------------------------------------------------------
rm -rf "$build"
step configure cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 || exit 1
# The variant (built meanwhile): a copy of the chapter's folder beside common/, the two tests
# rewritten, built with the program's own standalone line (its header comment) for sm_90.
mkdir -p "$scratch/tree"
cp -r common ch03_dot_product "$scratch/tree/"
src="$scratch/tree/ch03_dot_product/reduction.cu"
sed -E -i 's/if \(([A-Za-z_.]+) % \(2 \* stride\) == 0\)/if ((\1 \& (2 * stride - 1)) == 0)/' "$src"
changed=$(grep -c '& (2 \* stride - 1)) == 0)' "$src")
if [[ "$changed" != 2 ]]; then
    say "the variant's rewrite changed $changed tests, not the two interleaved ones: reduction.cu moved"
    exit 1
fi
diff -u ch03_dot_product/reduction.cu "$src" > "$work/variant.diff"
(cd "$scratch/tree/ch03_dot_product" && step build-variant nvcc -std=c++17 -O2 -arch=sm_90 \
    -o "$scratch/reduction-mask" reduction.cu) &
variant=$!
step build cmake --build "$build" --target reduction streams VA-GPU-NN || exit 1
wait $variant || exit 1

# ---- 1. divergence or the division --------------------------------------------------------
metrics=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,gpu__time_duration.sum
# The profiler's runs at 2^26 elements (a quarter of the default, to keep them short: each
# block does the same work, so the counts are a quarter of the default size's); the timed runs
# at the default 2^28, as in the handout.
ncu_n=$((1 << 26))
for b in control mask; do
    bin="$build/ch03_dot_product/reduction"
    [[ $b == mask ]] && bin="$scratch/reduction-mask"
    # Each kernel is launched 4 times with --repeats 1 (the profiler's first H200 run counted
    # them): 16 launches; the record keeps the first of each kernel. Its timing lesson
    # is not enforced under the profiler (CUDA_EXAMPLES_LESSONS=report).
    step_to "$work/ncu-$b.csv" "ncu $b" env CUDA_EXAMPLES_LESSONS=report ncu \
        --clock-control none --csv --print-units base --metrics "$metrics" \
        -k regex:reduce_ --launch-count 16 "$bin" --n "$ncu_n" --repeats 1 || fail=1
    # Without the division the interleaved trees come close to the sequential one, so the
    # variant's own lesson (sequential at least 1.5 times faster) is missed: report it, as a
    # figure, instead of failing the run.
    step_to "$work/run-$b.txt" "run $b" env CUDA_EXAMPLES_LESSONS=report "$bin" --json || fail=1
done
python3 - "$work" "$side/reduction-modulo.json" "$gpu" "$commit" "$ncu_n" <<'EOF' || fail=1
import csv, datetime, io, json, sys
work, dest, gpu, commit, ncu_n = sys.argv[1:6]
def ncu(build):
    text = open(f"{work}/ncu-{build}.csv").read()
    rows = list(csv.reader(io.StringIO(text[text.index('"ID"'):])))
    head, out = rows[0], {}
    col = {name: head.index(name) for name in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    for r in rows[1:]:
        if len(r) < len(head):
            continue
        kernel = r[col["Kernel Name"]].split("(")[0].strip()
        seen = out.setdefault(kernel, {"id": r[col["ID"]]})
        if seen["id"] != r[col["ID"]]:
            continue  # a later launch of the same kernel: the first one counts
        value = float(r[col["Metric Value"]].replace(",", ""))
        name = {"smsp__inst_executed.sum": "inst_executed",
                "smsp__thread_inst_executed.sum": "thread_inst_executed",
                "gpu__time_duration.sum": "duration_ns"}[r[col["Metric Name"]]]
        seen[name] = value
    for v in out.values():
        v.pop("id")
    return out
def times(build):
    recs = [json.loads(l) for l in open(f"{work}/run-{build}.txt") if l.startswith("{")]
    return {r["variant"]: r["time_ms"]["median"] for r in recs if r.get("time_ms")}
rec = {"what": "tools/handout_measurements.sh: reduction as it is (control) and with the "
               "interleaved trees' `x % (2 * stride) == 0` written `(x & (2 * stride - 1)) == 0` "
               "(mask); Nsight Compute on the first launch of each kernel at n = ncu_n "
               "(--clock-control none, --repeats 1), then each build's own kernel-only "
               "medians (--json, the default size)",
       "gpu": gpu, "commit": commit,
       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
       "ncu_n": int(ncu_n), "ncu": {b: ncu(b) for b in ("control", "mask")},
       "time_ms": {b: times(b) for b in ("control", "mask")}}
for b in ("control", "mask"):
    for k in ("reduce_interleaved_shared", "reduce_interleaved_global", "reduce_sequential"):
        assert "inst_executed" in rec["ncu"][b].get(k, {}), (b, k, rec["ncu"][b])
    assert {"interleaved-shared", "sequential"} <= set(rec["time_ms"][b]), rec["time_ms"][b]
json.dump(rec, open(dest, "w"), indent=1)
print(json.dumps(rec, indent=1))
EOF

# ---- 2. two streams, stages not equal -----------------------------------------------------
: > "$work/streams.txt"
for w in auto 1437 160; do
    echo "\$ streams --streams 2 --work $w --json" >> "$work/streams.txt"
    # A missed lesson (two streams do not overlap enough) exits 1; the figures still count.
    "$build/ch06_streams/streams" --streams 2 --work "$w" --json >> "$work/streams.txt" 2>&1
    echo "exit $?" >> "$work/streams.txt"
done
python3 - "$work/streams.txt" "$side/streams-two.json" "$gpu" "$commit" <<'EOF' || fail=1
import datetime, json, sys
src, dest, gpu, commit = sys.argv[1:5]
runs, cur = {}, None
for line in open(src):
    if line.startswith("$ "):
        cur = runs.setdefault(line.split("--work ")[1].split()[0], {})
    elif line.startswith("{") and cur is not None:
        r = json.loads(line)
        if r.get("time_ms"):
            cur[r["variant"]] = {"time_ms": r["time_ms"]["median"], "pct_peak": r.get("pct_peak")}
    elif line.startswith("exit ") and cur is not None:
        cur["exit"] = int(line.split()[1])
for w, r in runs.items():
    for v in ("stage-h2d", "stage-kernel", "stage-d2h", "depth-first"):
        assert v in r, (w, v, r)
rec = {"what": "tools/handout_measurements.sh: streams --streams 2 --work W --json for W = auto, "
               "1437 and 160 (3 times and a third of the 479 steps auto picks on an H200)",
       "gpu": gpu, "commit": commit,
       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "runs": runs}
json.dump(rec, open(dest, "w"), indent=1)
print(json.dumps(rec, indent=1))
EOF

# ---- 3. one-thread blocks: chapter 2's exercise 1, with two more runs ---------------------
# The exercise file as it should be committed with the record (tests/exercises/README.md): run
# by exercise.py from a copy of the tree that holds it, into a copy of the committed record
# (the other exercises stay as they are).
mkdir -p "$out/tests/exercises" "$scratch/repo"
tar --exclude='./build*' --exclude=./.venv --exclude=./docs/runs --exclude=./.git -cf - . |
    tar -xf - -C "$scratch/repo"
cat > "$out/tests/exercises/ch02_vector_add.1.exercise" <<'EXERCISE'
# Chapter 2, exercise 1: the same 16384 threads split four ways into blocks; then one-thread
# blocks at 4224 = 32 blocks per SM x 132 SMs (as many as an H200 holds at once) and 132 blocks of
# 32 threads (the same 4224 threads in whole warps), which show what limits one-thread blocks.
# Margins: a kernel's rate moved by under 1% over 10 runs on an H200 (side/lesson-runs-h200.txt);
# "as fast" allows 10%, "about as fast" 15% (issue 44's H200 figures: 258, 252 and 239 GB/s).
program: VA-GPU-NN
change: nothing changed, four splits of 16384 threads (2^26 elements: each run took under two seconds on an H200), then 4224 one-thread blocks and 132 blocks of 32
run: t1 control -- --n 2^26 --blocks 16384 --threads 1
run: t32 control -- --n 2^26 --blocks 512 --threads 32
run: t128 control -- --n 2^26 --blocks 128 --threads 128
run: t1024 control -- --n 2^26 --blocks 16 --threads 1024
run: b4224 control -- --n 2^26 --blocks 4224 --threads 1
run: w132 control -- --n 2^26 --blocks 132 --threads 32
says: with one thread per block (16384 × 1) the kernel reads and writes {:.0f} GB/s
claim: value(t1, "kernel", "gbps") < 0.5 * minimum(value(t32, "kernel", "gbps"), value(t128, "kernel", "gbps"), value(t1024, "kernel", "gbps"))
says: 512 × 32, 128 × 128 and 16 × 1024 reach {:.0f}, {:.0f} and {:.0f} GB/s
claim: [value(t32, "kernel", "gbps"), value(t128, "kernel", "gbps"), value(t1024, "kernel", "gbps")] > 0
says: the fastest of those three is {:.2f} times the slowest
claim: maximum(value(t32, "kernel", "gbps"), value(t128, "kernel", "gbps"), value(t1024, "kernel", "gbps")) / minimum(value(t32, "kernel", "gbps"), value(t128, "kernel", "gbps"), value(t1024, "kernel", "gbps")) < 1.5
says: 4224 one-thread blocks (32 per SM, all an H200 holds at once) reach {:.2f} times the rate of 16384: the other blocks only wait their turn
claim: 0.9 < value(b4224, "kernel", "gbps") / value(t1, "kernel", "gbps") < 1.1
says: and {:.2f} times that of 132 blocks of 32 threads, the same 4224 threads in flight: the resident blocks, not the idle lanes, are the limit
claim: 0.85 < value(b4224, "kernel", "gbps") / value(w132, "kernel", "gbps") < 1.15
EXERCISE
cp "$out/tests/exercises/ch02_vector_add.1.exercise" "$scratch/repo/tests/exercises/"
cp docs/runs/h200/side/exercises.json "$side/exercises.json"
step "exercise ch02_vector_add.1" python3 "$scratch/repo/tests/exercises/exercise.py" run \
    --out "$side/exercises.json" --work "$scratch/exercise-build" --commit "$commit" \
    ch02_vector_add.1 || fail=1
grep -E "ch02_vector_add.1 |holds|FALSE" "$log" | tail -8

say "done: $(ls "$side" | tr '\n' ' ')(fail=$fail)"
exit $fail

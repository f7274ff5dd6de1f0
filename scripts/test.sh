#!/usr/bin/env bash
# README command 2: build everything and run every test, then summarise: how many passed, failed
# and were skipped, and why each group was skipped. Without a GPU, the GPU tests are skipped and
# say why; the run still passes.
#   scripts/test.sh                 presets "default": build/, the tree the tour uses too
#   scripts/test.sh --preset ci     warnings as errors (build-ci/), as .ci/run runs it
#   scripts/test.sh --preset gpu    a GPU CI runner: no GPU is a failure (build-gpu/)
#   scripts/test.sh -R VA-GPU-NN    anything else goes to ctest: here, one program's tests
# The planted bugs (tests/mutants) are the tests of the tests: each plants a bug in a copy of a
# program and shows that its checks catch it. They are a tier of their own, for maintainers and
# GPU CI, not part of command 2:
#   scripts/test.sh --planted-bugs [--preset P]   builds them (cmake target `mutants`) in the same
#       build folder and runs them with their controls (test presets *planted-bugs); it fails when
#       a planted bug survives or a control fails. Without a GPU it only compiles them (the check
#       that every patch still applies and compiles) and their tests skip. The counters checks
#       (tests/counters: each rate's numerator against the GPU's own counters, under ncu) run in
#       this tier too, one at a time while the planted bugs build: they count, they do not time,
#       and the build (nvcc, on the CPU) leaves the GPU to them (junit-counters-planted-bugs.xml).
# Each run writes a JUnit report, <build folder>/junit.xml (junit-planted-bugs.xml: the file each
# test preset names in CMakePresets.json, vendor.cuda-examples.junit), and how long
# each step took, <build folder>/times.json (times-planted-bugs.json; tools/ci_record.py keeps it
# as the record README's times come from).
# With CUDA_EXAMPLES_REQUIRE_GPU=1 (the gpu presets set it), the only skips allowed are the tests
# that need more GPUs than the machine has; any other skip fails the run, named.
# CUDA_EXAMPLES_MUTANTS=off (or -DCUDA_EXAMPLES_MUTANTS=off) leaves the planted bugs out of the
# configure step too (then --planted-bugs has nothing to run).
#   scripts/test.sh --preset gpu --pass side     the same run in two commands, for a machine whose
#   scripts/test.sh --preset gpu --pass lesson   commands are limited in time: set up, build and
#       the side-by-side pass; then the second pass (the lessons) and the summary of both
#       (times.json: the sums). --planted-bugs works the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=default
pass=both
planted=0
while [ $# -gt 0 ]; do
  case $1 in
    --preset) preset=${2:?--preset needs a name}; shift 2 ;;
    --pass) pass=${2:?--pass needs side or lesson}; shift 2 ;;
    --planted-bugs) planted=1; shift ;;
    *) break ;;
  esac
done
case $pass in both | side | lesson) ;; *) echo "test.sh: --pass is side or lesson, not $pass" >&2; exit 2 ;; esac
if [ $planted = 1 ] && [ "${CUDA_EXAMPLES_MUTANTS:-}" = off ]; then
  echo "test.sh: --planted-bugs with CUDA_EXAMPLES_MUTANTS=off: there is nothing to run" >&2
  exit 2
fi
[ -x "$(command -v nvcc)" ] || export PATH=/usr/local/cuda/bin:$PATH
# The test preset: the configure and build presets' name, or its planted-bugs twin
# (CMakePresets.json: "planted-bugs", "ci-planted-bugs", "gpu-planted-bugs").
tests=$preset suffix=""
if [ $planted = 1 ]; then
  if [ "$preset" = default ]; then tests=planted-bugs; else tests=$preset-planted-bugs; fi
  suffix=-planted-bugs
fi
junit=$(python3 scripts/test_summary.py --preset "$tests" --where 2>/dev/null || true)
if [ -z "$junit" ] && [ $planted = 1 ] && ! python3 scripts/test_summary.py --preset "$tests" --where >/dev/null 2>&1; then
  echo "test.sh: no test preset $tests in CMakePresets.json for --planted-bugs --preset $preset" >&2
  exit 2
fi
build_dir=$(dirname "${junit:-build/junit.xml}")
counters_junit=$build_dir/junit-counters$suffix.xml counters_log=$build_dir/test-counters$suffix.log
# --pass side leaves for --pass lesson: its phases and exit status (test-side.env), and ctest's log.
side_env=$build_dir/test-side$suffix.env
if [ "$pass" = lesson ] && [ ! -f "$side_env" ]; then
  echo "test.sh: --pass lesson follows --pass side in the same build folder ($side_env is missing)" >&2
  exit 2
fi
# The caches that tests' libraries keep (matplotlib's configuration and font cache for the plots'
# tests, Mesa's shader cache for the window test) go to the build folder, not to ~/.config and
# ~/.cache (docs/install.md: what is left outside the clone).
export MPLCONFIGDIR=${MPLCONFIGDIR:-$(realpath -m "$build_dir/cache/matplotlib")}
export MESA_SHADER_CACHE_DIR=${MESA_SHADER_CACHE_DIR:-$(realpath -m "$build_dir/cache/mesa_shader_cache")}
now() { date +%s.%N; }
t0=$(now)
scripts/setup.sh test
t1=$(now)
jobs=$(nproc 2>/dev/null || echo 2)
# A new build folder uses Ninja where it is installed: it skips what a build step left
# unchanged (the planted bugs' patched copies). An existing folder keeps its generator.
if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then export CMAKE_GENERATOR=Ninja; fi
configure_args=()
[ -n "${CUDA_EXAMPLES_MUTANTS:-}" ] && configure_args+=("-DCUDA_EXAMPLES_MUTANTS=$CUDA_EXAMPLES_MUTANTS")
# Configure reports on the planted bugs only where their tier is asked for (tests/mutants).
[ $planted = 1 ] && export CUDA_EXAMPLES_PLANTED_BUGS=1
cmake --preset "$preset" "${configure_args[@]}"
t2=$(now)
cmake --build --preset "$preset" -j "$jobs"
if [ $planted = 1 ]; then
  # Not part of `all`: the patched copies, built like the real programs (without a GPU only
  # compiled, to PTX: tests/mutants/README.md). The build is the proof that every patch applies
  # and compiles. Their compiler warnings are expected: a planted bug often leaves a variable
  # unused or a value unread, and the patched copies never build with -Werror.
  # The counters checks need only the programs just built, and the GPU to themselves: the
  # build below compiles on the CPU and leaves the GPU idle, so they run now, one at a time,
  # beside it. A count does not depend on how busy the CPU is (a rate would). The planted bugs
  # caught by the counters (label mutant too) need their patched programs: they wait for the
  # second pass.
  counters_pid=""
  if [ "$pass" != lesson ]; then
    rm -f "$counters_junit" "$counters_log"
    ctest --preset "$tests" -j 1 -L counters -LE mutant --no-tests=ignore \
      --output-junit "$(realpath -m "$counters_junit")" "$@" >"$counters_log" 2>&1 &
    counters_pid=$!
    echo "test.sh: the counters checks run one at a time beside the build (their log: $counters_log)"
  fi
  echo "test.sh: building the planted bugs (target mutants); their warnings are expected (a planted bug often leaves something unused)"
  if ! cmake --build --preset "$preset" -j "$jobs" --target mutants; then
    [ -z "$counters_pid" ] || wait "$counters_pid" || true   # nothing of this run left behind
    exit 1
  fi
fi
t3=$(now)
status=0
if [ "$pass" = lesson ]; then
  # shellcheck source=/dev/null
  . "$side_env"   # side_phases=(...), side_status
  log=$build_dir/test-side$suffix.log
else
  [ -n "$junit" ] && rm -f "$junit"   # a report left from an earlier run must not be summarised
  rm -f "$side_env"
  side_phases=()
  if [ "$pass" = side ]; then log=$build_dir/test-side$suffix.log && : >"$log"; else log=$(mktemp); fi
fi
# ctest ends with a list of every skipped test, one line each (hundreds without a GPU); the
# summary below replaces it with the reasons. Everything else ctest prints is kept.
drop_did_not_run() {
  # A shell loop, line by line: mawk (Debian's awk) reads a pipe in blocks, so behind it a CI log
  # showed none of ctest's lines until ctest ended (minutes on a GPU runner, which looked like a hang).
  local line dropping=0
  while IFS= read -r line || [ -n "$line" ]; do
    if [ "$line" = "The following tests did not run:" ]; then dropping=1; continue; fi
    if [ $dropping = 1 ] && [ "${line:0:1}" = $'\t' ]; then continue; fi
    dropping=0
    printf '%s\n' "$line"
  done
}
set +e
counters_status=0
if [ -n "${counters_pid:-}" ]; then
  # Their results, once they are done: the side-by-side pass must not start while they count.
  wait "$counters_pid"
  counters_status=$?
  echo "The counters checks, one at a time beside the build of the planted bugs ($(awk "BEGIN { printf \"%.0f\", $(now) - $t3 }") s waited for them after it):"
  drop_did_not_run <"$counters_log"
  cat "$counters_log" >>"$log"
fi
# Two passes. A lesson (common/report.h) is a timing, so it means something only when the program
# has the GPU to itself: the first pass runs everything else side by side, where a program only
# reports its lessons (CUDA_EXAMPLES_LESSONS=report). The second runs the lesson tests (label
# lesson: the lesson runs, the planted bugs that break a lesson or print an impossible rate, and
# their controls, in --planted-bugs; and lab.neighbours, whose attacker takes the GPU's memory
# from whatever runs beside it) one at a time.
# The lab self-tests (label lab) run in the first pass, beside everything else: their graders'
# speed gates are built for a busy GPU (a lock keeps two gates apart; student and reference
# alternate, round after round, and the better of two honest estimates decides: labs/grader/score.py).
# The first pass leaves the lessons out by name: ctest ignores -LE where the test preset has an exclude
# label of its own (ours leave out "sanitize" and "mutant"; so CMake 3.25 and 4.4 both do), and
# "-LE sanitize|lesson" ran them in the first pass as well, at its end, one at a time.
if [ "$pass" != lesson ]; then
  second=$(python3 scripts/test_summary.py --preset "$tests" --second-pass-regex 2>/dev/null || true)
  # The JUnit file is named here, not in the preset: ctest writes a preset's file on every
  # run, `ctest -N` too (test_summary.py, preset_junit).
  junit_args=()
  [ -n "$junit" ] && junit_args=(--output-junit "$junit")
  CUDA_EXAMPLES_LESSONS=report ctest --preset "$tests" -j "$jobs" ${second:+-E "$second"} "${junit_args[@]}" "$@" 2>&1 |
    tee -a "$log" | drop_did_not_run
  status=${PIPESTATUS[0]}
  [ "$counters_status" = 0 ] || status=1
fi
if [ "$pass" = side ]; then
  t4=$(now)
  set -e
  { echo "side_phases=(--phase setup=$t0:$t1 --phase configure=$t1:$t2 --phase build=$t2:$t3 --phase tests=$t3:$t4)"
    echo "side_status=$status"; } >"$side_env"
  echo "test.sh: the side-by-side pass is done (exit $status); scripts/test.sh --preset $preset${suffix:+ --planted-bugs} --pass lesson runs the rest"
  exit $status
fi
[ "$pass" = lesson ] && [ "$side_status" != 0 ] && status=1
lesson_junit=$(realpath -m "$build_dir/junit-lesson$suffix.xml")
rm -f "$lesson_junit"
echo "The lesson tests, one at a time (each a timing that needs the GPU to itself):"
# --planted-bugs: the counters and clock checks ran beside the build (the planted bugs they catch run here).
counted=()
[ $planted = 1 ] && counted=(-E '\.counters(\.[^.]+)?$|\.clock\.[^.]+$')
ctest --preset "$tests" -j 1 -L lesson "${counted[@]}" --no-tests=ignore --output-junit "$lesson_junit" "$@" 2>&1 |
  tee -a "$log" | drop_did_not_run
[ "${PIPESTATUS[0]}" = 0 ] || status=1
set -e
t4=$(now)
if [ -n "$junit" ]; then
  # The gpu presets set CUDA_EXAMPLES_REQUIRE_GPU=1 for ctest; the summary reads the preset's
  # environment too, and then fails the run on any skip but "needs N GPUs". With --pass lesson,
  # each phase is the sum of both commands' (test_summary.py adds a phase named twice).
  also=(--also "$lesson_junit")
  [ $planted = 1 ] && also+=(--also "$(realpath -m "$counters_junit")")
  python3 scripts/test_summary.py --preset "$tests" "${also[@]}" --expand --ctest-log "$log" \
    --times "$build_dir/times$suffix.json" "${side_phases[@]}" --phase "setup=$t0:$t1" \
    --phase "configure=$t1:$t2" --phase "build=$t2:$t3" --phase "tests=$t3:$t4" ||
    { rc=$?; if [ $rc = 1 ]; then status=1; fi; }
else
  echo "(no python3 to summarise the skip reasons: see Testing/Temporary/LastTest.log)"
fi
rm -f "$log" "$side_env"
exit $status

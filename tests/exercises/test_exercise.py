#!/usr/bin/env python3
"""exercise.py's check fails when it should (no GPU needed):

    python3 tests/exercises/test_exercise.py

1. as committed, every exercise's claims hold on the record (docs/runs/h200/exercises.json);
2. a doctored record fails: a run's verdict line or exit code changed, a sanitizer's error
   count changed, a printed figure moved out of its claimed range, a run removed;
3. an exercise file whose runs or patch changed after the record was made fails (stale: run it
   again on a GPU), and so does a patch that no longer applies to the program; the program's
   code counts, its comments do not;
4. a claim changed to one the record contradicts fails, and a claim's sentence is printed with
   the record's value, never a typed one;
5. malformed files are refused with the line at fault (exit 2).
Each case works on copies in a temporary folder; the tree is never changed. The docs check's own
test (tests/docs/test_docs_check.py) shows the same through scripts/docs.py, and that a
hand-edited answer in docs/instructors.md fails it.
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import exercise  # noqa: E402

failures = []


def check(*args):
    run = subprocess.run([sys.executable, str(HERE / "exercise.py"), "check"] + [str(a) for a in args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return run.returncode, run.stdout


def expect(result, wanted, what, says=None):
    code, out = result
    if code != wanted or (says and not re.search(says, out)):
        failures.append(f"{what}: exit {code}, expected {wanted}"
                        + (f" and /{says}/" if says else "") + f"\n{out[-1500:]}")
    else:
        print(f"ok: {what} (exit {code})")


def first_line(rec, run, prefix):
    lines = rec["runs"][run]["tries"][0]["lines"]
    return next(i for i, l in enumerate(lines) if l.startswith(prefix))


def main():
    record = json.loads(exercise.RECORD.read_text())
    expect(check(), 0, "the committed record: every claim holds")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        def doctored(what, change, says="false on the record"):
            r = copy.deepcopy(record)
            change(r["exercises"])
            path = tmp / "record.json"
            path.write_text(json.dumps(r))
            expect(check("--record", path), 1, f"doctored record: {what}", says)

        # 2. Doctored records.
        def pass_the_wide_grid(ex):
            rec = ex["ch02_vector_add.3"]
            i = first_line(rec, "wide", "Verdict:")
            rec["runs"]["wide"]["tries"][0]["lines"][i] = "Verdict: PASS (all elements match the CPU)"
            rec["runs"]["wide"]["tries"][0]["exit"] = 0
        doctored("ch02 ex3's 64 x 256 run made to PASS", pass_the_wide_grid)

        def exit_only(ex):
            ex["ch02_vector_add.3"]["runs"]["wide"]["tries"][0]["exit"] = 0
        doctored("ch02 ex3's failing run given exit 0", exit_only)

        def sanitizer_error(ex):
            rec = ex["ch02_vector_add.5"]
            i = first_line(rec, "broken", "========= ERROR SUMMARY")
            rec["runs"]["broken"]["tries"][0]["lines"][i] = "========= ERROR SUMMARY: 3 errors"
        doctored("memcheck made to report errors in ch02 ex5", sanitizer_error)

        def racecheck_clean(ex):
            rec = ex["ch04_matmul.4"]
            i = first_line(rec, "racecheck", "========= RACECHECK SUMMARY")
            rec["runs"]["racecheck"]["tries"][0]["lines"][i] = \
                "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
        doctored("racecheck made clean in ch04 ex4", racecheck_clean)

        def same_answers(ex):
            tries = ex["ch03_dot_product.4"]["runs"]["document"]["tries"]
            for t in tries[1:]:
                t["lines"] = list(tries[0]["lines"])
        doctored("ch03 ex4's atomic answers made all equal", same_answers)

        def restrict_slow(ex):
            rec = ex["ch04_matmul.2"]["runs"]["restricted"]["tries"][0]
            for j in rec["json"]:
                j["time_ms"]["median"] *= 10
        doctored("ch04 ex2's __restrict__ time made 10x slower (out of its range)", restrict_slow)

        def run_removed(ex):
            del ex["ch02_vector_add.3"]["runs"]["wide"]
        doctored("a run missing from the record", run_removed, "not in the record")

        def exercise_removed(ex):
            del ex["ch02_vector_add.3"]
        doctored("an exercise missing from the record", exercise_removed, "not in the record")

        # 3. Stale: the exercise changed after its run; a patch that no longer applies.
        def changed_copy(name, old, new):
            text = (HERE / f"{name}.exercise").read_text()
            assert old in text, (name, old)
            path = tmp / f"{name}.exercise"
            path.write_text(text.replace(old, new, 1))
            return path
        p = changed_copy("ch02_vector_add.3", "--blocks 64 --threads 256", "--blocks 32 --threads 512")
        expect(check(p), 1, "a run's arguments changed since the record", "another version")
        p = changed_copy("ch02_vector_add.3", "gridDim.x + threadIdx.x;", "gridDim.x + threadIdx.x + 1;")
        expect(check(p), 1, "the patch changed since the record", "another version")
        p = changed_copy("ch02_vector_add.3", "    long long i = (long long)blockIdx.x * blockDim.x",
                         "    long long j = (long long)blockIdx.x * blockDim.x")
        expect(check(p), 1, "a patch that no longer applies to the program", "is not in")

        # 3b. What makes a record stale is the program's code, not its comments.
        src = (exercise.REPO / "ch02_vector_add" / "VA-GPU-NN.cu").read_text()
        commented = src.replace("\n", "\n// a comment added by a maintainer\n", 1)
        recoded = src.replace("blockIdx.x * blockDim.x", "blockDim.x * blockIdx.x", 1)
        if exercise.code_of(commented) != exercise.code_of(src) or \
                exercise.code_of(recoded) == exercise.code_of(src):
            failures.append("code_of: a comment changed the code, or a code change did not")
        else:
            print("ok: a comment added leaves the code as it was; a changed line does not")

        # 4. A claim the record contradicts; the sentence carries the record's value.
        p = changed_copy("ch02_vector_add.5", 'claim: errors(broken) == 0', 'claim: errors(broken) > 0')
        expect(check(p), 1, "a claim changed to what did not happen", "false on the record")
        e = exercise.parse(HERE / "ch04_matmul.4.exercise")
        rec = record["exercises"]["ch04_matmul.4"]
        said = exercise.evaluate(e, rec)[0][0]
        want = str(exercise.errors(rec["runs"]["racecheck"]))
        if want not in said:
            failures.append(f"the sentence {said!r} does not carry the record's count {want}")
        else:
            print(f"ok: the sentence carries the record's value ({said})")

        # 5. Malformed files.
        for text, what in [("program: VA-GPU-NN\nchange: x\nrun: a nosuchbuild --\nsays: s\nclaim: exit(a) == 0\n",
                            "a run naming no build"),
                           ("program: VA-GPU-NN\nchange: x\nrun: a control --\nsays: s\nclaim: __import__('os')\n",
                            "a claim calling what is not a claim function"),
                           ("program: VA-GPU-NN\nchange: x\nrun: a control --\nclaim: exit(a) == 0\n",
                            "a claim without its sentence"),
                           ("program: VA-GPU-NN\nchange: x\nrun: a control --\nsays: s\nclaim: exit(a) == 0\n@@ find\nx\n",
                            "a patch without '@@ end'")]:
            path = tmp / "ch02_vector_add.99.exercise"
            path.write_text(text)
            expect(check(path), 2, f"malformed: {what}")
    if failures:
        print("\n\n".join(failures))
        print(f"test_exercise: {len(failures)} failed")
        return 1
    print("test_exercise: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The docs check fails when it should (no GPU needed):

    python3 tests/docs/test_docs_check.py BUILD_DIR

1. as committed, `scripts/docs.py check` passes;
2. a results file changed without the docs (one kernel time of results.json, or one end-to-end
   time of a repeat kept beside it in repeats/) fails it;
3. a program whose --help text changed without the docs fails it;
   and an exercise's record (side/exercises.json) that contradicts its claim fails it, as does
   an exercise's generated answer in docs/instructors.md edited by hand, and so does chapter
   3's kept racecheck log once stencil_1d.cu has changed since it ran;
4. a number typed by hand into a handout's prose fails the prose check every time: made up
   (41.27×, and 800 seeded random two-decimal numbers), equal to a measured one, or a ratio of
   two measured ones; an allow-listed constant passes only in the sentence its entry names.
Each case works on copies (a results folder, a build folder of wrappers, a handout) in a
temporary folder; the tree is never changed.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from venv_python import ROOT, ensure  # noqa: E402

ensure(["cogapp"], "the docs check")
DOCS = os.path.join(ROOT, "scripts", "docs.py")
RESULTS = os.path.join(ROOT, "docs", "runs", "h200")
failures = []



def scale_first(path, field, factor):
    """Multiplies `field` of the first summary row of a results.json that has it."""
    with open(path) as f:
        data = json.load(f)
    row = next(r for r in data["summary"] if r.get(field))
    row[field] *= factor
    with open(path, "w") as f:
        json.dump(data, f)

def docs(*args):
    run = subprocess.run([sys.executable, DOCS] + list(args), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    return run.returncode, run.stdout


def expect(code, output, wanted, what):
    if code != wanted:
        failures.append(f"{what}: exit {code}, expected {wanted}\n{output[-2000:]}")
    else:
        print(f"ok: {what} (exit {code})")


def main():
    build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    code, out = docs("check", "--build", build)
    expect(code, out, 0, "the committed docs pass the check")
    with tempfile.TemporaryDirectory() as tmp:
        # 2. results.json changed, docs not.
        results = os.path.join(tmp, "results")
        shutil.copytree(RESULTS, results)
        scale_first(os.path.join(results, "results.json"), "kernel_ms", 1.5)
        code, out = docs("check", "--build", build, "--results", results)
        expect(code, out, 1, "a changed results.json fails the check")

        # 2b. a repeat's host-timed figure changed, docs not: the medians and ranges read them.
        repeats = os.path.join(RESULTS, "repeats")
        kept = sorted(os.listdir(repeats)) if os.path.isdir(repeats) else []
        if kept:
            shutil.rmtree(results)
            shutil.copytree(RESULTS, results)
            scale_first(os.path.join(results, "repeats", kept[0], "results.json"), "end_to_end_ms", 3)
            code, out = docs("check", "--build", build, "--results", results)
            expect(code, out, 1, "a changed repeat's end-to-end time fails the check")

        # 3. a --help text changed: a build folder of wrappers, one of which adds a line.
        fake = os.path.join(tmp, "build")
        with open(os.path.join(ROOT, "programs.json")) as f:
            manifest = json.load(f)
        folders = {c["chapter"]: c["folder"] for c in manifest["chapters"]}
        for i, p in enumerate(manifest["programs"]):
            real = os.path.join(build, folders[p["chapter"]], p["name"])
            wrapper = os.path.join(fake, folders[p["chapter"]], p["name"])
            os.makedirs(os.path.dirname(wrapper), exist_ok=True)
            extra = 'echo "  --new-option   a line the docs do not have"' if i == 0 else ""
            with open(wrapper, "w") as f:
                f.write(f'#!/bin/sh\n"{real}" "$@"\n{extra}\n')
            os.chmod(wrapper, 0o755)
        code, out = docs("check", "--build", fake)
        expect(code, out, 1, "a changed --help text fails the check")
        code_ok, out_ok = docs("numbers")
        expect(code_ok, out_ok, 0, "the prose check passes as committed")

        # 5. an exercise's observation that the record no longer shows: the answer key's
        #    generated answer raises, and the check fails (tests/exercises/README.md).
        shutil.rmtree(results)
        shutil.copytree(RESULTS, results)
        record = os.path.join(results, "side", "exercises.json")
        with open(record) as f:
            data = json.load(f)
        wide = data["exercises"]["ch02_vector_add.3"]["runs"]["wide"]["tries"][0]
        wide["lines"] = [("Verdict: PASS (all 268435456 elements match the CPU)"
                          if l.startswith("Verdict:") else l) for l in wide["lines"]]
        wide["exit"] = 0
        with open(record, "w") as f:
            json.dump(data, f)
        code, out = docs("check", "--build", build, "--results", results)
        expect(code, out, 1, "an exercise record that contradicts its claim fails the check")
        if "ch02_vector_add.3" not in out:
            failures.append(f"the failed check does not name the exercise:\n{out[-1500:]}")

        # 5b. chapter 3's kept racecheck run made on another stencil_1d.cu (its line numbers
        #     may have moved): the blocks that show it stop the check.
        shutil.rmtree(results)
        shutil.copytree(RESULTS, results)
        log = os.path.join(results, "side", "racecheck-stencil_1d.log")
        with open(log) as f:
            text = f.read()
        with open(log, "w") as f:
            f.write(re.sub(r"sha256 [0-9a-f]{64}", "sha256 " + "0" * 64, text, count=1))
        code, out = docs("check", "--build", build, "--results", results)
        expect(code, out, 1, "a racecheck log of another stencil_1d.cu fails the check")
        if "racecheck-stencil_1d.log ran another version" not in out:
            failures.append(f"the failed check does not say why:\n{out[-1500:]}")

    # 6. an exercise's generated answer edited by hand fails the check: the blocks of a copy
    #     of docs/instructors.md, one line of one answer changed, checked as scripts/docs.py
    #     checks the real one.
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import docs as d
    key = os.path.join(ROOT, "docs", "instructors.md")
    with open(key) as f:
        text = f.read()
    at = text.index('g.exercise("ch04_matmul.4")')
    line = text.index("Measured: racecheck reports", at)
    edited = text[:line] + text[line:].replace("Measured: racecheck reports",
                                               "Measured: racecheck reports no errors; it reports", 1)
    with tempfile.TemporaryDirectory() as tmp:
        for name, body, wanted in (("as committed", text, 0), ("edited by hand", edited, 1)):
            copy = os.path.join(tmp, "instructors.md")
            with open(copy, "w") as f:
                f.write(body)
            files = d.files
            d.files = lambda: [copy]
            try:
                code = d.run_cog(["--check"], argparse.Namespace(results=RESULTS, build=build))
            finally:
                d.files = files
            expect(1 if code else 0, "", wanted, f"the answer key's exercise answers, {name}")

    # 4. the prose check is exact: a number with a unit typed into a handout's prose fails it,
    #    whatever its value: made up, equal to a measured one, or a ratio of two measured ones.
    handout = os.path.join(ROOT, "docs", "ch04_matmul.md")
    with open(os.path.join(RESULTS, "results.json")) as f:
        data = json.load(f)
    times = [r["kernel_ms"] for r in data["summary"] if r.get("kernel_ms")]
    planted = ["41.27×", "123.457 ms", "98765 GB/s", f"{times[0]:.4g} ms",
               f"{times[0] / times[1]:.2f}×", f"{100 * times[1] / times[0]:.1f}%"]
    # and 200 made-up two-decimal numbers of each kind (seeded: the same every run)
    rng = random.Random(25)
    planted += [f"{rng.uniform(1, 100):.2f}{u}" for u in ("×", " ms", " GB/s", "%")
                for _ in range(200)]
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "ch04_matmul.md")
        refused = 0
        for number in planted:
            with open(handout) as f:
                text = f.read()
            with open(copy, "w") as f:
                f.write(text + f"\nA sentence typed by hand: it runs {number} here.\n")
            missing = d.unsourced([copy])
            if any(f"'{number}'" in m for m in missing):
                refused += 1
            else:
                failures.append(f"a hand-typed {number} is accepted by the prose check")
        print(f"ok: {refused} of {len(planted)} hand-typed numbers refused" if
              refused == len(planted) else f"only {refused} of {len(planted)} refused")
        # the copy without a planted number passes, and an allow-listed constant passes only in
        # the sentence its entry names
        entries = d.load_allowlist()
        bound = next(e for e in entries if e.get("in"))
        for line, wanted in ((f"Here {bound['in']}, {bound['text']}.", 0), (f"Elsewhere, {bound['text']}.", 1)):
            with open(copy, "w") as f:
                f.write(line + "\n")
            got = len(d.unsourced([copy]))
            if got != wanted:
                failures.append(f"'{line}': {got} unsourced, expected {wanted}")
            else:
                print(f"ok: '{line}': {got} unsourced")
    lines = ["Some prose with 123.457 ms in it.", "Code is skipped: `999.123 ms`."]
    found = [m.group(0) for line in lines for m in d.MEASURE.finditer(line.replace(
        "`999.123 ms`", ""))]
    if found != ["123.457 ms"]:
        failures.append(f"the prose pattern found {found}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

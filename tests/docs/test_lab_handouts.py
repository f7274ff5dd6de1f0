#!/usr/bin/env python3
"""The labs' handouts (labs/ch0N.md, in every student kit) say what the grader does: their
"How it is graded" blocks are generated from labs/labs.json and the grading drivers
(docs/gen/labs.py), and the docs check (scripts/docs.py check, the same cog run) fails when they
drift. As committed they are current; a copy of labs/ with a changed speed gate, a changed
sanitizer added, or a driver case renamed, makes them stale; a block edited by hand is stale.
Works on copies in a temporary folder; the tree is never changed. No GPU needed.
Run: python3 tests/docs/test_lab_handouts.py (ctest: docs.lab_handouts, label cpu)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from venv_python import ROOT, ensure  # noqa: E402

ensure(["cogapp"], "the docs check of the labs' handouts")
HANDOUTS = [os.path.join(ROOT, "labs", f"ch0{n}.md") for n in range(2, 7)]
failures = []


def cog_check(files, labs=None):
    """scripts/docs.py check's cog run, on these files: 0 current, else stale."""
    env = dict(os.environ, **({"DOCS_LABS": labs} if labs else {}))
    r = subprocess.run([sys.executable, "-m", "cogapp", "-I", os.path.join(ROOT, "docs"), "-p",
                        "import gen.g as g", "--check", "--verbosity=0"] + files, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def expect(name, stale, files, labs=None):
    rc, out = cog_check(files, labs)
    if (rc != 0) != stale:
        failures.append(f"{name}: cog --check exit {rc}, expected {'stale' if stale else 'current'}\n{out}")
    print(f"{'ok  ' if (rc != 0) == stale else 'FAIL'} {name}: {'stale' if rc else 'current'}")


def main():
    expect("as committed", False, HANDOUTS)
    with tempfile.TemporaryDirectory() as d:
        def planted(name, change):
            labs = os.path.join(d, name)
            shutil.copytree(os.path.join(ROOT, "labs"), labs, ignore=shutil.ignore_patterns("grader"))
            change(labs)
            return labs

        def gate(labs):
            path = os.path.join(labs, "labs.json")
            data = json.load(open(path))
            task = next(t for l in data["labs"] for t in l["tasks"] if t["id"] == "ch04.3")
            task["perf"]["shapes"]["W"] = [1024, 1024]
            json.dump(data, open(path, "w"))

        def sanitize_range(labs):
            path = os.path.join(labs, "labs.json")
            data = json.load(open(path))
            task = next(t for l in data["labs"] for t in l["tasks"] if t["id"] == "ch02.1")
            task["sanitize"]["tools"].append("racecheck")
            json.dump(data, open(path, "w"))

        def driver_case(labs):
            path = os.path.join(labs, "drivers", "Dot-SM.cu")
            text = open(path).read()
            assert text.count('"n255-blocks1"') == 1
            open(path, "w").write(text.replace('"n255-blocks1", 255', '"n256-blocks1", 256'))
        expect("ch04.3's speed gate at a fixed Width in labs.json", True, HANDOUTS, planted("gate", gate))
        expect("ch02.1's sanitizers in labs.json (racecheck added)", True, HANDOUTS, planted("san", sanitize_range))
        expect("a case of ch03.1's driver renamed", True, HANDOUTS, planted("case", driver_case))
        edited = os.path.join(d, "ch03.md")
        text = open(HANDOUTS[1]).read()
        open(edited, "w").write(text.replace("(2 points): `compute-sanitizer", "(3 points): `compute-sanitizer", 1))
        expect("a generated line of ch03.md edited by hand", True, [edited])
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

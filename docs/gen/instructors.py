"""docs/grader.md's blocks: the labs' self-test tables (side/lab-selftest.log)."""
import functools
import re

import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403


# ---- the labs' self-test (docs/grader.md) ----------------------------------------------
@functools.lru_cache(maxsize=None)
def lab_selftest(name="side/lab-selftest.log"):
    """`ctest -L lab -V` output kept in the results run: {lab: (table lines, verdict, seconds)},
    from the '### Lab chNN' table that `lab.py selftest` prints for each lab (ctest's 'N: '
    prefix of each line taken off), its 'lab.py selftest: PASS|FAIL' and ctest's time."""
    path = side_file(name)
    labs = {}
    if path is None:
        return labs
    lines = open(path, errors="replace").read().splitlines()
    prefix = {}
    for line in lines:
        m = re.match(r"(\d+): ### Lab (\S+)", line)
        if m:
            prefix[m.group(1)] = m.group(2)
            labs[m.group(2)] = {"table": [], "verdict": None, "seconds": None}
    for line in lines:
        m = re.match(r"(\d+): (.*)$", line)
        if m and m.group(1) in prefix:
            lab = labs[prefix[m.group(1)]]
            if m.group(2).startswith("|"):
                lab["table"].append(m.group(2))
            v = re.match(r"lab\.py selftest: (\w+)", m.group(2))
            if v:
                lab["verdict"] = v.group(1)
        m = re.search(r"Test #(\d+): lab\.selftest\.(\S+) \.+\s+(\w+)\s+([\d.]+) sec", line)
        if m and m.group(2) in labs:
            labs[m.group(2)]["seconds"] = float(m.group(4))
            labs[m.group(2)]["ctest"] = m.group(3)
    return labs


def lab_tables(name="side/lab-selftest.log"):
    """One score table per lab, as `lab.py selftest` printed it in the kept ctest run."""
    labs = lab_selftest(name)
    if not labs:
        cog.outl(f"({name}: {NOT_RUN}; `ctest -L lab -V` makes it on a GPU.)")
        return
    for lab in sorted(labs):
        t = labs[lab]
        cog.outl(f"**Lab {lab}** (`lab.selftest.{lab}`: {t.get('ctest') or NOT_RUN}"
                 + (f", {t['seconds']:.0f} s" if t.get("seconds") else "") + ")")
        cog.outl("")
        for row in t["table"]:
            cog.outl(row)
        cog.outl("")


# ---- exercises that run (tests/exercises/, their record exercises.json) --------------------
def exercise(name, indent="   "):
    """The measured part of an exercise's answer: what ran on the GPU (the record
    exercises.json in the results folder, written by tests/exercises/exercise.py run) and each
    claim of tests/exercises/<name>.exercise as it came out. A claim that is false on the
    record, a record older than the exercise file, or a patch that no longer applies raises:
    the docs check fails (tests/exercises/README.md)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "exercises"))
    import exercise as ex  # the exercises' own reader and checker
    try:
        lines = ex.answer_lines(name, os.path.join(results_dir(), "side", "exercises.json"))
    except ex.mutant.MutantError as err:
        raise SystemExit(f"docs: exercise {name}: {err}")
    for line in lines:
        cog.outl(indent + line)

#!/usr/bin/env python3
"""Neighbours (issue 42, item 4): an attacker graded beside two honest copies must not cost
them a point. Grades three ch02 folders at once, as grade-class does (--jobs 3): two copies of
the solution and the solution with tests/labs/cheats/truth_cheats.py's takes-nearly-all-gpu-memory
(past the lint, as lab.py selftest grades it), whose program holds nearly all the GPU's memory
while it runs. Exit 0 when both honest copies score full marks and the attacker scores 0 on the
task it carries (ch02.2); 1 otherwise; 77 without a GPU. It prints each folder's score and how
many runs could not get the GPU and ran again alone.

    python3 tests/labs/neighbours.py [--arch 90] [--nvcc PATH] [--work DIR] [--rounds N]
"""
import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
import cheats  # noqa: E402,F401  (loads every cheat list)
import truth_cheats  # noqa: E402
from grader.cli import build_parser, grade_folders  # noqa: E402
from grader.kit import cmd_make  # noqa: E402
from grader.labs import find_lab  # noqa: E402


def main():
    ours = argparse.ArgumentParser()
    ours.add_argument("--arch", default="native")
    ours.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ours.add_argument("--work", default=str(REPO / "build-lab"))
    ours.add_argument("--rounds", type=int, default=1, help="gradings in a row (each must pass)")
    mine = ours.parse_args()
    lab = find_lab("ch02")[0]
    hog = next(c for c in truth_cheats.CHEATS if c["name"] == "takes-nearly-all-gpu-memory")
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        folders = [Path(d) / n for n in ("honest-1", "attacker", "honest-2")]
        for f in folders:
            cmd_make("ch02", f, solution=True)
        hog["make"](folders[1], lab)
        args = build_parser("").parse_args(["grade-class", d, "--lab", "ch02", "--jobs", "3",
                                            "--arch", mine.arch, "--nvcc", mine.nvcc, "--work", mine.work])
        for r in range(mine.rounds):
            started = time.time()
            graded, why = grade_folders(lab, folders, args, unlinted={folders[1]})
            if why:
                print(f"neighbours: cannot grade here: {why}")
                return 77
            for folder, results, meta in graded:
                scores = {t["id"]: (sum(x[1] for x in rows), sum(x[2] for x in rows)) for t, rows in results}
                text = ", ".join(f"{k} {a}/{b}" for k, (a, b) in scores.items())
                ok = (all(a == b for a, b in scores.values()) if folder.name != "attacker"
                      else scores["ch02.2"][0] == 0)
                failed += not ok
                lost = [f"{c}: {x[:160]}" for t, rows in results for c, p, m, x in rows if p < m]
                print(f"round {r + 1} {folder.name}: {text} {'ok' if ok else 'WRONG'}"
                      + ("" if ok or not lost else " -- " + " | ".join(lost)))
            print(f"round {r + 1}: {time.time() - started:.0f} s, runs that could not get the GPU and "
                  f"ran again alone: {graded[0][2].get('runs_retried_alone')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

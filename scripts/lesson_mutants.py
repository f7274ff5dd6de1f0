#!/usr/bin/env python3
"""The planted bugs of the lessons and the ceilings, on a GPU: compiled in parallel, run one at a time.

    python3 scripts/lesson_mutants.py --build build-gpu [--control] [MUTANT ...]

`ctest -L mutant` compiles and runs each planted bug in turn; with -j it runs them at once,
and the lesson checks time kernels: two timed programs sharing a GPU can miss a lesson that a
correct program shows, and a bug would be "caught" by the crowd. So this script builds the
mutants of expect `lesson` or `verdict` (default: every .mutant whose expect is `lesson`, and
the `verdict` ones whose name says a count or a rounding went wrong) with tests/mutants/mutant.py's
own functions, in parallel, then runs them one after the other, as mutant.py's `caught` does.
With --control each run is repeated on the unpatched program of the build folder, which must
exit 0: a catch counts only beside a control that passes. Prints one Markdown table row per
planted bug. Exit code: 0 when every one is caught (and every control passes), 1 otherwise.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "mutants"))
import mutant  # noqa: E402  (the planted bugs' own reader, patcher and checks)

OURS = re.compile(r"bytes_counted|flops_counted|_truncated")


def default_mutants():
    chosen = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "mutants", "*", "*.mutant"))):
        m = mutant.parse(path)
        if "lesson" in m["expect"] or (m["expect"] == ["verdict"] and OURS.search(path)):
            chosen.append(path)
    return chosen


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mutants", nargs="*")
    p.add_argument("--build", default="build-gpu", help="build folder: mutants under DIR/mutants, "
                   "the unpatched programs in DIR/chNN_*/")
    p.add_argument("--arch", default="90")
    p.add_argument("--control", action="store_true", help="also run the unpatched program")
    p.add_argument("--jobs", type=int, default=12)
    p.add_argument("--timeout", type=int, default=300)
    args = p.parse_args()
    args.nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    args.sanitizer = None
    paths = args.mutants or default_mutants()

    def build(path):
        m = mutant.parse(path)
        root, tree = mutant.make_tree(args.build, m)
        ok, program = mutant.compile_program(args, m, tree, root)
        return m, ok, program

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        built = list(pool.map(build, paths))
    print("| planted bug | expect | caught | control (the unpatched program, the same runs) |")
    print("|---|---|---|---|", flush=True)
    failed = 0
    for m, ok, program in built:
        cells, caught_all = [], ok
        for check in m["expect"]:
            if check in ("verdict", "lesson") and ok:
                caught, _ = mutant.check_verdict(args, m, program, lesson=check == "lesson")
                caught_all = caught_all and bool(caught)
                cells.append(f"{check}: {'caught' if caught else 'SURVIVED'}")
        control = ""
        if args.control:
            outcomes = []
            binary = os.path.join(args.build, m["chapter"], m["program"])
            for line in ([] if m["no_default_run"] else [""]) + m["runs"]:
                r = subprocess.run([binary] + shlex.split(line), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace",
                                   timeout=args.timeout)
                lesson = re.findall(r"^Lesson: (.*)$", r.stdout, re.M)
                outcomes.append(f"exit {r.returncode}" + (f", {lesson[-1][:40]}" if lesson else ""))
                caught_all = caught_all and r.returncode == 0
            control = "; ".join(outcomes)
        failed += not caught_all
        print(f"| {m['name']} | {' '.join(m['expect'])} | "
              f"{'; '.join(cells) if ok else 'BUILD FAILED'} | {control} |", flush=True)
    print(f"\n{len(built) - failed} of {len(built)} caught" + (" beside passing controls" if args.control else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

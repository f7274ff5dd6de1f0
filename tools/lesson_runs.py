#!/usr/bin/env python3
"""Runs every program that teaches an effect N times and prints the spread of each lesson ratio.

    python3 tools/lesson_runs.py --build build-gpu [--runs 10] [--only NAME ...] [--out FILE]

Each program checks its own lesson in the run (common/report.h: the `Lesson:` line and the
JSON records' "lesson" field, one entry per ratio with its threshold). This script runs each
one --runs times, and prints for every ratio its median, min and max and the threshold, and
for every program how many runs said `Lesson: shown`, `not shown on this GPU` or `MISSED`,
and how many exited non-zero. It is how the thresholds beside the checks were set (the H200
runs) and how they are checked on another GPU (the H100: the lead's command in the report).

Ratios between separate runs (`--pairs`) are what the thresholds were first measured from,
before a program compared its variants in one run: the same figures, across invocations.
Exit code: 0 when every run exited 0, 1 otherwise.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from tour import parse_records  # noqa: E402  (the tour's reader of a program's JSON records)

# (label, program, arguments): the lesson runs, at the sizes the tour uses by default.
RUNS = [
    ("VA-GPU-NN", "ch02_vector_add/VA-GPU-NN", []),
    ("VA-GPU-NN auto", "ch02_vector_add/VA-GPU-NN", ["--blocks", "auto"]),
    ("Dot-SM", "ch03_dot_product/Dot-SM", []),
    ("Dot-SM-Warp", "ch03_dot_product/Dot-SM-Warp", []),
    ("reduction", "ch03_dot_product/reduction", []),
    ("MM-GPU-SM", "ch04_matmul/MM-GPU-SM", []),
    ("MM-GPU-RT", "ch04_matmul/MM-GPU-RT", []),
    ("MM-GPU-TC tf32", "ch04_matmul/MM-GPU-TC", ["--precision", "tf32", "--width", "4096", "--data", "uniform"]),
    ("MM-GPU-TC bf16", "ch04_matmul/MM-GPU-TC", ["--precision", "bf16", "--width", "4096", "--data", "uniform"]),
    ("ray", "ch05_raytrace/ray", ["--output", "/tmp/lesson_ray.ppm"]),
    ("ray_noconst", "ch05_raytrace/ray_noconst", ["--output", "/tmp/lesson_ray_noconst.ppm"]),
    ("pinned_vs_pageable", "ch06_streams/pinned_vs_pageable", []),
    ("streams", "ch06_streams/streams", []),
    ("zero_copy", "ch07_multi_gpu/zero_copy", []),
    ("dot_multi", "ch07_multi_gpu/dot_multi", ["--n", "2^28"]),
    ("ring_allreduce", "ch07_multi_gpu/ring_allreduce", []),
]

# Ratios across separate runs of one round: name -> (numerator, denominator), each
# (label, variant, field), field "rate" (gbps or gflops) or "time" (the median ms).
PAIRS = {
    "VA-GPU-NN auto grid / 128x128 grid": (("VA-GPU-NN auto", "kernel", "rate"), ("VA-GPU-NN", "kernel", "rate")),
    "VA-GPU-NN auto grid / d2d copy": (("VA-GPU-NN auto", "kernel", "rate"), ("VA-GPU-NN auto", "d2d-copy", "rate")),
    "Dot-SM-Warp / d2d copy": (("Dot-SM-Warp", "two-pass", "rate"), ("Dot-SM-Warp", "d2d-copy", "rate")),
    "reduction sequential / interleaved-shared": (("reduction", "sequential", "rate"), ("reduction", "interleaved-shared", "rate")),
    "reduction sequential / interleaved-global": (("reduction", "sequential", "rate"), ("reduction", "interleaved-global", "rate")),
    "reduction sequential / thread0": (("reduction", "sequential", "rate"), ("reduction", "thread0", "rate")),
    "ray global / constant (time)": (("ray", "constant", "time"), ("ray_noconst", "global", "time")),
    "streams one-stream / depth-first (time)": (("streams", "one-stream", "time"), ("streams", "depth-first", "time")),
    "streams default-sync / breadth-first (time)": (("streams", "default-sync", "time"), ("streams", "breadth-first", "time")),
    "zero_copy copy-then-compute / zero-copy (time)": (("zero_copy", "copy-then-compute", "time"), ("zero_copy", "zero-copy", "time")),
}


def value(records, variant, field):
    """The largest size's record of that variant (a sweep reports several sizes)."""
    chosen = [r for r in records if r.get("variant") == variant]
    if not chosen:
        return None
    r = max(chosen, key=lambda r: (r.get("size") or {}).get("bytes") or 0)
    if field == "time":
        return (r.get("time_ms") or {}).get("median")
    return r.get("gbps") if r.get("gbps") is not None else r.get("gflops")


def spread(values):
    return statistics.median(values), min(values), max(values)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build", help="the build folder (its chNN_*/ hold the programs)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--only", action="append", default=[], help="a label of RUNS (repeatable)")
    p.add_argument("--pairs", action="store_true", help="also the ratios across separate runs")
    p.add_argument("--out", help="also write every run's records and lines here (JSON)")
    p.add_argument("--timeout", type=int, default=120, help="seconds one program may run")
    p.add_argument("--deadline", type=float, default=0,
                   help="start no round after this many seconds (0: none); the summary is of "
                        "the rounds done")
    args = p.parse_args()
    runs = [r for r in RUNS if not args.only or r[0] in args.only or r[1].split("/")[1] in args.only]
    lessons, pair_values, outcomes, log = {}, {}, {}, []
    started = time.time()
    done = 0
    for i in range(args.runs):
        if args.deadline and i and time.time() - started > args.deadline:
            print(f"deadline: {i} of {args.runs} rounds done", flush=True)
            break
        done += 1
        round_records = {}
        for label, program, words in runs:
            binary = os.path.join(args.build, program)
            try:
                r = subprocess.run([binary] + words + ["--json"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, errors="replace",
                                   timeout=args.timeout)
                rc, out = r.returncode, r.stdout
            except subprocess.TimeoutExpired:
                rc, out = "timeout", ""
            except FileNotFoundError:
                rc, out = "missing", ""
            records = parse_records(out)
            round_records[label] = records
            lesson = re.findall(r"^Lesson: (.*)$", out, re.M)
            impossible = re.findall(r"^impossible measurement: (.*)$", out, re.M)
            said = lesson[-1] if lesson else "(no Lesson line)"
            kind = ("MISSED" if said.startswith("MISSED") else "shown" if said.startswith("shown")
                    else "not shown" if said.startswith("not shown") else "none")
            o = outcomes.setdefault(label, {"shown": 0, "not shown": 0, "MISSED": 0, "none": 0,
                                            "exit!=0": 0, "impossible": 0, "last": ""})
            o[kind] += 1
            o["exit!=0"] += rc != 0
            o["impossible"] += bool(impossible)
            o["last"] = said[:160] if rc in (0, 1) else f"exit {rc}: " + said[:120]
            if rc != 0:
                o["last_output"] = out[-1500:]
            # The program's own ratios: the "lesson" field of its records (the same in each).
            for rec in records[:1]:
                for c in ((rec.get("lesson") or {}).get("checks") or []):
                    key = f"{label}: {c.get('what')}"
                    lessons.setdefault(key, {"values": [], "threshold": c.get("threshold"),
                                             "kind": c.get("kind")})["values"].append(c.get("ratio"))
            log.append({"round": i, "label": label, "exit": rc, "lesson": said,
                        "impossible": impossible, "records": records})
        if args.pairs:
            for name, (num, den) in PAIRS.items():
                a = value(round_records.get(num[0], []), num[1], num[2])
                b = value(round_records.get(den[0], []), den[1], den[2])
                if a and b:
                    pair_values.setdefault(name, []).append(a / b)
        print(f"round {i + 1}/{args.runs} done after {time.time() - started:.0f} s", flush=True)

    print(f"\nThe programs' lesson ratios over {done} runs (median, min, max; threshold):")
    for key, v in sorted(lessons.items()):
        vals = [x for x in v["values"] if x is not None]
        if vals:
            m, lo, hi = spread(vals)
            print(f"  {key:70} {m:8.3f} {lo:8.3f} {hi:8.3f}   {v['kind'] or ''} {v['threshold']}")
    if pair_values:
        print("\nRatios across separate runs of one round (median, min, max):")
        for name, vals in pair_values.items():
            m, lo, hi = spread(vals)
            print(f"  {name:70} {m:8.3f} {lo:8.3f} {hi:8.3f}")
    print("\nLesson lines and exit codes per program:")
    failed = False
    for label, o in outcomes.items():
        print(f"  {label:22} shown {o['shown']:2}  not-shown {o['not shown']:2}  MISSED {o['MISSED']:2}"
              f"  none {o['none']:2}  exit!=0 {o['exit!=0']:2}  impossible {o['impossible']:2}  | {o['last']}")
        if o["exit!=0"]:
            failed = True
            print("    last failing output:\n      " + o.get("last_output", "").replace("\n", "\n      "))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"outcomes": outcomes, "lessons": lessons, "pairs": pair_values, "log": log}, f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Constant memory or global memory? Runs ray_noconst and ray back to back.

For each scene (20, 200 and 2048 spheres, each also with --divergent reads)
the two programs run alternately, several rounds, on the same image size, so
that clocks and temperature treat them alike. Each run reports its kernel-only
median over many launches and its end-to-end time (allocation + copies +
kernel, as the original timed it); this script prints them side by side with
the const/global ratio of every round.

  python3 ch05_raytrace/compare.py [--build build] [--rounds 3] [--repeats 200]
                                   [--dim 1024] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--build", default="build", help="the CMake build folder (default: build)")
p.add_argument("--rounds", type=int, default=3)
p.add_argument("--repeats", type=int, default=200, help="timed kernel launches per run")
p.add_argument("--dim", type=int, default=1024)
p.add_argument("--out", default=None, help="keep the images here (default: a temporary folder)")
args = p.parse_args()

programs = {"global": os.path.join(args.build, "ch05_raytrace", "ray_noconst"),
            "constant": os.path.join(args.build, "ch05_raytrace", "ray")}
for path in programs.values():
    if not os.access(path, os.X_OK):
        sys.exit(f"compare.py: {path} is not built "
                 f"(cmake --build {args.build} --target ray ray_noconst)")
out = args.out or tempfile.mkdtemp(prefix="ch05_compare_")
os.makedirs(out, exist_ok=True)

scenes = [(20, False), (200, False), (2048, False), (20, True), (200, True), (2048, True)]
results = {}  # (spheres, divergent, version) -> list of records
device = None
for spheres, divergent in scenes:
    for round_ in range(args.rounds):
        order = ["global", "constant"] if round_ % 2 == 0 else ["constant", "global"]
        for version in order:
            image = os.path.join(out, f"{version}_{spheres}{'_div' if divergent else ''}.ppm")
            cmd = [programs[version], "--spheres", str(spheres), "--dim", str(args.dim),
                   "--repeats", str(args.repeats), "--output", image, "--json"]
            cmd += ["--divergent"] if divergent else []
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode == 77:
                sys.exit("compare.py: no GPU: " + run.stderr.strip())
            if run.returncode != 0:
                sys.exit(f"compare.py: {' '.join(cmd)} failed ({run.returncode}):\n"
                         f"{run.stdout}{run.stderr}")
            lines = run.stdout.splitlines()
            record = [json.loads(l) for l in lines if l.startswith('{"schema":1')][0]
            device = record["device"]
            results.setdefault((spheres, divergent, version), []).append(record)

def cell(records, key):
    values = [r["time_ms"]["median"] if key == "kernel" else r["end_to_end_ms"] for r in records]
    return statistics.median(values), min(values), max(values)

print(f"# ray_noconst (global) vs ray (constant): {device}, {args.dim} x {args.dim}, "
      f"{args.rounds} rounds x {args.repeats} launches\n")
print("| spheres | reads | kernel global ms | kernel constant ms | const/global (per round) "
      "| end-to-end global ms | end-to-end constant ms |")
print("|---:|---|---:|---:|---|---:|---:|")
for spheres, divergent in scenes:
    g = results[(spheres, divergent, "global")]
    c = results[(spheres, divergent, "constant")]
    # round by round
    ratios = [cr["time_ms"]["median"] / gr["time_ms"]["median"] for gr, cr in zip(g, c)]
    kg, kc = cell(g, "kernel"), cell(c, "kernel")
    eg, ec = cell(g, "e2e"), cell(c, "e2e")
    print(f"| {spheres} | {'divergent' if divergent else 'uniform'} "
          f"| {kg[0]:.4f} ({kg[1]:.4f}-{kg[2]:.4f}) | {kc[0]:.4f} ({kc[1]:.4f}-{kc[2]:.4f}) "
          f"| {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) "
          f"| {eg[0]:.3f} ({eg[1]:.3f}-{eg[2]:.3f}) | {ec[0]:.3f} ({ec[1]:.3f}-{ec[2]:.3f}) |")
print("\nkernel: the median of each run's launches; the cell gives the median over rounds and "
      "(min-max over rounds).\n"
      "end to end: each run's median of 5 (malloc + copies + kernel + copy back).")
print("Every run also checked its image against the CPU reference: all PASS.")

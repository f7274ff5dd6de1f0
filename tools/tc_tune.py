#!/usr/bin/env python3
"""The tile sweep behind docs/ch04_profiling.md (docs/runs/h200/side/tc-tune.log), on a GPU.

MM-GPU-TC is built with other tiles (-DTC_*) and MM-GPU-RT with other small tiles (-DRT_*),
each with a plain nvcc line from the chapter's folder, and each run with --compare-cublas:
cuBLAS on the same inputs, in the same process. TC-base is the committed kernel, also run at
odd Widths as a check. One line per run: the variant, its arguments, GFLOP/s, cuBLAS's GFLOP/s
and the ratio, the relative error, the exit code and the verdict (docs/gen/g.py reads it).

usage: tools/tc_tune.py OUT.log [--arch sm_90] [--only NAME ...]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CH04 = os.path.join(ROOT, "ch04_matmul")

# name: (source, -D flags). TC-base takes the program's own defaults.
TC_VARIANTS = {
    "TC-base": [],
    "TC-generic": ["TC_GENERIC_LOADS=1"],
    "TC-st2": ["TC_STAGES=2"],
    "TC-st4": ["TC_STAGES=4"],
    "TC-bk16": ["TC_BK=16", "TC_STAGES=4"],
    "TC-b128x256": ["TC_BN=256", "TC_WARPS_N=4", "TC_MIN_BLOCKS=1"],
    "TC-b256x128": ["TC_BM=256", "TC_WARPS_M=4", "TC_MIN_BLOCKS=1"],
    "TC-w64x32": ["TC_WARPS_N=4"],
    "TC-w32x32": ["TC_WARPS_M=4", "TC_WARPS_N=4", "TC_MIN_BLOCKS=1"],
}
RT_VARIANTS = {f"RT-rt{m}x{n}": [f"RT_SMALL_BM={m}", f"RT_SMALL_BN={n}"]
               for m, n in ((64, 64), (32, 64), (64, 128), (128, 64))}

TC_RUN = "--width 4096 --data uniform --precision {p} --repeats 20 --compare-cublas"
TC_CHECKS = ["--width 4096 --data random --precision {p} --repeats 20 --compare-cublas",
             "--width 1 --precision {p} --repeats 2", "--width 17 --precision {p} --repeats 2",
             "--width 100 --precision {p} --repeats 2", "--width 129 --precision {p} --repeats 2",
             "--width 1000 --precision {p} --repeats 2", "--width 4095 --precision {p} --repeats 2",
             "--width 1001 --data uniform --precision {p} --repeats 2"]
RT_RUNS = ["--width 1024 --repeats 20 --compare-cublas",
           "--width 2048 --repeats 20 --compare-cublas"]
CUBLAS_RUNS = [f"--width {w} --data uniform --precision {p} --repeats 20"
               for p in ("fp32", "tf32", "bf16") for w in (1024, 4096, 8192)]


def build(name, source, defines, arch, bindir):
    exe = os.path.join(bindir, name)
    cmd = ["nvcc", "-std=c++17", "-O2", f"-arch={arch}"] + [f"-D{d}" for d in defines] + \
          ["-o", exe, source, "-lcublas"]
    r = subprocess.run(cmd, cwd=CH04, capture_output=True, text=True)
    return name, exe if r.returncode == 0 else None, r.stderr[-2000:]


def run(variant, exe, args, log):
    r = subprocess.run([exe] + args.split() + ["--json"], capture_output=True, text=True,
                       timeout=600)
    record = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("gflops") is not None and not record:
                record = rec
    verdict = next((l for l in r.stdout.splitlines() if l.startswith("Verdict")),
                   (r.stdout + r.stderr).strip().splitlines()[-1:] or [""])
    verdict = verdict if isinstance(verdict, str) else verdict[0]
    g, c = record.get("gflops"), record.get("cublas_gflops")
    err = record.get("relative_error")
    cublas = f"cuBLAS {c:.0f} GFLOP/s = {100 * g / c:.1f}%" if g and c else \
        f"cuBLAS {'':<14} = {'':<5}"
    line = (f"{variant} {args:<62} kernel {g or 0:.0f} GFLOP/s  {cublas}  "
            f"err {'' if err is None else format(err, '.2e'):<9} rc={r.returncode} "
            f"{verdict[:100]}")
    print(line, flush=True)
    log.write(line + "\n")
    log.flush()
    return r.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--arch", default="native")
    ap.add_argument("--only", nargs="*", help="variants to build and run (default: all)")
    a = ap.parse_args()
    variants = {**{k: ("MM-GPU-TC.cu", v) for k, v in TC_VARIANTS.items()},
                **{k: ("MM-GPU-RT.cu", v) for k, v in RT_VARIANTS.items()},
                "cuBLAS": ("MM-cuBLAS.cu", [])}
    if a.only:
        variants = {k: v for k, v in variants.items() if k in a.only}
    bindir = tempfile.mkdtemp(prefix="tc-tune-")
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        built = list(pool.map(lambda kv: build(kv[0], kv[1][0], kv[1][1], a.arch, bindir),
                              variants.items()))
    failed = 0
    with open(a.out, "w") as log:
        for name, exe, err in built:
            if exe is None:
                print(f"{name}: build failed\n{err}", file=sys.stderr)
                failed += 1
                continue
            if name.startswith("TC-"):
                runs = [TC_RUN.format(p=p) for p in ("tf32", "bf16")]
                if name == "TC-base":
                    runs += [c.format(p=p) for p in ("tf32", "bf16") for c in TC_CHECKS]
            elif name.startswith("RT-"):
                runs = RT_RUNS + (["--width 4096 --repeats 20 --compare-cublas",
                                   "--width 1000 --repeats 2"] if name == "RT-rt64x128" else [])
            else:
                runs = CUBLAS_RUNS
            for args in runs:
                failed += run(name, exe, args, log) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

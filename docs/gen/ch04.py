"""Chapter 4's blocks (docs/ch04_matmul.md, docs/ch04_tensor_cores.md, docs/ch04_profiling.md):
MM-GPU-TC against cuBLAS, the tile sweep (side/tc-tune.log), the instruction's ceiling
(side/mma-peak.log), Nsight Compute reports (side/ncu-*.txt) and MM-GPU-WGMMA's steps and
variants (side/wgmma-*.log)."""
import functools
import os
import re

import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403


# ---- chapter 4's Tensor Core step --------------------------------------------------------
# The targets for MM-GPU-TC, as a share of cuBLAS at the same precision (goals, not
# measurements; the blocks say whether the results run meets them).
TC_TARGETS = {"tf32": 50.0, "bf16": 40.0}
U = {"fp32": 2.0 ** -24, "tf32": 2.0 ** -11, "bf16": 2.0 ** -8}   # unit roundoff of the inputs


def mm_record(program, precision, width=4096):
    """The results run's record of a matrix program at this Width and input precision."""
    for e in results()["runs"]:
        if e["program"] != program:
            continue
        for r in e["records"]:
            size = r.get("size") or {}
            if size.get("width") == width and (size.get("precision") or "fp32") == precision:
                return r
    return None


def tc_pair(precision, width=4096):
    """(ours, cuBLAS) records at one precision: MM-GPU-TC on Tensor Cores, MM-GPU-RT in FP32."""
    ours = "MM-GPU-RT" if precision == "fp32" else "MM-GPU-TC"
    return mm_record(ours, precision, width), mm_record("MM-cuBLAS", precision, width)


def tc_share(precision, width=4096):
    """Our kernel's GFLOP/s as a percentage of cuBLAS's at the same precision and Width."""
    ours, lib = tc_pair(precision, width)
    return percent(ours and ours.get("gflops"), lib and lib.get("gflops"))


def tc_speed_table(width=4096):
    """MM-GPU-TC against cuBLAS at each precision (and MM-GPU-RT against SGEMM in FP32), kernel-
    only medians at one Width, with the share of cuBLAS and the issue's target."""
    cog.outl("| inputs | ours | data | ours ms | ours TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | "
             "ours / cuBLAS | target |")
    cog.outl("|" + " --- |" * 9)
    for precision in ("tf32", "bf16", "fp32"):
        ours, lib = tc_pair(precision, width)
        name = "MM-GPU-TC" if precision != "fp32" else "MM-GPU-RT (FP32 lanes)"
        share = tc_share(precision, width)
        target = TC_TARGETS.get(precision)
        verdict = "—" if target is None else NOT_RUN if share is None else \
            f"≥ {target:.0f}%: {'met' if share >= target else 'missed'}"
        data = (ours or lib or {}).get("size", {}).get("data", "")
        cog.outl(f"| {precision.upper()} | {name} | {data} | "
                 f"{NOT_RUN if not ours or field(ours, 'time_ms.median') is None else sig4(field(ours, 'time_ms.median'))} | "
                 f"{cell(ours and ours.get('gflops') and ours['gflops'] / 1e3, '.1f')} | "
                 f"{NOT_RUN if not lib or field(lib, 'time_ms.median') is None else sig4(field(lib, 'time_ms.median'))} | "
                 f"{cell(lib and lib.get('gflops') and lib['gflops'] / 1e3, '.1f')} | "
                 f"{cell(share, '.1f', '%')} | {verdict} |")


@functools.lru_cache(maxsize=None)
def tc_tune():
    """The lines of side/tc-tune.log: one run each (variant, its arguments, GFLOP/s, cuBLAS's
    GFLOP/s on the same inputs and the ratio when it was compared, the relative error)."""
    path = side_file(os.path.join("side", "tc-tune.log"))
    rows = []
    for line in open(path).read().splitlines() if path else []:
        m = re.match(r"(\S+) (.*?)\s+kernel (\d+)\s+GFLOP/s\s+cuBLAS\s*(\d*)(?:\s+GFLOP/s)?\s*=\s*"
                     r"([\d.]*)%?\s+err\s*(\S*)\s+rc=(\d+)", line)
        if not m:
            continue
        args = m.group(2).split()
        opt = lambda k, d=None: args[args.index(k) + 1] if k in args else d
        rows.append({"variant": m.group(1), "args": m.group(2).strip(),
                     "width": int(opt("--width")),
                     "precision": opt("--precision", "fp32"), "data": opt("--data", "random"),
                     "gflops": float(m.group(3)),
                     "cublas": float(m.group(4)) if m.group(4) else None,
                     "pct": float(m.group(5)) if m.group(5) else None,
                     "err": float(m.group(6)) if m.group(6) else None,
                     "rc": int(m.group(7))})
    return rows


def tune(variant, precision="fp32", width=4096, data=None):
    """The first line of the sweep for this variant, precision, Width (and data), or None."""
    for r in tc_tune():
        if r["variant"] == variant and r["precision"] == precision and r["width"] == width and \
                (data is None or r["data"] == data):
            return r
    return None


def tc_error_table(width=4096):
    """The relative Frobenius error of P against the double product of the unrounded inputs, at
    each precision: MM-GPU-TC and cuBLAS on the same data (uniform, every bit used), and the
    inputs' unit roundoff u."""
    cog.outl("| inputs | unit roundoff u | MM-GPU-TC | cuBLAS | cuBLAS / u |")
    cog.outl("| --- | --- | --- | --- | --- |")
    for precision in ("tf32", "bf16"):
        ours = mm_record("MM-GPU-TC", precision, width)
        lib = mm_record("MM-cuBLAS", precision, width)
        e_ours = ours and ours.get("relative_error")
        e_lib = lib and lib.get("relative_error")
        data = (ours or lib or {}).get("size", {}).get("data", "")
        cog.outl(f"| {precision.upper()} ({data} data) "
                 f"| {U[precision]:.2e} | {cell(e_ours, '.2e')} | {cell(e_lib, '.2e')} | "
                 f"{cell(e_lib and e_lib / U[precision], '.2f')} |")
    lib = mm_record("MM-cuBLAS", "fp32", width)
    sweep = tune("cuBLAS", "fp32", width, "uniform")
    if sweep and sweep.get("err") is not None:
        cog.outl(f"| FP32 (uniform data, `side/tc-tune.log`) | {U['fp32']:.2e} | — | "
                 f"{sweep['err']:.2e} | (the sums' rounding, not the inputs') |")
    if lib is not None and lib.get("relative_error") is not None:
        cog.outl(f"| FP32 ({lib['size'].get('data')} data, the tour) | {U['fp32']:.2e} | — | "
                 f"{lib['relative_error']:.2e} | (data on the 1/8 grid: exact) |")


def tune_table(variants, precisions, width=4096, base="TC-base"):
    """The tile sweep: each variant's GFLOP/s at each precision, its share of cuBLAS on the same
    run, and its change against the committed kernel (base)."""
    head = "| variant |" + "".join(f" {p.upper()} GFLOP/s | % of cuBLAS | vs {base} |"
                                   for p in precisions)
    cog.outl(head)
    cog.outl("|" + " --- |" * (1 + 3 * len(precisions)))
    for v in variants:
        cells = []
        for p in precisions:
            r, b = tune(v, p, width, "uniform"), tune(base, p, width, "uniform")
            cells += [cell(r and r["gflops"], ".0f"), cell(r and r["pct"], ".1f", "%"),
                      cell(r and b and 100 * (r["gflops"] / b["gflops"] - 1), "+.1f", "%")]
        cog.outl(f"| {v} | " + " | ".join(cells) + " |")


def tune_best(precision, width=4096, base="TC-base"):
    """(variant, GFLOP/s, gain in % over base) of the fastest TC variant of the sweep."""
    rows = [r for r in tc_tune() if r["variant"].startswith("TC-") and r["precision"] == precision
            and r["width"] == width and r["data"] == "uniform"]
    b = tune(base, precision, width, "uniform")
    if not rows or b is None:
        return None, None, None
    best = max(rows, key=lambda r: r["gflops"])
    return best["variant"], best["gflops"], 100 * (best["gflops"] / b["gflops"] - 1)


@functools.lru_cache(maxsize=None)
def mma_peak(precision):
    """TFLOP/s of wmma::mma_sync alone at this input precision (side/mma-peak.log, written by
    tools/mma_peak.cu), or None."""
    path = side_file(os.path.join("side", "mma-peak.log"))
    text = open(path).read() if path else ""
    if "Verdict: PASS" not in text:
        return None
    m = re.search(r"mma_sync %s .*?([\d.]+) TFLOP/s" % precision.upper(), text)
    return float(m.group(1)) if m else None


@functools.lru_cache(maxsize=None)
def ncu(name):
    """An Nsight Compute text report kept in side/: its metrics ('Metric Name' -> number) and
    its rule texts joined, for the figures ncu states in words."""
    path = side_file(os.path.join("side", name))
    if path is None:
        return {}, ""
    text = open(path).read()
    metrics = {}
    for line in text.splitlines():
        m = re.match(r"\s{4}(\S.*?\S)\s{2,}(\S.*?)?\s{2,}([\d,.]+)\s*$", line)
        if m and not line.strip().startswith(("OPT", "INF", "WRN")):
            metrics.setdefault(m.group(1), float(m.group(3).replace(",", "")))
    return metrics, re.sub(r"\s+", " ", text)


def ncu_metric(name, metric):
    return ncu(name)[0].get(metric)


def ncu_said(name, pattern, group=1, cast=float):
    """A figure from ncu's own words (a regular expression over its rule texts), or None."""
    m = re.search(pattern, ncu(name)[1])
    return cast(m.group(group)) if m else None


def ncu_busiest_pipe(name):
    """(pipeline, percent) that ncu names the highest-utilized, or (None, None)."""
    m = re.search(r"(\w+) is the highest-utilized pipeline \(([\d.]+)%\)", ncu(name)[1])
    return (m.group(1), float(m.group(2))) if m else (None, None)


# ---- MM-GPU-WGMMA's steps (docs/ch04_tensor_cores.md, its MM-GPU-WGMMA subsections), from side/wgmma-steps.log ------------------
@functools.lru_cache(maxsize=None)
def wgmma_runs(name="wgmma-steps.log"):
    """The runs of side/<name> (MM-GPU-WGMMA --step all --compare-cublas, each after a line
    '$ MM-GPU-WGMMA ARGS'): {(precision, width): {"cublas": {...}, 1: {...}, ...}}, each
    {"ms", "gflops", "pct"} as printed (pct: the step's share of cuBLAS in the same run)."""
    def header(text):
        if not text.startswith("$ MM-GPU-WGMMA"):
            return None
        args = text.split()
        opt = lambda k, d: args[args.index(k) + 1] if k in args else d
        return opt("--precision", "bf16"), int(opt("--width", "1024"))
    return _wgmma_log(name, header)


def _wgmma_log(name, header):
    """side/<name> read as runs of MM-GPU-WGMMA: header(line) gives a run's key (None: not a
    header), and each run gets its steps' and cuBLAS's {"ms", "gflops", "pct"}."""
    path = side_file(os.path.join("side", name))
    runs, current, last = {}, None, None
    for text in open(path).read().splitlines() if path else []:
        key = header(text)
        if key is not None:
            current = runs.setdefault(key, {})
            continue
        m = re.match(r"\s+(cuBLAS \(yardstick\)|step (\d), kernel only)\s+median\s+([\d.]+) ms.*?"
                     r"([\d.]+) GFLOP/s", text)
        if m and current is not None:
            last = current.setdefault(int(m.group(2)) if m.group(2) else "cublas", {})
            last.update(ms=float(m.group(3)), gflops=float(m.group(4)))
            continue
        m = re.match(r"\s+([\d.]+)% of cuBLAS", text)
        if m and last is not None:
            last["pct"] = float(m.group(1))
    return runs


def wgmma_record(precision, width, step):
    return wgmma_runs().get((precision, width), {}).get(step)


WGMMA_TARGETS = {("bf16", 4096): 85, ("bf16", 8192): 85, ("tf32", 4096): 75}


def wgmma_table(name="wgmma-steps.log"):
    """Each step's TFLOP/s and share of cuBLAS in the same run, per precision and Width."""
    runs = wgmma_runs(name)
    keys = [("bf16", 4096), ("bf16", 8192), ("tf32", 4096)]
    cog.outl("| step | " + " | ".join(f"{p.upper()}, W = {w}" for p, w in keys) + " |")
    cog.outl("|" + " --- |" * (len(keys) + 1))
    what = {1: "1: wgmma + TMA, one stage", 2: "2: 4-stage mbarrier pipeline",
            3: "3: warp specialisation", 4: "4: clusters of 2, multicast, tile order"}
    for step in (1, 2, 3, 4):
        cells = []
        for k in keys:
            r = runs.get(k, {}).get(step)
            cells.append(NOT_RUN if not r else
                         f"{r['gflops'] / 1e3:.1f} TFLOP/s ({r.get('pct', float('nan')):.1f}%)")
        cog.outl(f"| {what[step]} | " + " | ".join(cells) + " |")
    cells = []
    for k in keys:
        r = runs.get(k, {}).get("cublas")
        cells.append(NOT_RUN if not r else f"{r['gflops'] / 1e3:.1f} TFLOP/s ({sig4(r['ms'])} ms)")
    cog.outl("| cuBLAS, same run | " + " | ".join(cells) + " |")
    cells = []
    for k in keys:
        r = runs.get(k, {}).get(4)
        t = WGMMA_TARGETS[k]
        cells.append(f"≥ {t}%: " + (NOT_RUN if not r or "pct" not in r else
                                     "met" if r["pct"] >= t else "missed"))
    cog.outl("| target (step 4) | " + " | ".join(cells) + " |")


@functools.lru_cache(maxsize=None)
def wgmma_variants(name="wgmma-variants.log"):
    """side/<name>: MM-GPU-WGMMA built with other -DWGMMA_* settings, each run like
    tools/wgmma_steps.sh ('=== VARIANT PRECISION WIDTH', then its lines):
    {(variant, precision, width): {step: {"gflops", "pct"}, "cublas": {...}}}."""
    def header(text):
        m = re.match(r"=== (\S+) (\S+) (\d+)", text)
        return (m.group(1), m.group(2), int(m.group(3))) if m else None
    return _wgmma_log(name, header)


def wgmma_variants_table(variants):
    """Step 4 built each way (variants: [(name, what)]), as a share of cuBLAS in the same run,
    beside step 3 of the same binary."""
    runs = wgmma_variants()
    keys = [("bf16", 4096), ("bf16", 8192), ("tf32", 4096)]
    cog.outl("| step 4 built with | " + " | ".join(f"{p.upper()}, W = {w}: step 3 → step 4"
                                                  for p, w in keys) + " |")
    cog.outl("|" + " --- |" * (len(keys) + 1))
    for variant, what in variants:
        cells = []
        for p, w in keys:
            r = runs.get((variant, p, w), {})
            s3, s4 = r.get(3, {}).get("pct"), r.get(4, {}).get("pct")
            cells.append(NOT_RUN if s3 is None or s4 is None else f"{s3:.1f}% → {s4:.1f}%")
        cog.outl(f"| {what} (`{variant}`) | " + " | ".join(cells) + " |")


# ---- every rate's numerator against the counters (tests/counters, side/counters.json) ------
def counters_runs():
    """side/counters.json: each counters check's claimed and counted figures, two runs."""
    path = side_file(os.path.join("side", "counters.json"))
    if path is None:
        return None
    import json
    with open(path) as f:
        return json.load(f)


COUNTED_AS = {
    "dram": "DRAM bytes read + written",
    "fp32": "2 × FFMA + FADD + FMUL",
    "tensor-bf16": "Tensor Core ops, BF16 inputs",
    "tensor-tf32": "Tensor Core ops, TF32 inputs",
    "link": "host-memory bytes read through L2",
}


def counters_table():
    """Claimed against counted, per check: the kernel, what is compared, the claim, the count
    over the claim in both runs, and the range the check allows."""
    data = counters_runs()
    if data is None:
        cog.outl(f"(side/counters.json: {NOT_RUN}; `ctest -L counters` on a GPU and "
                 "`tests/counters/counters.py table` make it.)")
        return
    cog.outl("| check | kernel | counted as | claimed | counted / claimed (2 runs) | allowed | ok |")
    cog.outl("|" + " --- |" * 7)
    for r in data["checks"]:
        kernel = re.sub(r"\(.*$", "", r["kernel"]).replace("void ", "")
        kernel = kernel if len(kernel) <= 40 else kernel[:38] + "…"
        unit = "B" if r["unit"] == "bytes" else "flop"
        low, high = r["agreed"]
        cog.outl(f"| {r['name']} | `{kernel}` | {COUNTED_AS[r['count']]} | "
                 f"{r['claimed']:.4g} {unit} | {r['run1']['ratio']:.4f}, {r['ratio']:.4f} | "
                 f"{low:.3f} – {high:.3f} | {'yes' if r['ok'] else '**no**'} |")

"""The progress table at the top of each chapter that builds a ladder of kernels (chapter 3's
reductions, chapter 4's FP32 kernels and its Tensor Core steps, chapter 6's schedules): one row
a step, what changed, its time and its share of a ceiling measured in the same run, as the
worklogs do. `g.ladder(NAME)` writes ladder NAME of docs/gen/ladders.json, which names each
step's measurement and says in one phrase what changed; every number is read from the run:

  bandwidth  a kernel's kernel-only median and rate (results.json), against the results run's
             device-to-device copy (its `ceilings.dram`);
  matmul     a kernel's median at each Width, against the yardstick (cuBLAS at the same
             precision) at the same Width in the same results run;
  tensor     MM-GPU-TC (results.json) against cuBLAS at the same precision in the results run,
             and MM-GPU-WGMMA's steps (side/wgmma-steps.log) against the cuBLAS that the same
             process timed;
  schedule   each of streams' modes against the ideal pipelined time the program computed from
             each stage timed alone in the same run.

The steps must follow programs.json's order (and, within a program, its records' order in the
results run, or MM-GPU-WGMMA's step numbers): a ladder out of order stops the generator.
tests/docs/test_ladders.py recomputes every row from the run on its own.
"""
import functools
import json
import os

import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403
from .ch04 import wgmma_runs

LADDERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ladders.json")
MISSING = "—"


@functools.lru_cache(maxsize=None)
def ladders():
    with open(LADDERS) as f:
        return json.load(f)["ladders"]


def _records():
    """Every record of the results run, in the tour's order: (index, record)."""
    return list(enumerate(r for e in results()["runs"] for r in e["records"]))


def ladder_record(program, variant=None, width=None, precision=None):
    """The first record of the results run of this program (and variant, Width, input
    precision: fp32 when the record names none), or None."""
    for _, r in _records():
        size = r.get("size") or {}
        if r["program"] != program or (variant and r.get("variant") != variant):
            continue
        if width is not None and size.get("width") != width:
            continue
        if precision is not None and (size.get("precision") or "fp32") != precision:
            continue
        return r
    return None


def _place(step):
    """Where a step stands: (its program's place in programs.json, its place in the program:
    its record's in the results run, or its step number; None when the run lacks it)."""
    programs = [p["name"] for p in manifest()["programs"]]
    if step["program"] not in programs:
        raise SystemExit(f"docs: ladder step {step['program']} is not in programs.json")
    if "step" in step:
        inner = step["step"]
    else:
        inner = next((i for i, r in _records() if r["program"] == step["program"] and
                      (not step.get("variant") or r.get("variant") == step["variant"])), None)
    return programs.index(step["program"]), inner


def _check_order(name, steps):
    """Stops the generator when the steps do not follow programs.json's order, or a program's
    steps not its records' order (a step the run lacks is left out of the second test)."""
    places = [_place(s) for s in steps]
    known = [p for p in places if p[1] is not None]
    if [p[0] for p in places] != sorted(p[0] for p in places) or known != sorted(known):
        raise SystemExit(f"docs: ladder {name} in docs/gen/ladders.json does not follow "
                         "programs.json's order (and the records' order within a program)")


def step_name(step):
    """'Dot-SM [uncapped]', 'MM-GPU-WGMMA step 2', 'MM-GPU-SM'."""
    if "step" in step:
        return f"{step['program']} step {step['step']}"
    return step["program"] + (f" [{step['variant']}]" if step.get("variant") and
                              step.get("show_variant", True) else "")


def four(value):
    """Four significant digits, zeros kept (1.000, 0.4303, 15.01), whole from 1000 (4544)."""
    return f"{value:.0f}" if abs(value) >= 1000 else format(value, "#.4g").rstrip(".")


def _ms(value):
    return MISSING if value is None else four(value)


def _pct(value):
    return MISSING if value is None else f"{value:.1f}"


def ladder(name):
    """The progress table of ladder NAME (docs/gen/ladders.json), from the run."""
    spec = ladders()[name]
    _check_order(name, spec["steps"])
    {"bandwidth": _bandwidth, "matmul": _matmul, "tensor": _tensor,
     "schedule": _schedule}[spec["kind"]](spec)


def _table(header, rows):
    """Writes a Markdown table; returns whether a cell is missing."""
    cog.outl("| " + " | ".join(header) + " |")
    cog.outl("|" + " --- |" * len(header))
    for row in rows:
        cog.outl("| " + " | ".join(row) + " |")
    cog.outl("")
    return any(MISSING in row[2:] for row in rows)


def _bandwidth(spec):
    dram = (results().get("ceilings") or {}).get("dram")
    rows, after = [], []
    for s in spec["steps"]:
        r = ladder_record(s["program"], s["variant"]) or {}
        gbps = r.get("gbps")
        rows.append([step_name(s), s["changed"], _ms(field(r, "time_ms.median")), _ms(gbps),
                     _pct(percent(gbps, dram))])
        if r.get("dot_ms") is not None and s["program"] not in after:
            after.append(s["program"])
    missing = _table(["step", "what changed", "kernel ms", "GB/s",
                      f"% of a device-to-device copy ({_ms(dram)} GB/s)"], rows)
    cog.outl("Kernel-only medians of the results run" +
             (f" (what the CPU does after the kernel, the copy back and the sum of "
              f"{' and '.join(after)}, is not in them: their outputs below time it)"
              if after else "") +
             "; the copy is the run's own measured ceiling, and it reads and writes." +
             (f" {MISSING} : not in this results run." if missing else ""))


def _matmul(spec):
    widths, precision, lib = spec["widths"], spec["precision"], spec["yardstick"]
    rows, absent = [], []
    for s in spec["steps"]:
        row = [step_name(dict(s, show_variant=False)), s["changed"]]
        for w in widths:
            r = ladder_record(s["program"], s.get("variant"), w, precision)
            y = ladder_record(lib["program"], lib.get("variant"), w, precision)
            row += [_ms(r and field(r, "time_ms.median")),
                    _pct(percent(r and r.get("gflops"), y and y.get("gflops")))]
            if r is None:
                absent.append(f"{s['program']} at W = {w}")
        rows.append(row)
    header = ["step", "what changed"]
    for w in widths:
        header += [f"W = {w}: kernel ms", f"W = {w}: % of {lib['name']}"]
    missing = _table(header, rows)
    cog.outl("Kernel-only medians of the results run; each share is GFLOP/s against "
             f"{lib['program']}'s ({lib['what']}) at the same Width in the same run." +
             (f" {MISSING} : not in this results run ({', '.join(absent)})." if missing else ""))


def _tensor(spec):
    width, precisions, lib = spec["width"], spec["precisions"], spec["yardstick"]
    steps = wgmma_runs(spec["log"])
    rows = []
    for s in spec["steps"]:
        row = [step_name(s), s["changed"]]
        for p in precisions:
            if "step" in s:  # a step of the log, against the cuBLAS of the same process
                run = steps.get((p, width), {})
                r, y = run.get(s["step"]), run.get("cublas")
                ms, pct = r and r["ms"], percent(r and r["gflops"], y and y["gflops"])
            else:
                r = ladder_record(s["program"], None, width, p)
                y = ladder_record(lib["program"], None, width, p)
                ms = r and field(r, "time_ms.median")
                pct = percent(r and r.get("gflops"), y and y.get("gflops"))
            row += [_ms(ms), _pct(pct)]
        rows.append(row)
    row = [f"{lib['program']} (yardstick)", lib["changed"]]
    for p in precisions:
        y = ladder_record(lib["program"], None, width, p)
        row += [_ms(y and field(y, "time_ms.median")),
                _pct(percent(y and y.get("gflops"), y and y.get("gflops")))]
    rows.append(row)
    header = ["step", "what changed"]
    for p in precisions:
        header += [f"{p.upper()}: kernel ms", f"{p.upper()}: % of {lib['name']} {p.upper()}"]
    missing = _table(header, rows)
    logged = [s["program"] for s in spec["steps"] if "step" in s][:1]
    timed = ", ".join(f"{p.upper()} {_ms(steps.get((p, width), {}).get('cublas', {}).get('ms'))} ms"
                      for p in precisions)
    cog.outl(f"W = {width}, kernel-only medians. {spec['steps'][0]['program']} and the yardstick: "
             f"the results run, each share against {lib['program']} at the same precision in "
             "that run" +
             (f"; {logged[0]}'s steps: `side/{spec['log']}`, each share against the cuBLAS "
              f"that the same process timed ({timed})" if logged else "") + "." +
             (f" {MISSING} : not in the run." if missing else ""))


def _schedule(spec):
    lib = spec["yardstick"]
    rows, ideal = [], None
    for s in spec["steps"]:
        r = ladder_record(s["program"], s["variant"]) or {}
        ms, own = field(r, "time_ms.median"), r.get("ideal_ms")
        ideal = ideal or own
        rows.append([step_name(s), s["changed"], _ms(ms), _pct(percent(own, ms))])
    rows.append([f"{lib['name']} (yardstick)", lib["changed"], _ms(ideal),
                 _pct(percent(ideal, ideal))])
    missing = _table(["step", "what changed", "ms", "% of the ideal pipelined time"], rows)
    cog.outl("Medians of the results run, each the whole job: every chunk copied in, "
             "transformed and copied back; each share is the ideal time over the mode's." +
             (f" {MISSING} : not in this results run." if missing else ""))

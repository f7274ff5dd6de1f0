"""Chapter 3's blocks (docs/ch03_dot_product.md): the racecheck run of stencil_1d --no-barrier,
kept beside the results run (side/racecheck-stencil_1d.log, made by tools/refresh_docs.sh or by
hand with the two commands it names). Its report names lines of stencil_1d.cu; the log keeps the
file's SHA-256, and the blocks stop the docs check when the file has changed since, so a line
number shown here is always the line of today's file.
"""
import hashlib
import os
import re

import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403

RACECHECK_LOG = "racecheck-stencil_1d.log"
STENCIL = os.path.join("ch03_dot_product", "stencil_1d.cu")


def racecheck_log():
    """The kept run: {"lines": its output, "commands": the '$ ' lines, "gpu": ...}. Stops the
    docs check when the log is missing or ran another version of stencil_1d.cu."""
    path = side_file(os.path.join("side", RACECHECK_LOG))
    if path is None:
        raise SystemExit(f"docs: side/{RACECHECK_LOG} is missing from the results folder "
                         f"(tools/refresh_docs.sh makes it)")
    with open(path) as f:
        lines = f.read().splitlines()
    head = next((m for m in (re.match(r"# stencil_1d\.cu sha256 ([0-9a-f]{64})$", l) for l in lines)
                 if m), None)
    with open(os.path.join(ROOT, STENCIL), "rb") as f:
        now = hashlib.sha256(f.read()).hexdigest()
    if head is None or head.group(1) != now:
        raise SystemExit(f"docs: side/{RACECHECK_LOG} ran another version of {STENCIL}: the line "
                         f"numbers it reports may have moved; run it again (the commands are in "
                         f"the log)")
    gpu = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("# GPU:")), None)
    return {"lines": [l for l in lines if not l.startswith("#")], "gpu": gpu,
            "commands": [l for l in lines if l.startswith("$ ")]}


def _reports(lines):
    """The report's hazards: [(kind, write line, [(read line, hazards)])], in order."""
    out = []
    for line in lines:
        m = re.match(r"=+ (Error|Warning): Race reported between Write access at .* in "
                     r"stencil_1d\.cu:(\d+)$", line)
        if m:
            out.append((m.group(1), int(m.group(2)), []))
            continue
        m = re.match(r"=+\s+and Read access at .* in stencil_1d\.cu:(\d+) \[(\d+) hazards?\]$", line)
        if m and out:
            out[-1][2].append((int(m.group(1)), int(m.group(2))))
    return out


def racecheck_excerpt():
    """The commands and the report, shortened: each distinct race once, with its first reader
    ('...' for the rest); then the verdict and the summary, as printed."""
    log = racecheck_log()
    cog.outl("```text")
    for c in log["commands"]:
        cog.outl(c)
    seen, skipping = set(), False
    for line in log["lines"]:
        if line.startswith("$ "):
            continue
        m = re.match(r"=+ (Error|Warning): Race reported .* in stencil_1d\.cu:(\d+)$", line)
        if m:
            key = (m.group(1), m.group(2))
            skipping = key in seen
            if not skipping:
                seen.add(key)
                cog.outl(line)
                first = True
            continue
        if re.match(r"=+\s+and Read access", line):
            if not skipping and first:
                cog.outl(line)
                cog.outl("...")
                first = False
            continue
        if re.match(r"=+ (COMPUTE-SANITIZER|Target application|RACECHECK SUMMARY)", line) \
                or line.startswith("Verdict:"):
            cog.outl(line)
    cog.outl("```")


def racecheck_lines():
    """One sentence: each line the report names, as today's stencil_1d.cu has it, with its
    hazards (errors or warnings) summed over the report; and the run's wrong outputs."""
    log = racecheck_log()
    with open(os.path.join(ROOT, STENCIL)) as f:
        source = f.read().splitlines()
    writes, reads = {}, {}
    for kind, line, readers in _reports(log["lines"]):
        w = writes.setdefault(line, {"kinds": set(), "hazards": 0})
        w["kinds"].add(kind.lower() + "s")
        for r, n in readers:
            w["hazards"] += n
            reads[r] = reads.get(r, 0) + n
    code = lambda n: "`" + source[n - 1].strip() + "`"
    parts = [f"line {n}, {code(n)} ({w['hazards']} hazards, reported as "
             f"{' and '.join(sorted(w['kinds']))})" for n, w in writes.items()]
    verdict = next((l for l in log["lines"] if l.startswith("Verdict:")), "")
    m = re.search(r"(\d+) of (\d+) outputs wrong", verdict)
    wrong = (f"; {m.group(1)} of its {m.group(2)} outputs came out wrong" if m
             else "; every output came out right" if "PASS" in verdict else "")
    cog.outl(f"In this run ({log['gpu'] or 'a GPU'}) the writes are "
             + "; ".join(parts) + ", and every read is line "
             + " and ".join(f"{r}, {code(r)}" for r in sorted(reads)) + wrong + ".")


# ---- the interleaved trees: divergence or the division? --------------------------------------
# tools/handout_measurements.sh builds reduction twice, as it is and with the interleaved trees'
# test `t % (2 * stride) == 0` written `(t & (2 * stride - 1)) == 0` (the same test when
# 2 * stride is a power of two, without the division), counts each kernel's executed warp
# instructions with Nsight Compute and times both builds with the program's own events. Its
# record, side/reduction-modulo.json, is copied here by hand; until it is, the sentence is left
# out and the handout names both costs without ranking them.
REDUCTION_MODULO = "reduction-modulo.json"


def reduction_modulo():
    """One sentence from side/reduction-modulo.json, or nothing when it is not there."""
    import json
    path = side_file(os.path.join("side", REDUCTION_MODULO))
    if path is None:
        return
    with open(path) as f:
        rec = json.load(f)
    inst = lambda build, kernel: rec["ncu"][build][kernel]["inst_executed"]
    ms_ = lambda build, variant: rec["time_ms"][build][variant]
    t0, t1 = ms_("control", "interleaved-shared"), ms_("mask", "interleaved-shared")
    ts = ms_("control", "sequential")
    share = 100 * (t0 - t1) / (t0 - ts) if t0 > ts else None
    larger = None if share is None else ("the division is the larger of the two costs"
                                         if share >= 50 else "the divergence is the larger of the two costs")
    line("  Which costs more was measured ({gpu}, `tools/handout_measurements.sh`): built with `(t & (2 * stride - 1)) == 0` instead, the same test without the division, the interleaved tree in shared memory executes {i1:.3g} warp instructions instead of {i0:.3g} at 2^{lg} elements (Nsight Compute's `smsp__inst_executed.sum`; the sequential tree {i2:.3g}) and takes {t1:.2f} ms instead of {t0:.2f} ms, against the sequential tree's {ts:.2f} ms: the division accounts for {share:.0f}% of the gap, so {larger}.",
         gpu=rec.get("gpu"), i0=inst("control", "reduce_interleaved_shared"),
         i1=inst("mask", "reduce_interleaved_shared"), i2=inst("control", "reduce_sequential"),
         t0=t0, t1=t1, ts=ts, share=share, larger=larger,
         lg=rec.get("ncu_n") and rec["ncu_n"].bit_length() - 1)

"""Chapter 7's blocks (docs/ch07_multi_gpu.md): scaling, zero-copy, peer copies, the ring and
NCCL, from the runs kept in docs/runs/ (h200x2/, h200x4/) and the results run."""
import os
import re

import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403


def scaling_table(*sources):
    """dot_multi's strong scaling: one row per GPU count, for each (label, source) the kernel
    median, the speed-up T(1)/T(k) and the efficiency T(1)/(k T(k)), from its gpus-k records."""
    ks = sorted({r["gpus"] for _, s in sources for r in source_records(s) if r.get("gpus")})
    columns = [("GPUs", lambda k: str(k))]
    for label, s in sources:
        def at(k, name, spec, unit="", s=s):
            if source_records(s) and pick(s, f"gpus-{k}") is None:
                return "—"          # the run had fewer GPUs
            return cell(get(s, name, f"gpus-{k}"), spec, unit)
        columns += [(f"{label}: ms", lambda k, at=at: at(k, "time_ms.median", ".4f")),
                    ("speed-up", lambda k, at=at: at(k, "speedup", ".2f", "×")),
                    ("efficiency", lambda k, at=at: at(k, "pct_peak", ".1f", "%")),
                    ("GB/s", lambda k, at=at: at(k, "gbps", ".0f"))]
    cog.outl("| " + " | ".join(h for h, _ in columns) + " |")
    cog.outl("|" + " --- |" * len(columns))
    for k in ks:
        cog.outl("| " + " | ".join(f(k) for _, f in columns) + " |")


ZERO_COPY = [("zero-copy", "the kernel reads mapped host memory"),
             ("copy-then-compute", "copy a and b to the GPU, then the kernel"),
             ("on-device", "the data already on the GPU"),
             ("portable", "portable mapped memory, every GPU reading its slice")]


def zero_copy_table(*sources):
    """zero_copy's variants (rows) for each (label, source): the median and the rate."""
    columns = [("variant", lambda v: f"`{v[0]}`: {v[1]}")]
    for label, s in sources:
        columns += [(f"{label}: ms", lambda v, s=s: cell(get(s, "time_ms.median", v[0]), ".4g")
                     if pick(s, v[0]) or v[0] != "portable" else "(one GPU: not run)"),
                    ("GB/s", lambda v, s=s: cell(get(s, "gbps", v[0]), ".1f")
                     if pick(s, v[0]) or v[0] != "portable" else "")]
    cog.outl("| " + " | ".join(h for h, _ in columns) + " |")
    cog.outl("|" + " --- |" * len(columns))
    for v in ZERO_COPY:
        cog.outl("| " + " | ".join(f(v) for _, f in columns) + " |")


def p2p_matrix(source, variant="peer"):
    """p2p_bandwidth's GB/s matrix of one mode (its record's matrix_gbs): from row, to column."""
    m = get(source, "matrix_gbs", variant)
    if m is None:
        cog.outl(f"({variant} matrix of {source}: {NOT_RUN})")
        return
    cog.outl("| from \\ to | " + " | ".join(f"GPU {j}" for j in range(len(m))) + " |")
    cog.outl("|" + " --- |" * (len(m) + 1))
    for i, row in enumerate(m):
        values = ("—" if v is None else f"{v:.1f}" for v in row)
        cog.outl(f"| GPU {i} | " + " | ".join(values) + " |")


def p2p_table(*sources):
    """p2p_bandwidth per (label, source): the mean GB/s of staged, peer and peer-both copies,
    NCCL's all-reduce bus bandwidth in the same run, and one-way peer over NCCL's bus."""
    cog.outl("| run | GPUs | staged GB/s | peer GB/s (one way) | peer-both GB/s | NCCL all-reduce "
             "bus GB/s | peer / NCCL bus |")
    cog.outl("|" + " --- |" * 7)
    for label, s in sources:
        cog.outl(f"| {label} | {cell(gpus_of(s), 'd')} | {cell(get(s, 'gbps', 'staged'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'peer'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'peer-both'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'nccl-allreduce'), '.1f')} | "
                 f"{cell(get(s, 'p2p_over_nccl_bus', 'nccl-allreduce'), '.2f')} |")


def ring_goal(source):
    """The goal ring_allreduce prints ('goal: at least N%'), as a number, or None."""
    m = re.search(r"goal: at least (\d+(?:\.\d+)?)%", source_text(source) or "")
    return float(m.group(1)) if m else None


def ring_table(*sources):
    """ring_allreduce per (label, source): NCCL's and the ring's bus bandwidth (same buffers, same
    run), the ring's percentage of NCCL's, and whether it reaches the goal the program prints."""
    cog.outl("| run | GPUs | MiB per GPU | NCCL bus GB/s | ring bus GB/s | ring / NCCL | goal |")
    cog.outl("|" + " --- |" * 7)
    for label, s in sources:
        pct, goal = get(s, "pct_peak", "ring"), ring_goal(s)
        size = get(s, "size.bytes", "ring")
        verdict = NOT_RUN if pct is None or goal is None else \
            f"≥ {goal:.0f}%: {'met' if pct >= goal else 'missed'}"
        cog.outl(f"| {label} | {cell(get(s, 'size.gpus', 'ring'), 'd')} | "
                 f"{cell(size and size / 2**20, '.0f')} | {cell(get(s, 'gbps', 'nccl'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'ring'), '.1f')} | {cell(pct, '.1f', '%')} | {verdict} |")


def nccl_sweep(*sources):
    """allreduce_nccl's sweep: one row per size, for each (label, source) the algorithm and bus
    bandwidth (GB/s) and the median time."""
    sizes = sorted({field(r, "size.bytes") for _, s in sources for r in source_records(s)
                    if r.get("variant") == "allreduce"})
    columns = [("size", lambda b: size_name(b))]
    for label, s in sources:
        def at(b, name, scale=1, s=s):
            if source_records(s) and pick(s, "allreduce", bytes=b) is None:
                return "—"          # the run's sweep stopped earlier
            v = get(s, name, "allreduce", bytes=b)
            return cell(None if v is None else v * scale, ".1f")
        columns += [(f"{label} ({gpus_of(s)} GPUs): µs",
                     lambda b, at=at: at(b, "time_ms.median", 1000)),
                    ("algbw", lambda b, at=at: at(b, "algbw_gbs")),
                    ("busbw", lambda b, at=at: at(b, "busbw_gbs"))]
    cog.outl("| " + " | ".join(h for h, _ in columns) + " |")
    cog.outl("|" + " --- |" * len(columns))
    for b in sizes:
        cog.outl("| " + " | ".join(f(b) for _, f in columns) + " |")


def device_pairs(source):
    """devices' pair lines: (from, to, peer, rank, atomic, link, read across) each."""
    pairs = []
    for line in (source_text(source) or "").splitlines():
        m = re.match(r"\s+(\d+) -> (\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if m:
            pairs.append(m.groups())
    return pairs


def topo_links(name):
    """The link names between distinct GPUs in an `nvidia-smi topo -m` matrix kept as NAME."""
    text = source_text(name) or ""
    links = []
    for line in text.splitlines():
        cells = line.split("\t")
        if re.match(r"GPU\d+$", cells[0].strip()):
            links += [c.strip() for c in cells[1:]
                      if re.match(r"\s*(NV\d+|PIX|PXB|PHB|NODE|SYS)\s*$", c)]
    return links


def sanitizer_quote(name):
    """What compute-sanitizer reported in a kept log (RESULTS/side/...): the first report of each
    kind as printed, how many there were (the excerpt's '... N more' lines count the cut ones),
    which libraries the host frames name, the test's result and the error summary."""
    path = side_file(name)
    if path is None:
        cog.outl(f"({name}: {NOT_RUN})")
        return
    with open(path) as f:
        lines = f.read().splitlines()
    kinds, frames, shown = {}, set(), []
    for line in lines:
        m = re.search(r"Program hit (\w+)", line)
        if m:
            if m.group(1) not in kinds:
                shown.append(line)
            kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
        m = re.match(r"# \.\.\. (\d+) more reports of (\w+) omitted", line)
        if m:
            kinds[m.group(2)] = kinds.get(m.group(2), 0) + int(m.group(1))
        m = re.search(r"Host Frame:.* in (\S+)$", line)
        if m:
            frames.add(m.group(1))
    ends = [line for line in lines if "ERROR SUMMARY" in line or "[  PASSED  ]" in line
            or "[  FAILED  ]" in line]
    code(shown + ["..."] + ends)
    cog.outl(", ".join(f"{n} reports of `{k}`" for k, n in kinds.items()) +
             "; the host frames name " + ", ".join(f"`{f}`" for f in sorted(frames)) + " only.")

#!/usr/bin/env python3
"""Draws a tour's results folder as pictures.

    python3 scripts/plot_results.py results/<date-time>

writes into that folder:
  speedup.png    each measurement's speedup over its CPU baseline, per chapter (log scale)
  roofline.png   each kernel's arithmetic intensity against its achieved rate, under the
                 measured memory-bandwidth and FP32 ceilings
  transfers.png  pinned, registered and pageable copy bandwidth against transfer size
  timeline.png   the streams program's timeline: one lane per stream, copies and kernels coloured

Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import json
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_results: matplotlib is missing (apt-get install python3-matplotlib, or pip install matplotlib)")

CHAPTER_COLOURS = {2: "tab:blue", 3: "tab:orange", 4: "tab:green", 5: "tab:red", 6: "tab:purple"}


def load(folder):
    with open(os.path.join(folder, "results.json")) as f:
        return json.load(f)


def device_label(data):
    d = data.get("device") or {}
    return d.get("device", "no GPU")


def plot_speedup(data, out):
    rows = [r for r in data["summary"] if r.get("speedup_vs_cpu")]
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(rows) + 1.5))
    labels = [f"ch{r['chapter']:02d} {r['program']}" + (f" [{r['variant']}]" if r.get("variant") else "")
              for r in rows]
    ax.barh(range(len(rows)), [r["speedup_vs_cpu"] for r in rows],
            color=[CHAPTER_COLOURS.get(r["chapter"], "grey") for r in rows])
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="black", lw=0.8)
    ax.set_xlabel("speedup over the CPU baseline (kernel-only GPU median vs. single-thread CPU), log scale")
    ax.set_title(f"Speedup over the CPU, per chapter — {device_label(data)}")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return True


def operations(record):
    """(operations, bytes) of one record, from the counts its program reports."""
    size = record.get("size") or {}
    program = record.get("program", "")
    flops, moved = size.get("flops"), size.get("bytes_moved")
    if flops and moved:
        return flops, moved
    if flops and size.get("width"):               # matrix multiply: each matrix read or written once
        return flops, 12.0 * size["width"] ** 2
    n = size.get("n")
    if not moved or not n:
        return None
    if program.startswith("Dot"):
        return 2.0 * n, moved                     # a multiply and an add per element
    if program.startswith("stencil"):
        return (2.0 * size.get("radius", 3) + 1) * n, moved
    return 1.0 * n, moved                         # vector add, reductions: one add per element


def plot_roofline(data, out):
    ceilings = data.get("ceilings") or {}
    dram, fp32 = ceilings.get("dram"), ceilings.get("fp32")
    points = []
    for run in data["runs"]:
        for r in run["records"]:
            median = (r.get("time_ms") or {}).get("median")
            ops = operations(r)
            if not median or not ops or r.get("program") == "ceilings" or r.get("variant") == "d2d-copy":
                continue
            flops, moved = ops
            points.append((flops / moved, flops / (median * 1e6), run["chapter"],
                           f"{r['program']} {r.get('variant', '')}".strip()))
    if not points or not dram or not fp32:
        return False
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [10 ** (k / 20) for k in range(-60, 81)]
    ax.plot(xs, [min(x * dram, fp32) for x in xs], color="black", lw=1.5,
            label=f"measured ceilings: {dram:.0f} GB/s, {fp32 / 1e3:.1f} TFLOP/s FP32 (cuBLAS)")
    for ai, rate, chapter, label in points:
        ax.scatter(ai, rate, color=CHAPTER_COLOURS.get(chapter, "grey"), s=30, zorder=3)
        ax.annotate(label, (ai, rate), fontsize=7, xytext=(4, 2), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (operations per byte of device memory traffic)")
    ax.set_ylabel("achieved rate (G operations/s)")
    ax.set_title(f"Roofline — {device_label(data)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return True


def plot_transfers(data, out):
    series = {}
    for run in data["runs"]:
        for r in run["records"]:
            if r.get("program") != "pinned_vs_pageable" or r.get("gbps") is None:
                continue
            key = (r.get("memory", "?"), r.get("direction", "?"))
            series.setdefault(key, []).append(((r.get("size") or {}).get("bytes"), r["gbps"]))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(9, 5.5))
    styles = {"h2d": "-", "d2h": "--"}
    colours = {"pageable": "tab:red", "pinned": "tab:blue", "registered": "tab:green"}
    for (memory, direction), pts in sorted(series.items()):
        pts = sorted(p for p in pts if p[0])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], styles.get(direction, ":"), marker="o", ms=3,
                color=colours.get(memory, "grey"), label=f"{memory}, {direction}")
    ceilings = data.get("ceilings") or {}
    if ceilings.get("h2d"):
        ax.axhline(ceilings["h2d"], color="grey", lw=0.8, ls=":", label=f"pinned ceiling {ceilings['h2d']:.1f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("transfer size (bytes)")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_title(f"Host<->device copies: pinned, registered, pageable — {device_label(data)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return True


def plot_timeline(data, out):
    timelines = [r for run in data["runs"] for r in run["records"]
                 if r.get("variant") == "timeline" and r.get("segments")]
    if not timelines:
        return False
    record = timelines[0]
    segments = record["segments"]
    colours = {"h2d": "tab:blue", "kernel": "tab:green", "d2h": "tab:orange"}
    streams = sorted({s["stream"] for s in segments})
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.6 * len(streams)))
    for s in segments:
        lane = streams.index(s["stream"])
        # Queued: the stream reached the operation, but its engine was still busy.
        running_from = min(max(s.get("run_start_ms", s["start_ms"]), s["start_ms"]), s["end_ms"])
        if running_from > s["start_ms"]:
            ax.broken_barh([(s["start_ms"], running_from - s["start_ms"])], (lane - 0.12, 0.24),
                           facecolors="lightgrey", edgecolor="none")
        ax.broken_barh([(running_from, s["end_ms"] - running_from)], (lane - 0.35, 0.7),
                       facecolors=colours.get(s["op"], "grey"), edgecolor="white", linewidth=0.5)
    ax.set_yticks(range(len(streams)), [f"stream {s}" for s in streams])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in list(colours.values()) + ["lightgrey"]]
    ax.legend(handles, ["copy host→device", "kernel", "copy device→host", "queued (engine busy)"],
              loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=4, fontsize=8)
    mode = record.get("mode", "")
    ideal = record.get("ideal_ms")
    ax.set_title(f"Streams timeline ({mode}" + (f"; ideal {ideal:.2f} ms" if ideal else "") +
                 f") — {device_label(data)}")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    folder = sys.argv[1]
    if not os.path.exists(os.path.join(folder, "results.json")):
        print(f"plot_results: no results.json in {folder}", file=sys.stderr)
        return 2
    data = load(folder)
    for name, plot in (("speedup.png", plot_speedup), ("roofline.png", plot_roofline),
                       ("transfers.png", plot_transfers), ("timeline.png", plot_timeline)):
        path = os.path.join(folder, name)
        print(f"{path}" if plot(data, path) else f"{name}: nothing to draw (no such measurements in this run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

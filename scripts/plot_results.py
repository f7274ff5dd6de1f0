#!/usr/bin/env python3
"""Draws a tour's results folder as pictures.

    python3 scripts/plot_results.py results/<date-time>

writes into that folder:
  speedup.png    each measurement's speedup over its CPU baseline, coloured by chapter (log
                 scale); a program run twice is named with its arguments
  roofline.png   each kernel's arithmetic intensity against its achieved rate, under the
                 measured memory-bandwidth and FP32 ceilings (and the Tensor Core ones, TF32
                 and BF16, when the run measured them): numbered points (placed so that no two
                 numbers overlap) with the key beside the plot, coloured by chapter
  transfers.png  pinned, registered and pageable copy bandwidth against transfer size
  timeline.png   the streams program's timeline: one lane per stream, copies and kernels coloured

Needs matplotlib (scripts/setup.sh examples puts it into .venv/).
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

CHAPTER_COLOURS = {2: "tab:blue", 3: "tab:orange", 4: "tab:green", 5: "tab:red", 6: "tab:purple",
                   7: "tab:brown", 8: "tab:pink"}


def chapter_colour(chapter):
    return CHAPTER_COLOURS.get(chapter, "tab:grey")


def load(folder):
    with open(os.path.join(folder, "results.json")) as f:
        return json.load(f)


def device_label(data):
    d = data.get("device") or {}
    return d.get("device", "no GPU")


def run_args(entry):
    """A run's arguments as typed (a results folder in a path dropped), or "" for the defaults."""
    return " ".join(os.path.basename(a) if os.sep in a else a for a in entry.get("args", []))


def labelled_rows(data):
    """The summary rows, each with a name no other row has: program [variant], and the run's
    arguments when the same program ran more than once (VA-GPU-NN and VA-GPU-NN --blocks auto)."""
    runs = data.get("runs", [])
    rows, taken = [], set()
    for row in data.get("summary", []):
        name = row["program"] + (f" [{row['variant']}]" if row.get("variant") else "")
        for i, entry in enumerate(runs):
            if entry["program"] == row["program"] and entry["teaches"] == row["teaches"]:
                if run_args(entry):
                    name += f" ({run_args(entry)})"
                break
        base, k = name, 2
        while name in taken:              # still the same: number the repeats
            name, k = f"{base} #{k}", k + 1
        taken.add(name)
        rows.append(dict(row, label=f"ch{row['chapter']:02d} {name}"))
    return rows


def chapter_legend(ax, chapters, **kw):
    handles = [plt.Line2D([], [], marker="o", ls="", color=chapter_colour(c)) for c in chapters]
    return ax.legend(handles, [f"chapter {c}" for c in chapters], **kw)


def plot_speedup(data):
    rows = [r for r in labelled_rows(data) if r.get("speedup_vs_cpu")]
    if len(rows) < 2:  # one bar (no GPU ran: MM-CPU alone) compares nothing
        return None
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(rows) + 1.8))
    ax.barh(range(len(rows)), [r["speedup_vs_cpu"] for r in rows],
            color=[chapter_colour(r["chapter"]) for r in rows])
    ax.set_yticks(range(len(rows)), [r["label"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="black", lw=0.8)
    ax.set_xlabel("speedup over the CPU baseline (kernel-only GPU median vs. single-thread CPU), log scale")
    ax.set_title(f"Speedup over the CPU, per chapter — {device_label(data)}")
    chapter_legend(ax, sorted({r["chapter"] for r in rows}), loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def operations(record):
    """(operations, bytes) of one record, from the counts its program reports."""
    size = record.get("size") or {}
    program = record.get("program", "")
    flops, moved = size.get("flops"), size.get("bytes_moved")
    if flops and moved:
        return flops, moved
    if flops and size.get("width"):               # matrix multiply: each matrix read or written once
        inputs = 2 if size.get("precision") == "bf16" else 4      # bytes per element of M and N
        return flops, (2.0 * inputs + 4) * size["width"] ** 2
    n = size.get("n")
    if not moved or not n:
        return None
    if program.startswith("Dot"):
        return 2.0 * n, moved                     # a multiply and an add per element
    if program.startswith("stencil"):
        return (2.0 * size.get("radius", 3) + 1) * n, moved
    return 1.0 * n, moved                         # vector add, reductions: one add per element


def roofline_points(data):
    """(intensity, rate, chapter, label) of every kernel record, labels unique."""
    points, seen = [], {}
    for run in data["runs"]:
        for r in run["records"]:
            median = (r.get("time_ms") or {}).get("median")
            ops = operations(r)
            if not median or not ops or r.get("program") == "ceilings" or r.get("variant") == "d2d-copy":
                continue
            # MM-GPU-WGMMA: its first and last steps only, and not the cuBLAS it compares with
            # in the same run (the Tensor Core roofs are cuBLAS already).
            if r.get("variant", "").startswith(("cublas-", "step2-", "step3-")):
                continue
            flops, moved = ops
            label = f"{r['program']} {r.get('variant') or ''}".strip()
            size = r.get("size") or {}
            if size.get("width"):
                label += f", W {size['width']}"
            if label in seen:
                seen[label] += 1
                label += f" ({run_args(run) or 'defaults'})"
            else:
                seen[label] = 1
            points.append((flops / moved, flops / (median * 1e6), run["chapter"], label))
    return points


def overlaps(a, b):
    return not (a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0)


def inside(a, box):
    return a.x0 >= box.x0 and a.x1 <= box.x1 and a.y0 >= box.y0 and a.y1 <= box.y1


# Offsets (points) tried in turn for a point's number: right, left, above, below, then farther.
OFFSETS = [(4, 3), (4, -10), (-11, 3), (-11, -10), (-3, 8), (-3, -15), (10, 10), (10, -17),
           (-18, 10), (-18, -17), (16, -4), (-24, -4), (4, 18), (4, -24), (-14, 20), (-14, -27)]


def place_numbers(fig, ax, points, sizes=7):
    """Numbers 1..n beside the points, each where it overlaps no other number and no point and
    stays inside the axes; the key to the numbers goes beside the plot."""
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    placed = []
    dots = [ax.transData.transform((x, y)) for x, y, _, _ in points]
    dot_boxes = [matplotlib.transforms.Bbox([[u - 3, v - 3], [u + 3, v + 3]]) for u, v in dots]
    texts = []
    for i, (x, y, chapter, _) in enumerate(points, 1):
        text = None
        for dx, dy in OFFSETS:
            if text is not None:
                text.remove()
            text = ax.annotate(str(i), (x, y), xytext=(dx, dy), textcoords="offset points",
                               fontsize=sizes, color=chapter_colour(chapter), fontweight="bold")
            extent = text.get_window_extent(renderer)
            if inside(extent, box) and not any(overlaps(extent, p) for p in placed) and \
                    not any(overlaps(extent, d) for d in dot_boxes):
                break
        placed.append(text.get_window_extent(renderer))
        texts.append(text)
    return texts


# The Tensor Core roofs (results.json "ceilings": cuBLAS GEMM with TF32 or BF16 inputs), drawn
# dashed above the FP32 one: the Tensor Core points are measured against them.
TENSOR_ROOFS = [("tf32", "TF32 Tensor Cores", "tab:olive", "--"),
                ("bf16", "BF16 Tensor Cores", "tab:cyan", "-.")]


def plot_roofline(data):
    ceilings = data.get("ceilings") or {}
    dram, fp32 = ceilings.get("dram"), ceilings.get("fp32")
    points = roofline_points(data)
    if not points or not dram or not fp32:
        return None
    points.sort(key=lambda p: (p[2], p[0], p[1]))
    fig = plt.figure(figsize=(13, 7))
    ax = fig.add_axes([0.07, 0.09, 0.55, 0.83])
    xs = [10 ** (k / 20) for k in range(-60, 81)]
    ax.plot(xs, [min(x * dram, fp32) for x in xs], color="black", lw=1.5)
    roofs = [(name, ceilings[key], colour, style) for key, name, colour, style in TENSOR_ROOFS
             if ceilings.get(key)]
    for name, peak, colour, style in roofs:
        ax.plot(xs, [min(x * dram, peak) for x in xs], color=colour, lw=1.3, ls=style)
    for ai, rate, chapter, label in points:
        ax.scatter(ai, rate, color=chapter_colour(chapter), s=24, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo = min(p[1] for p in points)
    top = max([fp32] + [peak for _, peak, _, _ in roofs] + [p[1] for p in points])
    ax.set_ylim(lo / 3, top * 3)
    ax.set_xlabel("arithmetic intensity (operations per byte of device memory traffic)")
    ax.set_ylabel("achieved rate (G operations/s)")
    ax.set_title(f"Roofline — {device_label(data)}")
    ax.grid(True, which="both", alpha=0.3)
    chapters = sorted({p[2] for p in points})
    handles = [plt.Line2D([], [], color="black", lw=1.5)] + \
        [plt.Line2D([], [], color=colour, lw=1.3, ls=style) for _, _, colour, style in roofs] + \
        [plt.Line2D([], [], marker="o", ls="", color=chapter_colour(c)) for c in chapters]
    ax.legend(handles, [f"measured ceilings: {dram:.0f} GB/s, {fp32 / 1e3:.1f} TFLOP/s FP32"] +
              [f"{name}: {peak / 1e3:.0f} TFLOP/s (cuBLAS)" for name, peak, _, _ in roofs] +
              [f"chapter {c}" for c in chapters], loc="lower right", fontsize=8)
    place_numbers(fig, ax, points)
    key = "\n".join(f"{i:2d}  {label}" for i, (_, _, _, label) in enumerate(points, 1))
    fig.text(0.64, 0.92, "key", fontsize=9, fontweight="bold", va="top")
    fig.text(0.64, 0.89, key, fontsize=7, va="top", family="monospace")
    return fig


def plot_transfers(data):
    series = {}
    for run in data["runs"]:
        for r in run["records"]:
            if r.get("program") != "pinned_vs_pageable" or r.get("gbps") is None:
                continue
            key = (r.get("memory", "?"), r.get("direction", "?"))
            series.setdefault(key, []).append(((r.get("size") or {}).get("bytes"), r["gbps"]))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(9, 5.5))
    # Pinned and registered memory reach the same rate, so their curves coincide: pinned is drawn
    # last (on top) with a line, registered under it with large open markers, so both show.
    styles = {"pageable": dict(color="tab:red", marker="s", ms=4, lw=1.2, zorder=2),
              "registered": dict(color="tab:green", marker="o", ms=8, lw=0.8, mfc="none",
                                 mew=1.3, zorder=3),
              "pinned": dict(color="tab:blue", marker=".", ms=5, lw=1.4, zorder=4)}
    order = {"pageable": 0, "registered": 1, "pinned": 2}
    for (memory, direction), pts in sorted(series.items(), key=lambda kv: (order.get(kv[0][0], 3), kv[0][1])):
        pts = sorted(p for p in pts if p[0])
        style = dict(styles.get(memory, dict(color="grey", marker="x")))
        style["ls"] = ("-" if direction == "h2d" else "--") if memory != "registered" else \
            (":" if direction == "h2d" else "-.")
        if direction != "h2d" and memory == "registered":
            style["marker"] = "D"
            style["ms"] = 6
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{memory}, {direction}", **style)
    ceilings = data.get("ceilings") or {}
    if ceilings.get("h2d"):
        ax.axhline(ceilings["h2d"], color="grey", lw=0.8, ls=":", zorder=1,
                   label=f"pinned ceiling {ceilings['h2d']:.1f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("transfer size (bytes)")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_title(f"Host<->device copies: pinned, registered, pageable — {device_label(data)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def plot_timeline(data):
    timelines = [r for run in data["runs"] for r in run["records"]
                 if r.get("variant") == "timeline" and r.get("segments")]
    if not timelines:
        return None
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
    return fig


# Each plot: the file it is saved as, and the function that draws it (a figure, or None when the
# run has nothing for it). tests/docs/test_plots.py draws every one.
PLOTS = [("speedup.png", plot_speedup), ("roofline.png", plot_roofline),
         ("transfers.png", plot_transfers), ("timeline.png", plot_timeline)]


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    folder = sys.argv[1]
    if not os.path.exists(os.path.join(folder, "results.json")):
        print(f"plot_results: no results.json in {folder}", file=sys.stderr)
        return 2
    data = load(folder)
    for name, plot in PLOTS:
        path = os.path.join(folder, name)
        fig = plot(data)
        if fig is None:
            print(f"{name}: nothing to draw (no such measurements in this run)")
            continue
        fig.savefig(path, dpi=120)
        plt.close(fig)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

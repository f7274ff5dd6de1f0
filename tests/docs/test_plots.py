#!/usr/bin/env python3
"""Draws every plot of scripts/plot_results.py from the committed results run (no GPU needed)
and checks that a student can read it: every label (tick labels, point numbers, the key, the
legend) is unique where it names something, and inside the figure; the roofline's point numbers
overlap neither each other nor leave the axes; the pinned curves are drawn above the others.

    python3 tests/docs/test_plots.py [RESULTS_DIR]     (default docs/runs/h200)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from venv_python import ROOT, ensure  # noqa: E402

ensure(["matplotlib"], "the plots")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import matplotlib  # noqa: E402
matplotlib.use("Agg")
import plot_results  # noqa: E402

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def inside(extent, box, slack=1.0):
    return (extent.x0 >= box.x0 - slack and extent.x1 <= box.x1 + slack and
            extent.y0 >= box.y0 - slack and extent.y1 <= box.y1 + slack)


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "runs", "h200")
    data = plot_results.load(folder)
    drawn = 0
    with tempfile.TemporaryDirectory() as out:
        for name, plot in plot_results.PLOTS:
            fig = plot(data)
            if fig is None:
                failures.append(f"{name}: nothing drawn from {folder}")
                continue
            drawn += 1
            fig.savefig(os.path.join(out, name), dpi=120)   # lays everything out
            renderer = fig.canvas.get_renderer()
            figure_box = fig.bbox
            for ax in fig.axes:
                ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
                if name == "speedup.png":
                    check(len(ticks) == len(set(ticks)),
                          f"{name}: bar names repeat: {sorted(t for t in ticks if ticks.count(t) > 1)}")
                    check(len(ticks) == len(ax.patches), f"{name}: a bar without its own name")
                for axis in (ax.xaxis, ax.yaxis):
                    lo, hi = sorted(axis.get_view_interval())
                    for tick in axis.get_major_ticks():   # the ones drawn: inside the limits
                        t = tick.label1
                        if lo <= tick.get_loc() <= hi and t.get_text() and t.get_visible():
                            check(inside(t.get_window_extent(renderer), figure_box),
                                  f"{name}: tick label '{t.get_text()}' outside the figure")
                legend = ax.get_legend()
                if legend is not None:
                    entries = [t.get_text() for t in legend.get_texts()]
                    check(len(entries) == len(set(entries)), f"{name}: legend entries repeat")
                    check(inside(legend.get_window_extent(renderer), figure_box),
                          f"{name}: the legend leaves the figure")
                box = ax.get_window_extent(renderer)
                numbers = [t for t in ax.texts if t.get_text().isdigit()]
                if name == "roofline.png":
                    check(len(numbers) > 0, f"{name}: no numbered points")
                    texts = [t.get_text() for t in numbers]
                    check(len(texts) == len(set(texts)), f"{name}: point numbers repeat")
                    extents = [t.get_window_extent(renderer) for t in numbers]
                    for t, e in zip(numbers, extents):
                        check(inside(e, box), f"{name}: point {t.get_text()} outside the axes")
                    for i in range(len(extents)):
                        for j in range(i + 1, len(extents)):
                            a, b = extents[i], extents[j]
                            if not (a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0):
                                failures.append(f"{name}: points {texts[i]} and {texts[j]} overlap")
                if name == "transfers.png":
                    z = {line.get_label(): line.get_zorder() for line in ax.get_lines()}
                    pinned = [v for k, v in z.items() if k.startswith("pinned,")]
                    others = [v for k, v in z.items() if k.startswith(("registered", "pageable"))]
                    check(pinned and others and min(pinned) > max(others),
                          f"{name}: the pinned curves are not drawn on top ({z})")
            for t in fig.texts:
                check(inside(t.get_window_extent(renderer), figure_box),
                      f"{name}: text '{t.get_text()[:30]}...' outside the figure")
            if name == "roofline.png":
                key = "\n".join(t.get_text() for t in fig.texts)
                labels = [line.split(None, 1)[1] for line in key.splitlines()[1:] if line.strip()]
                check(len(labels) == len(set(labels)), f"{name}: key entries repeat")
    for f in failures:
        print("FAIL:", f)
    print(f"{drawn} plots drawn from {folder}; {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

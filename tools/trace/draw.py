"""Pictures from traces (tracelib.load's rows): matplotlib figures, one function per kind.

    index_map     the elements of one array, each coloured and labelled by the thread that
                  wrote it; one panel per pass of the loop (a single panel, with the pass in
                  each label, when there are more than 4)
    pass_map      a long array as a raster, coloured by the pass that wrote each element: one
                  panel per trace, side by side
    tree_steps    a shared-memory reduction: one row per step, the entries each warp writes and
                  reads; busy threads, busy warps and bank conflicts per step
    warp_sectors  one warp's request: which 32-byte sectors its 32 lanes fall into
    tile_phases   the elements of M and N one block copies into shared memory in each phase
    owner_map     a matrix's elements coloured by the thread of one block that wrote them, a
                  few threads picked out
    lane_steps    one warp: the element each lane reads at each step of its loop
Each returns the figure; the caller saves it.
"""
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import tracelib  # noqa: E402

GREY = "#d9d9d9"
PALETTE = plt.get_cmap("tab20").colors + plt.get_cmap("tab20b").colors


def _thread_colour(global_thread):
    return PALETTE[global_thread % len(PALETTE)]


def _writes(rows, array):
    return [r for r in rows if r["array"] == array and r["rw"] == "W"]


def _threads_per_block(rows):
    return max(r["thread_x"] for r in rows) + 1


def index_map(traces, array, columns, titles):
    """traces: [(name, rows)]; draws the first."""
    name, rows = traces[0]
    writes = _writes(rows, array)
    per_block = _threads_per_block(rows)
    n = max(r["index"] for r in writes) + 1
    passes = sorted({r["step"] for r in writes})
    one_panel = len(passes) > 4
    panels = [None] if one_panel else passes
    rows_of_cells = -(-n // columns)
    fig, axes = plt.subplots(len(panels), 1, squeeze=False,
                             figsize=(columns * 0.78 + 0.6, len(panels) * (rows_of_cells * 0.62 + 0.55) + 0.5))
    blocks = len({r["block_x"] for r in writes})
    for ax, p in zip(axes[:, 0], panels):
        ax.set_xlim(0, columns)
        ax.set_ylim(rows_of_cells, 0)
        ax.set_aspect("equal")
        ax.axis("off")
        done = {}
        for r in writes:
            if p is None or r["step"] <= p:
                done[r["index"]] = r
        for i in range(n):
            x, y = i % columns, i // columns
            r = done.get(i)
            now = r is not None and (p is None or r["step"] == p)
            colour = _thread_colour(r["block_x"] * per_block + r["thread_x"]) if now else (
                GREY if r is not None else "white")
            ax.add_patch(Rectangle((x + 0.03, y + 0.03), 0.94, 0.94, facecolor=colour,
                                   edgecolor="black", linewidth=0.6))
            ax.text(x + 0.5, y + 0.2, f"{array}[{i}]", ha="center", va="center", fontsize=6.5)
            if r is not None:
                label = (f"block {r['block_x']}\nthread {r['thread_x']}" if blocks > 1
                         else f"thread {r['thread_x']}")
                if p is None:
                    label += f"\npass {r['step']}"
                ax.text(x + 0.5, y + 0.62, label, ha="center", va="center",
                        fontsize=6 if p is None else 6.5, color="black" if now else "#777777")
        if p is not None:
            ax.set_title(f"pass {p}: the coloured elements are written now, grey ones earlier",
                         fontsize=9, loc="left")
    fig.suptitle(titles[0], fontsize=10, x=0.01, ha="left")
    fig.tight_layout()
    return fig


def pass_map(traces, array, columns, titles):
    """Each trace's ARRAY as a raster of COLUMNS elements a row, coloured by pass."""
    fig, axes = plt.subplots(1, len(traces), figsize=(5.2 * len(traces), 5.0), squeeze=False)
    most = max(max(r["step"] for r in _writes(rows, array)) for _, rows in traces) + 1
    cmap = ListedColormap([plt.get_cmap("viridis")(k / max(most - 1, 1)) for k in range(most)])
    for ax, (name, rows), title in zip(axes[0], traces, titles):
        writes = _writes(rows, array)
        n = max(r["index"] for r in writes) + 1
        image = [[float("nan")] * columns for _ in range(-(-n // columns))]
        for r in writes:
            image[r["index"] // columns][r["index"] % columns] = r["step"]
        shown = ax.imshow(image, cmap=cmap, vmin=-0.5, vmax=most - 0.5, interpolation="nearest",
                          aspect="auto")
        threads = len({(r["block_x"], r["thread_x"]) for r in writes})
        per_thread = defaultdict(int)
        for r in writes:
            per_thread[(r["block_x"], r["thread_x"])] += 1
        passes = max(r["step"] for r in writes) + 1
        ax.set_title(f"{title}\n{threads} threads wrote, {passes} pass{'es' if passes > 1 else ''}"
                     f" each", fontsize=9)
        ax.set_xlabel(f"element index mod {columns}")
        ax.set_ylabel(f"element index / {columns}")
    bar = fig.colorbar(shown, ax=list(axes[0]), ticks=range(most), fraction=0.03)
    bar.set_label("the pass that wrote the element")
    return fig


def tree_steps(traces, array, titles):
    """One panel per trace: rows = steps, columns = the shared array's entries (block 0)."""
    fig, axes = plt.subplots(len(traces), 1, figsize=(12, 3.4 * len(traces)), squeeze=False)
    for ax, (name, rows), title in zip(axes[:, 0], traces, titles):
        rows = [r for r in rows if r["array"] == array and r["block_x"] == 0 and r["step"] > 0]
        entries = max(r["index"] for r in rows) + 1
        steps = sorted({r["step"] for r in rows})
        ways = tracelib.ways_per_step(rows, array)
        ax.set_xlim(-0.5, entries - 0.5)
        ax.set_ylim(len(steps) - 0.5, -0.5)
        for y, s in enumerate(steps):
            at = [r for r in rows if r["step"] == s]
            for r in at:
                base = PALETTE[2 * (r["warp"] % 10)]
                light = PALETTE[2 * (r["warp"] % 10) + 1]
                if r["rw"] == "W":
                    ax.add_patch(Rectangle((r["index"] - 0.5, y - 0.42), 1, 0.84,
                                           facecolor=base, edgecolor="none"))
                elif not any(w["rw"] == "W" and w["index"] == r["index"] for w in at):
                    ax.add_patch(Rectangle((r["index"] - 0.5, y - 0.42), 1, 0.84,
                                           facecolor=light, edgecolor="none", hatch="////"))
            threads = {r["thread_x"] for r in at if r["rw"] == "W"}
            warps = {r["warp"] for r in at if r["rw"] == "W"}
            ax.text(entries + 1, y, f"{len(threads)} threads in {len(warps)} warp"
                    f"{'s' if len(warps) > 1 else ''}; banks: {ways.get(s, 0)}-way",
                    va="center", fontsize=8, clip_on=False)
        for w in range(0, entries + 1, 32):
            ax.axvline(w - 0.5, color="black", linewidth=0.8)
        ax.set_yticks(range(len(steps)), [f"step {s}" for s in steps], fontsize=8)
        ax.set_xlabel(f"{array}[i]: the colour is the warp of the thread that adds into the "
                      "entry (solid) and reads it (hatched); white: nobody", fontsize=8)
        ax.set_title(title, fontsize=9, loc="left")
    fig.tight_layout(rect=(0, 0, 0.83, 1))
    return fig


def warp_sectors(traces, arrays, titles):
    """For each trace and array: warp 0 of block (0, 0) at step 0: lanes to sectors."""
    fig, axes = plt.subplots(len(traces), len(arrays), figsize=(6.2 * len(arrays), 2.6 * len(traces)),
                             squeeze=False)
    for row, ((name, rows), title) in enumerate(zip(traces, titles)):
        for col, array in enumerate(arrays):
            ax = axes[row][col]
            req = [r for r in rows if r["array"] == array and r["block_x"] == 0 and
                   r["block_y"] == 0 and r["warp"] == 0 and r["step"] == 0 and r["rw"] == "R"]
            secs = tracelib.sectors(req)
            place = {s: k for k, s in enumerate(secs)}
            width = 31.0
            for k, s in enumerate(secs):
                x = k * width / max(len(secs) - 1, 1) if len(secs) > 1 else width / 2
                ax.add_patch(Rectangle((x - 0.45, -0.15), 0.9, 0.3, facecolor="#fdae61",
                                       edgecolor="black", linewidth=0.5))
            for r in req:
                s = r["byte"] // tracelib.SECTOR
                x = place[s] * width / max(len(secs) - 1, 1) if len(secs) > 1 else width / 2
                ax.plot([r["lane"], x], [1, 0.15], color="#2b83ba", linewidth=0.7)
                ax.plot([r["lane"]], [1], "o", color="#2b83ba", markersize=3)
            ax.set_xlim(-1, 32)
            ax.set_ylim(-0.5, 1.35)
            ax.set_yticks([0, 1], ["sectors", "lanes"])
            ax.set_xticks([0, 8, 16, 24, 31])
            ax.set_title(f"{title}: {array}, warp 0 at k = 0: 32 lanes, {len(secs)} "
                         f"sector{'s' if len(secs) > 1 else ''} of 32 bytes", fontsize=9)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def tile_phases(traces, block, width, titles):
    """One column per phase: the elements of M and of N that BLOCK reads into Ms and Ns."""
    name, rows = traces[0]
    mine = [r for r in rows if (r["block_x"], r["block_y"]) == tuple(block)]
    phases = sorted({r["step"] for r in mine if r["array"] in ("M", "N")})
    fig, axes = plt.subplots(2, len(phases) + 1, figsize=(3.3 * (len(phases) + 1), 6.6),
                             squeeze=False)
    p_cells = {r["index"] for r in mine if r["array"] == "P"}
    for col in range(len(phases) + 1):
        for row, array in enumerate(("M", "N")):
            ax = axes[row][col]
            image = [[1.0] * width for _ in range(width)]
            if col < len(phases):
                for r in mine:
                    if r["array"] == array and r["step"] == phases[col]:
                        image[r["index"] // width][r["index"] % width] = 0.35 if array == "M" else 0.7
                ax.set_title(f"phase {phases[col]}: {array} read into {array}s", fontsize=9)
            else:
                if row == 0:
                    for i in p_cells:
                        image[i // width][i % width] = 0.1
                    ax.set_title(f"P: the elements block {tuple(block)} writes", fontsize=9)
                else:
                    ax.axis("off")
                    continue
            ax.imshow(image, cmap="tab20c", vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks(range(0, width, 8))
            ax.set_yticks(range(0, width, 8))
            ax.tick_params(labelsize=7)
            ax.set_xlabel("column", fontsize=8)
            ax.set_ylabel("row", fontsize=8)
    fig.suptitle(titles[0], fontsize=10)
    fig.tight_layout()
    return fig


def lane_steps(traces, array, titles):
    """One panel per trace: warp 0 of block (0, 0); rows = lanes, columns = steps; each cell
    the element the lane reads, coloured by it."""
    fig, axes = plt.subplots(1, len(traces), figsize=(4.6 * len(traces), 6.4), squeeze=False)
    for ax, (name, rows), title in zip(axes[0], traces, titles):
        req = [r for r in rows if r["array"] == array and r["block_x"] == 0 and
               r["block_y"] == 0 and r["warp"] == 0 and r["rw"] == "R"]
        steps = sorted({r["step"] for r in req})
        for r in req:
            x, y = steps.index(r["step"]), r["lane"]
            ax.add_patch(Rectangle((x, y), 1, 1, facecolor=PALETTE[2 * (r["index"] % 10)],
                                   edgecolor="white", linewidth=0.5))
            ax.text(x + 0.5, y + 0.5, str(r["index"]), ha="center", va="center", fontsize=6.5)
        ax.set_xlim(0, len(steps))
        ax.set_ylim(32, 0)
        ax.set_xticks([k + 0.5 for k in range(len(steps))], [str(s) for s in steps], fontsize=7)
        ax.set_yticks([l + 0.5 for l in range(0, 32, 4)], [str(l) for l in range(0, 32, 4)],
                      fontsize=7)
        ax.set_xlabel("step k of the loop over the spheres", fontsize=8)
        ax.set_ylabel("lane of warp 0", fontsize=8)
        per_step = sorted({len({r["index"] for r in req if r["step"] == s}) for s in steps})
        ax.set_title(f"{title}\n{'/'.join(map(str, per_step))} different "
                     f"{array}[i] per warp step", fontsize=9)
    fig.tight_layout()
    return fig


def owner_map(traces, array, width, block, threads, titles):
    """The part of ARRAY (WIDTH columns) that BLOCK writes; every thread a pale colour of its
    own, THREADS in strong colours with their names."""
    name, rows = traces[0]
    mine = [r for r in rows if r["array"] == array and r["rw"] == "W" and
            (r["block_x"], r["block_y"]) == tuple(block)]
    ys = [r["index"] // width for r in mine]
    xs = [r["index"] % width for r in mine]
    y0, x0 = min(ys), min(xs)
    h, w = max(ys) - y0 + 1, max(xs) - x0 + 1
    fig, ax = plt.subplots(figsize=(11, 11 * h / w + 1.2))
    pale = plt.get_cmap("Pastel1").colors + plt.get_cmap("Pastel2").colors
    strong = ["#d7191c", "#2c7bb6", "#1a9641", "#7b3294"]
    image = [[(1, 1, 1)] * w for _ in range(h)]
    for r in mine:
        t = r["thread_x"]
        colour = strong[threads.index(t)] if t in threads else pale[t % len(pale)]
        image[r["index"] // width - y0][r["index"] % width - x0] = matplotlib.colors.to_rgb(colour)
    ax.imshow(image, interpolation="nearest", extent=(x0 - 0.5, x0 + w - 0.5, y0 + h - 0.5, y0 - 0.5))
    for k, t in enumerate(threads):
        ax.plot([], [], "s", color=strong[k], label=f"thread {t}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.set_xlabel(f"column of {array}", fontsize=8)
    ax.set_ylabel(f"row of {array}", fontsize=8)
    ax.set_title(titles[0], fontsize=9, loc="left")
    fig.tight_layout()
    return fig


KINDS = {"owner_map": owner_map, "lane_steps": lane_steps, "index_map": index_map, "pass_map": pass_map, "tree_steps": tree_steps,
         "warp_sectors": warp_sectors, "tile_phases": tile_phases}

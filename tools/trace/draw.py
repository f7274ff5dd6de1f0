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
    shuffle_rounds  one warp's shuffles: at each round, whose value each lane receives
    halo          a block's shared array: which element of the input each slot holds, who
                  loaded it, and which slots one thread's stencil reads
    lane_steps    one warp: the element each lane reads at each step of its loop
    ring_steps    the ring all-reduce on K GPUs: one panel per step (rows = GPUs, columns =
                  chunks), each chunk striped with the colours of the GPUs whose inputs it now
                  sums, an arrow from the GPU each chunk was read from; one row per trace
    swizzle       a slice in shared memory as the TMA unit laid it out: rows of 128 bytes,
                  each 16-byte chunk labelled with the row and chunk of the matrix it holds;
                  one panel per trace, side by side
Each returns the figure; the caller saves it.
"""
import textwrap
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import tracelib  # noqa: E402

GREY = "#d9d9d9"
SELF = "#fdae61"  # a shuffle's lane that receives its own value
# tab20 without its two greys (grey means "written earlier" in index_map), then tab20b
PALETTE = (tuple(c for k, c in enumerate(plt.get_cmap("tab20").colors) if k not in (14, 15))
           + plt.get_cmap("tab20b").colors)


def _thread_colour(global_thread):
    return PALETTE[global_thread % len(PALETTE)]


def _writes(rows, array):
    return [r for r in rows if r["array"] == array and r["rw"] == "W"]


def _threads_per_block(rows):
    return max(r["thread_x"] for r in rows) + 1


def index_map(traces, array, columns, titles, count=None):
    """traces: [(name, rows)]; draws the first. COUNT: the array's length (default: up to
    its last element written; a bug may leave the last ones unwritten)."""
    name, rows = traces[0]
    writes = _writes(rows, array)
    per_block = _threads_per_block(rows)
    n = max([r["index"] + 1 for r in writes] + [count or 0])
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
        done, writers = {}, defaultdict(list)
        for r in writes:
            if p is None or r["step"] <= p:
                done[r["index"]] = r
                writers[r["index"]].append(r)
        for i in range(n):
            x, y = i % columns, i // columns
            r = done.get(i)
            now = r is not None and (p is None or r["step"] == p)
            colour = _thread_colour(r["block_x"] * per_block + r["thread_x"]) if now else (
                GREY if r is not None else "white")
            twice = len(writers[i]) > 1  # a bug: drawn with a red frame and every writer
            ax.add_patch(Rectangle((x + 0.03, y + 0.03), 0.94, 0.94, facecolor=colour,
                                   edgecolor="#d7191c" if twice else "black",
                                   linewidth=2.4 if twice else 0.6))
            ax.text(x + 0.5, y + 0.2, f"{array}[{i}]", ha="center", va="center", fontsize=6.5)
            if twice:
                label = f"written {len(writers[i])}x:\n" + "\n".join(
                    f"b{w['block_x']} t{w['thread_x']} p{w['step']}" for w in writers[i][:3])
                ax.text(x + 0.5, y + 0.62, label, ha="center", va="center", fontsize=5.5,
                        linespacing=0.9)
            elif r is not None:
                label = (f"block {r['block_x']}\nthread {r['thread_x']}" if blocks > 1
                         else f"thread {r['thread_x']}")
                if p is None:
                    label += f"\npass {r['step']}"
                ax.text(x + 0.5, y + 0.62, label, ha="center", va="center",
                        fontsize=6 if p is None else 6.5, color="black" if now else "#777777")
        if p is not None:
            ax.set_title(f"pass {p}: the coloured elements are written now, grey ones earlier",
                         fontsize=9, loc="left")
    readers = {(r["array"], r["index"]): (r["block_x"], r["thread_x"]) for r in rows
               if r["rw"] == "R"}
    same = all(readers.get((a, r["index"])) == (r["block_x"], r["thread_x"])
               for r in writes for a in sorted({q["array"] for q in rows if q["rw"] == "R"}))
    note = (f"Each box is one element {array}[i], named by the thread that wrote it"
            + (" (the same thread read a[i] and b[i] just before)." if same and readers else "."))
    counts = defaultdict(int)
    for r in writes:
        counts[r["index"]] += 1
    if any(c > 1 for c in counts.values()):
        note += " Red frame: written more than once (b block, t thread, p pass)."
    if any(counts[i] == 0 for i in range(n)):
        note += " White: never written."
    width = int(fig.get_size_inches()[0] * 13)  # characters of 9.5-point text a line holds
    fig.suptitle("\n".join(textwrap.wrap(titles[0], width) + textwrap.wrap(note, width)),
                 fontsize=9.5, x=0.01, ha="left")
    fig.tight_layout()
    return fig


def pass_map(traces, array, columns, titles):
    """Each trace's ARRAY, one band per pass of the grid-stride loop: a band is the whole grid,
    COLUMNS recorded elements a row, element i at the place of the thread that writes it (of a
    trace with TRACE_SAMPLE=S, a pixel stands for S elements). Where the last pass has no
    element for a thread (i >= n), its place is hatched. Each pass has its own colour, named by
    the colour bar under the panel and by labels beside the bands."""
    fig, axes = plt.subplots(1, len(traces), figsize=(6.4 * len(traces), 7.4), squeeze=False)
    for ax, (name, rows), title in zip(axes[0], traces, titles):
        writes = sorted(_writes(rows, array), key=lambda r: r["index"])
        sample = writes[1]["index"] - writes[0]["index"] if len(writes) > 1 else 1
        n = writes[-1]["index"] + sample
        first, grid = {}, None
        for r in writes:  # a thread's next element lies one grid further on
            key = (r["block_x"], r["thread_x"])
            if key in first and grid is None:
                grid = (r["index"] - first[key][0]) // (r["step"] - first[key][1])
            first.setdefault(key, (r["index"], r["step"]))
        passes = max(r["step"] for r in writes) + 1
        per_pass = (grid or n) // sample                 # recorded places in one band
        band = -(-per_pass // columns)                   # rows of one band
        cmap = plt.get_cmap("viridis", passes)
        colour = lambda p: cmap(p / (passes - 1) if passes > 1 else 0.0)[:3]
        image = [[(1, 1, 1)] * columns for _ in range(band * passes)]
        for r in writes:
            place = (r["index"] - r["step"] * (grid or n)) // sample
            image[r["step"] * band + place // columns][place % columns] = colour(r["step"])
        ax.imshow(image, interpolation="nearest", aspect="auto")
        last = n - (passes - 1) * grid if grid else n
        used = last // sample
        if used < per_pass:  # the last band's places with no element: hatched
            y0 = (passes - 1) * band
            ax.add_patch(Rectangle((used % columns - 0.5, y0 + used // columns - 0.5),
                                   columns - used % columns, 1, facecolor="white",
                                   edgecolor="#444444", hatch="///", linewidth=0))
            if used // columns + 1 < band:
                ax.add_patch(Rectangle((-0.5, y0 + used // columns + 0.5), columns,
                                       band - used // columns - 1, facecolor="white",
                                       edgecolor="#444444", hatch="///", linewidth=0))
            ax.text(columns / 2, y0 + (used // columns + band) / 2 - 0.5,
                    f"pass {passes - 1}: {grid - last:,} threads have no element (i ≥ n)",
                    ha="center", va="center", fontsize=8,
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5})
        every = 1 if passes <= 8 else 8
        for p in range(passes):
            if p % every == 0 or p == passes - 1:
                ax.text(columns + 1, p * band - 0.5, f"pass {p}", va="top", fontsize=7.5,
                        clip_on=False)
        ax.set_title(f"{title}\nthe grid: {grid:,} threads; {passes} passes, the last "
                     f"{last:,} elements" if grid else f"{title}\none pass", fontsize=9)
        for p in range(1, passes):  # the bands' edges, so that the passes can be counted
            ax.axhline(p * band - 0.5, color="white", linewidth=0.8)
        ax.set_xlabel(f"a band is one pass of the whole grid, thread 0 at its top left;\n"
                      f"a row is {columns * sample:,} threads"
                      + (f", a pixel {sample} (the trace keeps every {sample}th element)"
                         if sample > 1 else ""), fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        bar = fig.colorbar(matplotlib.cm.ScalarMappable(
            norm=matplotlib.colors.BoundaryNorm(range(passes + 1), passes), cmap=cmap),
            ax=ax, orientation="horizontal", fraction=0.045, pad=0.07)
        ticks = [p for p in range(passes) if p % every == 0 or p == passes - 1]
        bar.set_ticks([p + 0.5 for p in ticks], labels=[str(p) for p in ticks])
        bar.ax.tick_params(labelsize=7)
        bar.set_label("the pass that writes the element (its colour)", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.97, 1))
    return fig


def _worst_requests(rows, array):
    """{step: (warp, rw, {bank: sorted words})}: at each step, the shared-memory request of
    one warp that takes the most passes (the first such, writes before reads)."""
    out = {}
    for (_, warp, _, step, _, _, rw), req in sorted(
            tracelib.requests(rows, array, "shared").items(),
            key=lambda kv: (kv[0][3], kv[0][6] != "W", kv[0][1], kv[0][2])):
        words = defaultdict(set)  # bank -> the array's entries (indexes) in its words
        for r in req:
            for w in range(r["byte"] // 4, (r["byte"] + r["size"] - 1) // 4 + 1):
                words[w % tracelib.BANKS].add(r["index"] + w - r["byte"] // 4)
        ways = max(len(v) for v in words.values())
        if step not in out or ways > out[step][3]:
            out[step] = (warp, rw, {b: sorted(v) for b, v in words.items()}, ways)
    return {s: v[:3] for s, v in out.items()}


def tree_steps(traces, array, titles):
    """One row of panels per trace. Left: rows = steps, columns = the shared array's entries
    (block 0), coloured by warp. Right: the same steps by bank: for each step, the request of
    one warp that takes the most passes through shared memory, each of the 32 banks with a box
    per distinct 4-byte word the warp's lanes touch there (entry i lies in bank i % 32); two
    boxes or more in a bank, in red, is a bank conflict."""
    fig, axes = plt.subplots(len(traces), 2, figsize=(19, 3.4 * len(traces) + 0.6),
                             squeeze=False, gridspec_kw={"width_ratios": [2.1, 1]})
    for (ax, bx), (name, rows), title in zip(axes, traces, titles):
        rows = [r for r in rows if r["array"] == array and r["block_x"] == 0 and r["step"] > 0]
        entries = max(r["index"] for r in rows) + 1
        steps = sorted({r["step"] for r in rows})
        ways = tracelib.ways_per_step(rows, array)
        worst = _worst_requests(rows, array)
        ax.set_xlim(-0.5, entries - 0.5)
        ax.set_ylim(len(steps) - 0.5, -0.5)
        for y, s in enumerate(steps):
            at = [r for r in rows if r["step"] == s]
            written = {r["index"] for r in at if r["rw"] == "W"}
            for r in at:
                strong = PALETTE[2 * (r["warp"] % 10)]
                pale = PALETTE[2 * (r["warp"] % 10) + 1]
                if r["rw"] == "W" or r["index"] not in written:
                    ax.add_patch(Rectangle((r["index"] - 0.5, y - 0.42), 1, 0.84,
                                           facecolor=strong if r["rw"] == "W" else pale,
                                           edgecolor="none"))
            threads = {r["thread_x"] for r in at if r["rw"] == "W"}
            warps = {r["warp"] for r in at if r["rw"] == "W"}
            ax.text(entries + 1, y, f"{len(threads)} thread{'s' if len(threads) > 1 else ''} "
                    f"in {len(warps)} warp{'s' if len(warps) > 1 else ''}",
                    va="center", fontsize=8, clip_on=False)
            # the bank view of the same step
            warp, rw, banks = worst[s]
            way = ways.get(s, 0)
            for b, words in banks.items():
                k = len(words)
                for m in range(k):
                    h = 0.84 / k
                    bx.add_patch(Rectangle((b - 0.45, y - 0.42 + m * h), 0.9, h * 0.92,
                                           facecolor="#d7191c" if k > 1 else "#abd9e9",
                                           edgecolor="none"))
            worst_bank = min((b for b in banks if len(banks[b]) == way), default=None)
            where = ("" if way < 2 else f"; bank {worst_bank} holds "
                     + ", ".join(f"[{i}]" for i in banks[worst_bank]))
            bx.text(32.2, y, f"warp {warp}'s {'write' if rw == 'W' else 'read'}: "
                    + ("1 pass, no conflict" if way == 1 else f"{way} passes") + where,
                    va="center", fontsize=8, clip_on=False,
                    color="#d7191c" if way > 1 else "black")
        for w in range(0, entries + 1, 32):
            ax.axvline(w - 0.5, color="black", linewidth=0.8)
        ax.set_yticks(range(len(steps)), [f"step {s}" for s in steps], fontsize=8)
        ax.set_xticks(range(0, entries, 16))
        ax.tick_params(axis="x", labelsize=7)
        ax.set_title(title, fontsize=9, loc="left")
        bx.set_xlim(-0.6, 31.6)
        bx.set_ylim(len(steps) - 0.5, -0.5)
        for b in range(33):
            bx.axvline(b - 0.5, color="#e0e0e0", linewidth=0.5, zorder=0)
        bx.set_yticks(range(len(steps)), [f"step {s}" for s in steps], fontsize=8)
        bx.set_xticks(range(0, 32, 4))
        bx.tick_params(axis="x", labelsize=7)
        bx.set_title("by bank: the step's most costly request of one warp", fontsize=9,
                     loc="left")
    axes[-1, 0].set_xlabel(
        f"{array}[i]. Strong colour: the entry a thread adds into (it writes it); pale: the "
        "entry it adds from (it only reads it); white: no thread touches it.\nThe colour is "
        "the warp of the thread: blue warp 0, orange warp 1, green warp 2, red warp 3.\n"
        "Entry i lies in bank i % 32: each section between black lines is banks 0-31.",
        fontsize=8)
    axes[-1, 1].set_xlabel(
        "bank (32 banks of 4-byte words). A box: a word the warp's lanes touch in that bank;\n"
        "more than one in a bank (red): the bank serves them one after another, a pass each "
        "(the entries at right). Lanes on the same word share a pass.", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    return fig


def warp_sectors(traces, panels, titles):
    """One panel per (trace, array) of PANELS: warp 0 of block (0, 0) at step 0, its 32 lanes
    and the 32-byte sectors their addresses fall into, each sector named by its elements."""
    by_name = dict(traces)
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 2.5 * len(panels)), squeeze=False)
    for ax, (name, array), title in zip(axes[:, 0], panels, titles):
        req = [r for r in by_name[name] if r["array"] == array and r["block_x"] == 0 and
               r["block_y"] == 0 and r["warp"] == 0 and r["step"] == 0 and r["rw"] == "R"]
        secs = tracelib.sectors(req)
        width = 31.0
        spot = {s: (k * width / (len(secs) - 1) if len(secs) > 1 else width / 2)
                for k, s in enumerate(secs)}
        box = min(0.9, width / max(len(secs), 1) * 0.9 * 1.0) if len(secs) > 1 else 2.0
        for s in secs:
            inside = sorted({r["index"] for r in req if r["byte"] // tracelib.SECTOR == s})
            ax.add_patch(Rectangle((spot[s] - box / 2 if len(secs) <= 4 else spot[s] - 0.45,
                                    -0.2), box if len(secs) <= 4 else 0.9, 0.4,
                                   facecolor="#fdae61", edgecolor="black", linewidth=0.5))
            label = (f"{array}[{inside[0]}]" if len(inside) == 1
                     else f"{array}[{inside[0]}..{inside[-1]}]")
            ax.text(spot[s], -0.32, label, ha="center", va="top", fontsize=6.5,
                    rotation=90 if len(secs) > 4 else 0)
        for r in req:
            ax.plot([r["lane"], spot[r["byte"] // tracelib.SECTOR]], [1, 0.2], color="#2b83ba",
                    linewidth=0.7)
            ax.plot([r["lane"]], [1], "o", color="#2b83ba", markersize=3)
        ax.set_xlim(-1, 32)
        ax.set_ylim(-1.25 if len(secs) > 4 else -0.7, 1.3)
        ax.set_yticks([0, 1], ["sectors\n(32 bytes)", "lanes"], fontsize=8)
        ax.set_xticks(range(0, 32, 4), [f"lane {l}" for l in range(0, 32, 4)], fontsize=7)
        ax.xaxis.set_ticks_position("top")
        gap = ""
        if len(secs) > 1 and len(secs) > 4:
            gap = f", {(secs[1] - secs[0]) * tracelib.SECTOR} bytes apart"
        ax.set_title(f"{title}: 32 lanes read {len({r['index'] for r in req})} "
                     f"element{'s' if len({r['index'] for r in req}) > 1 else ''} in "
                     f"{len(secs)} sector{'s' if len(secs) > 1 else ''}{gap}",
                     fontsize=9, loc="left", pad=18)
        for side in ("bottom", "right", "left"):
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
            image = [[(0.93, 0.93, 0.93)] * width for _ in range(width)]
            if col < len(phases):
                colour = matplotlib.colors.to_rgb("#d7191c" if array == "M" else "#2c7bb6")
                for r in mine:
                    if r["array"] == array and r["step"] == phases[col]:
                        image[r["index"] // width][r["index"] % width] = colour
                ax.set_title(f"phase {phases[col]}: the block copies these {array} into "
                             f"{array}s", fontsize=9)
            else:
                if row == 0:
                    for i in p_cells:
                        image[i // width][i % width] = matplotlib.colors.to_rgb("#1a9641")
                    ax.set_title(f"P: the {len(p_cells)} elements block {tuple(block)} writes",
                                 fontsize=9)
                else:
                    ax.axis("off")
                    continue
            ax.imshow(image, interpolation="nearest")
            rows_p = sorted({i // width for i in p_cells})
            cols_p = sorted({i % width for i in p_cells})
            if array == "M" and rows_p:  # the block's rows of P need these rows of M
                ax.add_patch(Rectangle((-0.5, rows_p[0] - 0.5), width, len(rows_p),
                                       fill=False, edgecolor="black", linestyle="--"))
            if array == "N" and cols_p:  # ... and these columns of N
                ax.add_patch(Rectangle((cols_p[0] - 0.5, -0.5), len(cols_p), width,
                                       fill=False, edgecolor="black", linestyle="--"))
            ax.set_xticks(range(0, width, 8))
            ax.set_yticks(range(0, width, 8))
            ax.tick_params(labelsize=7)
            ax.set_xlabel("column", fontsize=8)
            ax.set_ylabel("row", fontsize=8)
    fig.suptitle(titles[0] + "\ndashed: the rows of M and the columns of N that the block's "
                 "tile of P needs", fontsize=9.5)
    fig.tight_layout()
    return fig


def lane_steps(traces, array, titles, global_traces=()):
    """One panel per trace: warp 0 of block (0, 0); rows = lanes, columns = steps; each cell
    the element the lane reads, coloured by it. GLOBAL_TRACES (the same runs with the array in
    global memory, one per panel, at the end of TRACES) add their sectors per warp step."""
    shown = traces[:len(traces) - len(global_traces)]
    global_of = {f"{shown[k][0]}@global": traces[len(shown) + k][1]
                 for k in range(len(global_traces))}
    fig, axes = plt.subplots(1, len(shown), figsize=(5.4 * len(shown), 6.6), squeeze=False)
    for ax, (name, rows), title in zip(axes[0], shown, titles):
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
        line = f"{' or '.join(map(str, per_step))} different {array}[i] per warp step"
        if (name + "@global") in global_of:
            grows = global_of[name + "@global"]
            greq = tracelib.requests([r for r in grows if r["block_x"] == 0 and
                                      r["block_y"] == 0 and r["warp"] == 0], array)
            secs = sorted({len(tracelib.sectors(q)) for q in greq.values()})
            line += (f"\nthe same loop in ray_noconst (spheres in global memory):\n"
                     f"{' or '.join(map(str, secs))} sectors of 32 bytes per warp step")
        ax.set_title(f"{title}\n{line}", fontsize=8.5)
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
    first = [r for r in mine if r["thread_x"] == threads[0]]
    rows_t = sorted({r["index"] // width for r in first})
    cols_t = sorted({r["index"] % width for r in first})
    ax.set_title(f"{titles[0]}\nthread {threads[0]} writes {len(first)} elements: rows "
                 f"{_runs(rows_t)} x columns {_runs(cols_t)}", fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def _runs(values):
    """[0, 1, 2, 3, 32, 33] -> '0-3 and 32-33'."""
    out, start = [], values[0]
    for a, b in zip(values, values[1:] + [None]):
        if b != a + 1:
            out.append(f"{start}-{a}" if a != start else f"{a}")
            start = b
    return " and ".join(out)


def shuffle_rounds(traces, array, block, warp, titles):
    """Rows = rounds; a line from lane j (above) to lane i (below) where lane i received lane
    j's value; in red the lines whose values end in lane 0."""
    name, rows = traces[0]
    got = {}
    for r in rows:
        if r["array"] == array and r["block_x"] == block and r["warp"] == warp:
            got[(r["step"], r["lane"])] = r["index"]
    rounds = sorted({s for s, _ in got})
    offsets = [next((j - l for (k, l), j in got.items() if k == r and j != l), None)
               for r in rounds]
    for i in range(1, len(rounds)):  # the offset grows again: a second warp_sum, drawn no more
        if offsets[i] and offsets[i - 1] and offsets[i] > offsets[i - 1]:
            rounds = rounds[:i]
            break
    fig, ax = plt.subplots(figsize=(12, 1.2 * len(rounds) + 2.0))
    needed = {0}  # the lanes whose value reaches lane 0, from the last round up
    chains = {}
    for k in reversed(rounds):
        chains[k] = {l for l in needed} | {got[(k, l)] for l in needed}
        needed = chains[k]
    for y, k in enumerate(rounds):
        offset = None
        for lane in range(32):
            j = got.get((k, lane))
            if j is None:
                continue
            if j != lane and offset is None:
                offset = j - lane
            red = lane in (chains[rounds[y + 1]] if y + 1 < len(rounds) else {0})
            colour, width, z = ("#d7191c", 1.6, 3) if red else ("#bbbbbb", 0.7, 1)
            ax.plot([lane, lane], [y, y + 1], color=colour, linewidth=width * 0.6, zorder=z,
                    linestyle=":")
            if j == lane:  # nobody sits offset places above: the lane receives its own value
                colour, width, z = SELF, 1.2, 2
            ax.annotate("", xy=(lane, y + 1), xytext=(j, y), zorder=z,
                        arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": width,
                                    "shrinkA": 3, "shrinkB": 3, "mutation_scale": 7,
                                    "connectionstyle": "arc3,rad=0.35" if j == lane
                                    else "arc3"})
        ax.text(32.2, y + 0.5, f"round {k}: offset {offset}" if offset else f"round {k}",
                va="center", fontsize=8, clip_on=False)
    for y in range(len(rounds) + 1):
        ax.plot(range(32), [y] * 32, "o", color="#2b83ba", markersize=3, zorder=4)
    ax.set_xlim(-0.7, 31.7)
    ax.set_ylim(len(rounds) + 0.3, -0.3)
    ax.set_xticks(range(0, 32, 2), [str(l) for l in range(0, 32, 2)], fontsize=7)
    ax.set_xlabel("lane. An arrow from lane j (above) to lane i (below): at that round lane i "
                  "receives lane j's value and adds it to its own (dotted: its own value "
                  "carried on).", fontsize=8)
    ax.legend(handles=[
        matplotlib.lines.Line2D([], [], color="#d7191c", linewidth=1.6, marker=">",
                                label="a value that ends in lane 0 (the warp's sum)"),
        matplotlib.lines.Line2D([], [], color="#bbbbbb", linewidth=0.9, marker=">",
                                label="a value that does not reach lane 0"),
        matplotlib.lines.Line2D([], [], color=SELF, linewidth=1.2, marker=">",
                                label="no lane sits offset places above: the lane receives "
                                      "its own value")],
        loc="upper center", bbox_to_anchor=(0.5, -0.09), ncol=3, fontsize=8, frameon=False)
    ax.set_yticks([])
    ax.set_title(titles[0], fontsize=9, loc="left")
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    return fig


def halo(traces, shared, source, block, titles, show=10):
    """BLOCK's shared array SHARED: the first and last SHOW slots, each with the element of
    SOURCE read just before writing it and the thread that did both; and the slots thread 0
    and the block's last thread read for their stencils."""
    name, rows = traces[0]
    if block < 0:  # counted from the end: -1 is the last block
        block = max(r["block_x"] for r in rows) + 1 + block
    mine = [r for r in rows if r["block_x"] == block]
    slots = max(r["index"] for r in mine if r["array"] == shared) + 1
    loaded = {}
    last_read = {}
    for r in mine:  # each thread's own order: a read of SOURCE, then the write of the slot
        key = (r["thread_x"],)
        if r["array"] == source and r["rw"] == "R":
            last_read[key] = r["index"]
        if r["array"] == shared and r["rw"] == "W" and r["step"] == 0:
            loaded[r["index"]] = (r["thread_x"], last_read.pop(key, None))
    readers = [r["thread_x"] for r in mine if r["array"] == shared and r["rw"] == "R"]
    picked = [min(readers), max(readers)]  # the first and the last thread with a stencil
    reads = {t: sorted(r["index"] for r in mine if r["array"] == shared and r["rw"] == "R"
                       and r["thread_x"] == t) for t in picked}
    shown = list(range(show)) + list(range(slots - show, slots))
    fig, ax = plt.subplots(figsize=(15.5, 3.4))
    for x, slot in enumerate(shown):
        xx = x + (1 if slot >= show else 0)
        t, g = loaded.get(slot, (None, None))
        halo_slot = t is not None and (slot < 3 or slot >= slots - 3)
        colour = "#fdae61" if halo_slot else "#abd9e9"
        ax.add_patch(Rectangle((xx, 1), 0.94, 0.9, facecolor=colour, edgecolor="black",
                               linewidth=0.6))
        ax.text(xx + 0.47, 1.2, f"{shared}[{slot}]", ha="center", fontsize=6.5)
        ax.text(xx + 0.47, 1.5, f"{source}[{g}]" if g is not None else "0 (outside)",
                ha="center", fontsize=6.5)
        ax.text(xx + 0.47, 1.78, f"thread {t}" if t is not None else "", ha="center",
                fontsize=6.5)
        for k, tt in enumerate(picked):
            if slot in reads[tt]:
                ax.add_patch(Rectangle((xx + 0.1, 0.45 - 0.35 * k), 0.74, 0.25,
                                       facecolor=PALETTE[6 + 2 * k], edgecolor="none"))
    ax.text(show + 0.47, 1.45, "…", ha="center", fontsize=14)
    for k, tt in enumerate(picked):
        ax.text(-0.2, 0.57 - 0.35 * k, f"thread {tt} reads", ha="right", va="center", fontsize=8)
    ax.set_xlim(-2.2, len(shown) + 1.2)
    ax.set_ylim(2.1, -0.1)
    ax.axis("off")
    ax.set_title(titles[0] + f" (block {block})\norange: the halo, loaded by the block's first threads as well "
                 "as their own element; blue: each thread's own element", fontsize=9, loc="left")
    fig.tight_layout()
    return fig


def swizzle(traces, array, titles, rows=8):
    """One panel per trace: the first ROWS row slots of ARRAY's slice in shared memory, 8 chunk
    slots of 16 bytes each (4 banks); each slot labelled with the (row, chunk) of the slice it
    holds and coloured by that chunk (a row stays in its own line either way: the colours show
    where its chunks went); the slots holding chunk 0 (what wgmma reads first) framed."""
    fig, axes = plt.subplots(1, len(traces), figsize=(6.4 * len(traces), 0.72 * rows + 2.4),
                             squeeze=False)
    for ax, (name, trace), title in zip(axes[0], traces, titles):
        places = tracelib.swizzle_places(trace, array)
        size = next(r["size"] for r in trace if r["array"] == array)
        per_chunk = tracelib.CHUNK // size
        held = {(slot, place): (row, chunk) for row, chunk, slot, place in places}
        for (slot, place), (row, chunk) in held.items():
            if slot >= rows:
                continue
            first = chunk == 0
            ax.add_patch(Rectangle((place + 0.04, slot + 0.06), 0.92, 0.88,
                                   facecolor=PALETTE[2 * chunk + 1], edgecolor="black",
                                   linewidth=2.2 if first else 0.4))
            ax.text(place + 0.5, slot + 0.32, f"chunk {chunk}", ha="center", va="center",
                    fontsize=7.5, fontweight="bold" if first else "normal")
            ax.text(place + 0.5, slot + 0.68, f"row {row}\nk {chunk * per_chunk}-"
                    f"{chunk * per_chunk + per_chunk - 1}", ha="center", va="center",
                    fontsize=6.2, linespacing=0.95)
        ax.set_xlim(0, 8)
        ax.set_ylim(rows, 0)
        ax.set_xticks([c + 0.5 for c in range(8)],
                      [f"bytes {16 * c}-{16 * c + 15}\nbanks {4 * c}-{4 * c + 3}"
                       for c in range(8)], fontsize=6.2)
        ax.xaxis.set_ticks_position("top")
        ax.set_yticks([r + 0.5 for r in range(rows)],
                      [f"line {r}\nbytes {128 * r}-{128 * r + 127}" for r in range(rows)],
                      fontsize=6.5)
        ax.tick_params(length=0)
        groups = sorted({place for row, chunk, slot, place in places
                         if chunk == 0 and row < 8})
        spread = ("chunk 0 of rows 0-7 (framed): " + (
            "8 different groups of 4 banks" if len(groups) == 8 else
            f"banks {4 * groups[0]}-{4 * groups[0] + 3} for all 8" if len(groups) == 1 else
            f"{len(groups)} groups of 4 banks"))
        ax.set_title(f"{title}\n{spread}", fontsize=8.5, loc="left")
    note = ("Shared memory, 128 bytes a line (a row of the slice: 32 TF32 or 64 BF16 values of "
            "K). Each box is 16 bytes, named and coloured by the chunk of the row it holds (k: "
            "its elements along K).")
    fig.supxlabel("\n".join(textwrap.wrap(note, int(fig.get_size_inches()[0] * 15))), fontsize=8)
    fig.tight_layout()
    return fig


GPU_COLOURS = plt.get_cmap("tab10").colors


def ring_steps(traces, titles, n):
    """One row of panels per trace: the start, then each step of the reduce-scatter and of the
    all-gather (tracelib.ring_states: the data flow the trace's reads and writes make). Rows =
    GPUs, columns = chunks (the ranges the first step writes); a chunk is striped with the
    colours of the GPUs whose inputs it holds the sum of (striped grey: its elements differ);
    framed and with an arrow from the GPU it was read from where the step wrote it."""
    runs = []
    for name, rows in traces:
        k, steps = tracelib.ring_steps(rows)
        first = sorted(sorted(w) for p, s, _, writes in steps if (p, s) == (0, 0)
                       for w in writes.values())
        runs.append((k, steps, first, tracelib.ring_states(rows, n)))
    columns = max(len(r[3]) for r in runs)
    k_most = max(r[0] for r in runs)
    chunks_most = max(len(r[2]) for r in runs)
    fig, axes = plt.subplots(len(runs), columns, squeeze=False,
                             figsize=(columns * (chunks_most * 1.45 + 0.9) + 0.4,
                                      len(runs) * (k_most * 0.9 + 1.5) + 0.9))
    for row, ((k, steps, first, states), title) in enumerate(zip(runs, titles)):
        wrote = {(p, s): (reads, writes) for p, s, reads, writes in steps}
        for col, ax in enumerate(axes[row]):
            ax.axis("off")
            if col >= len(states):
                continue
            phase, step, state = states[col]
            ax.set_xlim(-0.75, len(first))
            ax.set_ylim(k, -0.55)
            reads, writes = wrote.get((phase, step), ({}, {}))
            for c, elements in enumerate(first):
                ax.text(c + 0.5, -0.3, f"chunk {c}\n[{elements[0]}-{elements[-1]}]",
                        ha="center", va="center", fontsize=7)
                for g in range(k):
                    sums = {state[g][i] for i in elements}
                    have = sorted(next(iter(sums))) if len(sums) == 1 else None
                    x, y = c + 0.1, g + 0.12
                    if have is None:
                        ax.add_patch(Rectangle((x, y), 0.8, 0.76, facecolor=GREY, hatch="///",
                                               edgecolor="none"))
                    else:
                        for j, h in enumerate(have):
                            ax.add_patch(Rectangle((x, y + 0.76 * j / len(have)), 0.8,
                                                   0.76 / len(have), facecolor=GPU_COLOURS[h],
                                                   edgecolor="none", alpha=0.8))
                    now = bool(writes.get(g, set()) & set(elements))
                    ax.add_patch(Rectangle((x, y), 0.8, 0.76, facecolor="none",
                                           edgecolor="black", linewidth=2.4 if now else 0.5))
                    label = ("mixed" if have is None else "x" + "+x".join(map(str, have)))
                    if have is not None and len(have) == k:
                        label += "\n= the sum"
                    ax.text(x + 0.4, y + 0.38, label, ha="center", va="center", fontsize=7.5,
                            fontweight="bold" if now else "normal")
                    if now:
                        src = {reads.get(g, {}).get(i) for i in elements} - {None}
                        for o in src:  # the arrow: from the GPU it read, to this chunk
                            ax.annotate("", xy=(c + 0.88, g + 0.5), xytext=(c + 0.88, o + 0.5),
                                        arrowprops=dict(arrowstyle="-|>", color="black", lw=1.4,
                                                        connectionstyle="arc3,rad=-0.35"))
            for g in range(k):
                ax.text(-0.05, g + 0.5, f"GPU {g}", ha="right", va="center", fontsize=8)
            head = ("start: GPU g holds its own x_g\n" if phase is None else
                    f"{tracelib.PHASES[phase]}, step {step}: "
                    + ("adds in" if phase == 0 else "copies") + "\nthe framed chunk from the GPU "
                    "the arrow comes from")
            lines = textwrap.wrap(title, int(fig.get_size_inches()[0] * 10))
            ax.set_title(("\n".join(lines) if col == 0 else "\n" * (len(lines) - 1)) + "\n"
                         + head, fontsize=8, loc="left")
    note = ("Each box is one chunk of the vector on one GPU, striped with the colours of the "
            "GPUs whose inputs it holds the sum of (x0+x1: GPU 0's plus GPU 1's), from the "
            "trace's reads and writes; framed: written in this step.")
    fig.supxlabel("\n".join(textwrap.wrap(note, int(fig.get_size_inches()[0] * 14))), fontsize=8)
    fig.tight_layout()
    return fig


KINDS = {"ring_steps": ring_steps, "swizzle": swizzle, "shuffle_rounds": shuffle_rounds, "halo": halo, "owner_map": owner_map, "lane_steps": lane_steps, "index_map": index_map, "pass_map": pass_map, "tree_steps": tree_steps,
         "warp_sectors": warp_sectors, "tile_phases": tile_phases}

"""Chapter 6's blocks (docs/ch06_streams.md, and its answers in docs/instructors.md): the
records of pinned_vs_pageable's sweep in the results run, by memory kind, direction and size."""
from .core import *  # noqa: F401,F403


def copy_records(variant=None):
    """pinned_vs_pageable's --json records in the results run: all, or one variant
    ('pinned-h2d', 'pageable-d2h', ...)."""
    return [r for e in results()["runs"] if e["program"] == "pinned_vs_pageable"
            for r in e["records"] if variant is None or r.get("variant") == variant]


def copy_sizes():
    """The sweep's sizes in bytes, smallest first."""
    return sorted({(r.get("size") or {}).get("bytes", 0) for r in copy_records()} - {0})


def copy_at(variant, size, name="gbps"):
    """A field (dots for nested ones: time_ms.median) of the copy of this variant and size."""
    r = next((r for r in copy_records(variant) if (r.get("size") or {}).get("bytes") == size),
             None)
    return None if r is None else field(r, name)


def latency_and_bandwidth(variant="pinned-h2d"):
    """(µs, GB/s): time = latency + bytes / bandwidth through the smallest and the largest copy
    of the sweep, or (None, None)."""
    sizes = copy_sizes()
    if len(sizes) < 2:
        return None, None
    (b0, t0), (b1, t1) = ((b, copy_at(variant, b, "time_ms.median")) for b in (sizes[0],
                                                                            sizes[-1]))
    if t0 is None or t1 is None:
        return None, None
    bw = (b1 - b0) / ((t1 - t0) * 1e-3) / 1e9
    return (t0 - b0 / (bw * 1e9) * 1e3) * 1e3, bw


# ---- two streams when the stages are not equal (side/streams-two.json) ----------------------
# tools/handout_measurements.sh runs `streams --streams 2` at --work auto, 1437 and 160 (3 times
# and a third of the 479 steps auto picks on an H200) and writes the record; it is copied into
# side/ by hand. Until it is, the sentence is left out.
STREAMS_TWO = "streams-two.json"


def two_streams():
    """The pitfall's measured sentence, or nothing when the record is not there. The reasoning
    of "What makes operations overlap" predicts 2 x (longest stage) / (sum of the three),
    at most the whole ideal."""
    import json
    path = side_file(os.path.join("side", STREAMS_TWO))
    if path is None:
        return
    with open(path) as f:
        rec = json.load(f)
    runs = rec["runs"]
    stages = lambda w: [runs[w][v]["time_ms"] for v in ("stage-h2d", "stage-kernel", "stage-d2h")]
    model = lambda w: min(100.0, 200 * max(stages(w)) / sum(stages(w)))
    pct = lambda w: runs[w]["depth-first"]["pct_peak"]
    line("  Measured with two streams, depth-first ({gpu}, `tools/handout_measurements.sh`): with equal stages (`--work auto`) {pa:.0f}% of the ideal, where the reasoning predicts {ma:.0f}%; with three times the kernel's work (kernel {kh:.2f} ms, copies {ch:.2f} ms) {ph:.0f}%, predicted {mh:.0f}%; with a third of it (kernel {kl:.2f} ms) {pl:.0f}%, predicted {ml:.0f}%.",
         gpu=rec.get("gpu"), pa=pct("auto"), ma=model("auto"), kh=stages("1437")[1],
         ch=stages("1437")[0], ph=pct("1437"), mh=model("1437"), kl=stages("160")[1],
         pl=pct("160"), ml=model("160"))

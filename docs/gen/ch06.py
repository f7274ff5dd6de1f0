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

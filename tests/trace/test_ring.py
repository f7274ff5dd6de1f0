#!/usr/bin/env python3
"""The ring check (tracelib.check_ring) on K GPUs, not only the two the committed traces were
recorded on: synthetic traces in trace_end_devices's format, made by a model of the traced
ring_allreduce (its chunking, its reduce-scatter and all-gather, add_into's float4 reads),
for K = 2, 3, 4 and 8 and sizes with empty chunks. The model's ring must pass; each planted
change of the pattern must be caught: the reduce-scatter's chunk one step off, the
all-gather's chunk one step off, a GPU reading its right neighbour, an element copied twice,
the last all-gather step missing. No GPU."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "trace"))
import tracelib  # noqa: E402


def ceil_div(a, b):
    return -(-a // b)


def ring_rows(k, n, rs_shift=1, ag_shift=0, neighbour=-1, twice=False, ag_steps=None):
    """The rows a traced ring would write: step s on GPU g reduces chunk (g - RS_SHIFT - s) and
    copies chunk (g - AG_SHIFT - s), from GPU g + NEIGHBOUR (the program: 1, 0, -1)."""
    size = ceil_div(ceil_div(n, k), 64) * 64
    chunk = [(min(n, c * size), min(size, n - min(n, c * size))) for c in range(k)]
    rows = []

    def row(g, owner, phase, step, rw, i, thread=-1):
        rows.append({"block_x": 0 if thread >= 0 else -1, "block_y": 0, "thread_x": thread,
                     "thread_y": 0, "warp": thread // 32, "lane": thread % 32, "line": 40,
                     "step": step, "array": "data", "space": "global", "rw": rw, "index": i,
                     "byte": 4 * i, "size": 4, "device": g, "owner": owner, "phase": phase})
    for g in range(k):
        src = (g + neighbour) % k
        for s in range(k - 1):
            begin, count = chunk[(g - rs_shift - s) % k]
            for t in range(ceil_div(count, 4)):  # a thread: four floats (the tail: fewer)
                mine = range(begin + 4 * t, begin + min(4 * t + 4, count))
                for rw, owner in (("R", g), ("R", src), ("W", g)):
                    for i in mine:
                        row(g, owner, 0, s, rw, i, t)
        for s in range(k - 1 if ag_steps is None else ag_steps):
            begin, count = chunk[(g - ag_shift - s) % k]
            for i in range(begin, begin + count):
                for _ in range(2 if twice and i == begin else 1):
                    row(g, src, 1, s, "R", i)
                    row(g, g, 1, s, "W", i)
    return rows


def main():
    failures, cases = [], 0
    for k in (2, 3, 4, 8):
        for n in (250, 1000, 3 * 64 * k + 5, 60):
            cases += 1
            ok, what = tracelib.check_ring(ring_rows(k, n), n)
            if not ok:
                failures.append(f"K={k} n={n}: the ring failed: {what}")
            bugs = {"the reduce-scatter's chunk one step off": dict(rs_shift=0),
                    "the all-gather's chunk one step off": dict(ag_shift=1),
                    "an element copied twice": dict(twice=True),
                    "the last all-gather step missing": dict(ag_steps=k - 2)}
            if k > 2:  # on two GPUs the right neighbour is the left one
                bugs["reads from the right neighbour"] = dict(neighbour=1)
            for name, change in bugs.items():
                cases += 1
                ok, what = tracelib.check_ring(ring_rows(k, n, **change), n)
                if ok:
                    failures.append(f"K={k} n={n}: {name} not caught: {what}")
    for f in failures:
        print(f"FAIL {f}")
    print(f"trace ring check: {cases - len(failures)} of {cases} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The check that keeps the trace pictures honest can fail: with the committed traces and
pictures it finds nothing stale; after one trace changes (a row added, as a new recording
would), exactly the pictures drawn from that trace are stale; after a picture is removed,
that picture is reported missing. And every picture is shown in a handout. No GPU, no
matplotlib (the pictures are only read)."""
import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "trace"))
import pictures  # noqa: E402
import tracelib  # noqa: E402

TRACES = ROOT / "docs" / "runs" / "h200" / "traces"


def main():
    failures = []
    stale = tracelib.stale_pictures(TRACES, pictures.PICTURES)
    if stale:
        failures.append(f"the committed pictures are stale: {stale}")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "traces"
        shutil.copytree(TRACES, copy)
        name = "reduction.sequential"
        text = tracelib.read_text(copy / f"{name}.csv.gz")
        lines = text.splitlines(keepends=True)
        (copy / f"{name}.csv.gz").write_bytes(gzip.compress("".join(lines + lines[-1:]).encode()))
        expected = sorted(p["png"] for p in pictures.PICTURES if name in p["traces"])
        found = sorted(s.split(":")[0] for s in tracelib.stale_pictures(copy, pictures.PICTURES))
        if not expected or found != expected:
            failures.append(f"after {name} changed: stale {found}, expected {expected}")
        # the same text compressed again (another gzip header) is the same trace
        (copy / f"{name}.csv.gz").write_bytes(gzip.compress(text.encode(), mtime=12345))
        if tracelib.stale_pictures(copy, pictures.PICTURES):
            failures.append("a trace compressed again counts as changed")
        os.remove(copy / pictures.PICTURES[0]["png"])
        found = tracelib.stale_pictures(copy, pictures.PICTURES)
        if len(found) != 1 or "missing" not in found[0]:
            failures.append(f"a removed picture: {found}")
    handouts = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    for p in pictures.PICTURES:  # each picture is shown where a handout explains it
        if f"runs/h200/traces/{p['png']}" not in handouts:
            failures.append(f"{p['png']} is in no handout (docs/*.md)")
    for f in failures:
        print(f"FAIL: {f}")
    print("trace pictures: " + ("ok" if not failures else f"{len(failures)} failure(s)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

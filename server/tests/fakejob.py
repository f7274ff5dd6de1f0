#!/usr/bin/env python3
"""A job in place of server/runner.py for the tests of what a job page shows, on a machine
without a GPU: `fakejob.py SPEC OUT`. An exercise's result is the real one of the committed
H200 record (docs/runs/h200/side/exercises.json) read by labs/grader/api.py's exercise_result,
the answer key's own claims and values; a traced run draws nothing but writes a small real PNG
(made here, 2 x 2 pixels) as OUT/trace.png. Everything else goes as runner.py writes it."""
import json
import struct
import sys
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
sys.path.insert(0, str(REPO / "tests" / "exercises"))


def png(width=2, height=2):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def main(spec_path, out):
    spec, out = json.loads(Path(spec_path).read_text()), Path(out)
    if spec["kind"] == "exercise":
        import exercise as ex
        from grader import api
        e = ex.parse(ex.find(spec["exercise"]))
        record = json.loads((REPO / "docs" / "runs" / "h200" / "side" / "exercises.json").read_text())
        r = api.exercise_result(e, record["exercises"][e["name"]], "<b>the log</b>")
    else:
        r = {"exit": 0, "summary": f"ran {spec.get('program')}", "output": "<i>out</i>"}
        if spec.get("trace"):
            (out / "trace.png").write_bytes(png())
            r.update(picture="trace.png", trace="  c        global write      40 accesses <b>")
    (out / "result.json").write_text(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

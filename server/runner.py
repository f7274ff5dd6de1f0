#!/usr/bin/env python3
"""One job, as a backend runs it: `runner.py SPEC.json OUT`. Reads the job's spec (written by
the server), calls the grader through its one entry point (labs/grader/api.py), and writes
OUT/result.json (exit, summary, output, report, results, claims, runs, trace, picture: the
name of the PNG it drew in OUT, trace.png), atomically. The grader fences
every build and run of student code; this process is the server's user, never the student's.
Its own exit code is 0 once result.json is written, 3 when it could not be."""
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "labs"))
from grader import api  # noqa: E402


def main(spec_path, out):
    spec = json.loads(Path(spec_path).read_text())
    out = Path(out)
    here = Path(spec_path).parent
    edit = (here / "edit.cu").read_text() if (here / "edit.cu").is_file() else None
    options = list(spec.get("grader_options", []))
    if not any(o.startswith("--work") for o in options):
        # One grader folder per GPU (cache, reports, and the lock that keeps two speed gates off
        # one GPU at once): workers on two GPUs do not wait on each other's gates.
        gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "-") or "none"
        options.append(f"--work={REPO / 'build-lab' / ('server-gpu-' + gpu)}")
    weak = "--accept-weak-fence" in options
    kind = spec["kind"]
    if kind == "grade":
        r = api.grade_submission(spec["lab"], here / spec["submission"], out / "report", options)
    elif kind == "run":
        r = api.run_program(spec["program"], spec["args"], str(out), edit=edit,
                            timeout=spec.get("timeout", 60), accept_weak_fence=weak,
                            trace=bool(spec.get("trace")))
    elif kind == "exercise":
        r = api.run_exercise(spec["exercise"], str(out), edit=edit, accept_weak_fence=weak)
    else:
        r = {"exit": 2, "summary": f"no job kind {kind!r}", "output": ""}
    tmp = out / ".result.json.tmp"
    tmp.write_text(json.dumps(r))
    os.replace(tmp, out / "result.json")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1], sys.argv[2]))
    except Exception as e:  # noqa: BLE001  (the server shows the log; one line here)
        print(f"runner.py: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(3)

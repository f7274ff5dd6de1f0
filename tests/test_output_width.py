#!/usr/bin/env python3
"""What a newcomer reads fits in 100 columns (ctest: passes.output_width): the tour's progress
line of every program of programs.json, at its default and its --quick arguments, passed,
skipped for want of a GPU or of GPUs, or failed; its reason lines (a long no-GPU reason, wrapped);
the advice it and scripts/test.sh end with where no GPU ran; and scripts/test_summary.py's
summary of a run without a GPU, which ends with that advice too. No GPU needed.
    python3 tests/test_output_width.py"""
import io
import os
import sys
import tempfile
from contextlib import redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import test_summary  # noqa: E402
import tour  # noqa: E402

WIDTH = 100
REASON = ("no usable CUDA device (cudaErrorInsufficientDriver: CUDA driver version is "
          "insufficient for CUDA runtime version -- is there an NVIDIA GPU and driver on this "
          "machine?)")
failures = []


def check(what, text):
    for line in text.split("\n"):
        if len(line) > WIDTH:
            failures.append(f"{what}: {len(line)} columns: {line}")


def main():
    programs = tour.load_programs()
    for i, (chapter, _, program, _, args, quick, _, _) in enumerate(programs, 1):
        for use in (args, quick):
            name = f"ch{chapter:02d} {program} {' '.join(use)}".strip()
            for shown in ("PASS", "FAIL", "skipped: no GPU (above)", "skipped: needs 4 GPUs, 1 visible"):
                check(f"progress line of {name}", tour.progress_line(i, len(programs), name, 12.3, shown))
    check("the ceilings' reason line", tour.wrapped(f"[ceilings]   0.0 s  skipped: {REASON}"))
    check("the closing reason", tour.wrapped(f"GPU rows are skipped, which is not a failure: {REASON}"))
    advice = tour.no_gpu_advice()
    check("the advice without a GPU", advice)
    for must in ("docs/results-h200.md", "MM-CPU", "lint.py", "docs/server.md"):
        if must not in advice:
            failures.append(f"the advice without a GPU does not name {must}")
    with tempfile.TemporaryDirectory() as d:
        junit = os.path.join(d, "junit.xml")
        cases = "".join(
            f'<testcase name="ch02.VA-GPU-{n}.run" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>'
            f"<system-out>VA-GPU-{n}: {REASON}</system-out></testcase>" for n in range(5))
        cases += '<testcase name="manifest.check" status="run"/>'
        with open(junit, "w") as f:
            f.write(f'<?xml version="1.0"?><testsuite tests="6">{cases}</testsuite>')
        out = io.StringIO()
        with redirect_stdout(out):
            test_summary.summarise(junit)
        check("test_summary.py without a GPU", out.getvalue())
        if advice not in out.getvalue():
            failures.append("test_summary.py without a GPU does not end with the advice")
    for f in failures:
        print("FAIL:", f)
    print(f"output width: {'all within' if not failures else f'{len(failures)} problems over'} "
          f"{WIDTH} columns")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

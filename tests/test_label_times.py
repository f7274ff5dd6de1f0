#!/usr/bin/env python3
"""scripts/test.sh runs ctest more than once (a side-by-side pass, then the lessons; until
2026-11-26 a third for the lab self-tests, kept below as a third run), and each run prints its
own "Label Time Summary". The record's summed test time per
label adds them all up (ctest: passes.label_times). It once kept only the last of each label:
the H200 record showed the planted bugs' 56 minutes as the lesson pass's 1 minute.
    python3 tests/test_label_times.py"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import test_summary  # noqa: E402

LOG = """\
Label Time Summary:
cpu           = 358.11 sec*proc (342 tests)
gpu           = 4936.80 sec*proc (585 tests)
mutant        = 3322.09 sec*proc (153 tests)
Total Test time (real) = 337.69 sec
The lesson tests, one at a time (each a timing that needs the GPU to itself):
Label Time Summary:
gpu       =  79.42 sec*proc (40 tests)
lesson    =  79.42 sec*proc (40 tests)
mutant    =  62.93 sec*proc (24 tests)
The lab self-tests, beside one another (their graders time submissions):
Label Time Summary:
lab    = 336.70 sec*proc (5 tests)
"""


def main():
    got = test_summary.label_times(LOG)
    want = {"cpu": 358.11, "gpu": 5016.22, "mutant": 3385.02, "lesson": 79.42, "lab": 336.7}
    if got != want:
        print(f"FAILED: label times {got}, expected {want}")
        return 1
    print("label times add up over the passes:", got)
    return 0


if __name__ == "__main__":
    sys.exit(main())

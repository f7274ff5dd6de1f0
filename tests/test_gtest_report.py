#!/usr/bin/env python3
"""A GPU GoogleTest binary is one ctest test (<ch>.<program>.gtest, cmake/CudaExamples.cmake),
and the summary counts its cases from the report it writes. What that rests on, with a real
binary (tests/gtest_probe.cpp, linked with tests/gtest_main.cpp as every test binary is):
  - every case skipped: exit 77 (ctest: skipped), each case counted skipped with its reason, and
    refused on a GPU runner; a case skipped for want of GPUs is allowed there;
  - a failed case: exit 1, that case failed, the other passed;
  - a binary that ends with exit(0) half-way (no report written): the report an earlier run left
    is removed first, so the binary is counted failed, not as the earlier run's cases;
  - a failed binary whose report (an older one) shows no failed case is still failed;
  - the sanitizer's run of a binary (.sanitize.<tool>.gtest) is one test, not expanded;
  - the JUnit file rewritten with the cases in place of the binary (a CI's reporter names them).
    python3 tests/test_gtest_report.py PROBE"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import test_summary  # noqa: E402

NAME = "ch02.probe.gtest"
JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="probe" tests="{n}">
{cases}
</testsuite>
"""
FAILURES = []


def check(what, ok):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILURES.append(what)


def ctest_case(name, rc, output=""):
    """A testcase as ctest's --output-junit writes it (SKIP_RETURN_CODE 77)."""
    if rc == 0:
        return f'<testcase name="{name}" status="run"><system-out>{output}</system-out></testcase>'
    if rc == 77:
        return (f'<testcase name="{name}" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>'
                f'<system-out>{output}</system-out></testcase>')
    return (f'<testcase name="{name}" status="fail"><failure message="Failed"/>'
            f'<system-out>{output}</system-out></testcase>')


def run(probe, folder, mode, name=NAME):
    report = Path(folder) / "gtest" / f"{name}.xml"
    done = subprocess.run([probe, f"--gtest_output=xml:{report}"], capture_output=True, text=True,
                          env=dict(os.environ, GTEST_PROBE=mode), timeout=60)
    return done.returncode


def summary(folder, cases, gated=False):
    junit = Path(folder) / "junit.xml"
    junit.write_text(JUNIT.format(n=len(cases), cases="\n".join(cases)))
    counts, ok = test_summary.summarise(str(junit), gated)
    return counts, ok


def main():
    probe = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder:
        rc = run(probe, folder, "skip")
        check(f"every case skipped: exit 77 (got {rc})", rc == 77)
        counts, ok = summary(folder, [ctest_case(NAME, rc)])
        check(f"  both cases counted skipped ({counts})", counts["tests"] == 2 and counts["skipped"] == 2)
        counts, ok = summary(folder, [ctest_case(NAME, rc)], gated=True)
        check("  and refused on a GPU runner", not ok)

        rc = run(probe, folder, "gpus")
        check(f"one case skipped for want of GPUs: exit 0 (got {rc})", rc == 0)
        counts, ok = summary(folder, [ctest_case(NAME, rc)], gated=True)
        check(f"  one passed, one skipped, allowed on a GPU runner ({counts}, {ok})",
              counts["passed"] == 1 and counts["skipped"] == 1 and ok)

        rc = run(probe, folder, "fail")
        check(f"a failed case: exit 1 (got {rc})", rc == 1)
        counts, ok = summary(folder, [ctest_case(NAME, rc)])
        check(f"  one failed, one passed ({counts})", counts["failed"] == 1 and counts["passed"] == 1)
        junit = Path(folder) / "junit.xml"
        test_summary.expand_junit(str(junit))
        text = junit.read_text()
        check("  the JUnit file rewritten with the cases: the failed one named, the suite's counts",
              'name="ch02.probe.Probe.Second"' in text and 'status="fail"' in text
              and 'tests="2"' in text and 'failures="1"' in text and NAME + '"' not in text)
        again, _ = test_summary.summarise(str(junit))
        check(f"  and summarised again, the same counts ({again})", again == counts)

        rc = run(probe, folder, "pass")
        check(f"every case passed: exit 0 (got {rc})", rc == 0)
        counts, _ = summary(folder, [ctest_case(NAME, rc)])
        check(f"  two passed ({counts})", counts["passed"] == 2 and counts["tests"] == 2)
        # The report of that passing run is there; now the binary dies half-way with exit 0.
        rc = run(probe, folder, "exit0")
        report = Path(folder) / "gtest" / f"{NAME}.xml"
        check(f"exit(0) half-way: exit 0 (got {rc}) and the earlier report removed",
              rc == 0 and not report.exists())
        counts, _ = summary(folder, [ctest_case(NAME, rc)])
        check(f"  the binary counted failed, not as the earlier run's cases ({counts})",
              counts["failed"] == 1 and counts["passed"] == 0)

        run(probe, folder, "pass")  # a report with no failed case, then a failure ctest saw
        counts, _ = summary(folder, [ctest_case(NAME, 1)])
        check(f"a failed binary whose report shows no failure: failed ({counts})",
              counts["failed"] >= 1)

        counts, _ = summary(folder, [ctest_case("ch02.probe.sanitize.memcheck.gtest", 0)])
        check(f"a sanitizer's run of a binary is one test ({counts})", counts["tests"] == 1)
    print(f"{len(FAILURES)} check(s) failed" if FAILURES else "every check holds")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

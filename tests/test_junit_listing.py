#!/usr/bin/env python3
"""`ctest --preset P -N` (listing only) leaves the last run's JUnit report alone (ctest:
passes.junit_listing). A test preset's output.outputJUnitFile is written by every ctest run of
the preset, a listing too, which replaced build/junit.xml with an empty report; the presets
name their file in vendor.cuda-examples.junit instead, and scripts/test.sh and
scripts/sanitize.sh pass it to ctest's --output-junit.
For every test preset whose build folder is BUILD_DIR: a marked report at its JUnit path is still
there, unchanged, after `ctest --preset P -N`; and no test preset sets outputJUnitFile.
    python3 tests/test_junit_listing.py BUILD_DIR"""
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import test_summary  # noqa: E402

MARK = '<?xml version="1.0"?>\n<testsuite name="the last run, kept" tests="1"/>\n'


def main():
    build = os.path.realpath(sys.argv[1])
    presets = test_summary.load_presets().get("testPresets", [])
    failures = [f"test preset {p['name']} sets output.outputJUnitFile: `ctest -N` overwrites it"
                for p in presets if "outputJUnitFile" in (p.get("output") or {})]
    tried = 0
    for p in presets:
        path = test_summary.preset_junit(p["name"])
        if os.path.realpath(os.path.dirname(path)) != build:
            continue
        tried += 1
        kept = Path(path).read_bytes() if os.path.exists(path) else None
        try:
            Path(path).write_text(MARK)
            subprocess.run(["ctest", "--preset", p["name"], "-N"], cwd=test_summary.ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            now = Path(path).read_text() if os.path.exists(path) else None
            if now != MARK:
                failures.append(f"ctest --preset {p['name']} -N rewrote {path}")
            print(f"{'ok  ' if now == MARK else 'FAIL'} ctest --preset {p['name']} -N: "
                  f"{os.path.relpath(path, test_summary.ROOT)} {'kept' if now == MARK else 'rewritten'}")
        finally:
            if kept is None:
                os.unlink(path)
            else:
                Path(path).write_bytes(kept)
    for f in failures:
        print("FAIL:", f)
    if not tried and not failures:
        print(f"skipped: no test preset builds in {build} (a build folder of your own)")
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

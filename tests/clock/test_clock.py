#!/usr/bin/env python3
"""clock.py's own rules, without a GPU (ctest clock.rules): a fake program writes the trace the
injection library would and prints JSON records; each case must get the verdict it exists for.
A check must be able to fail: the partial timers here fail, their honest twins pass."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLOCK = HERE / "clock.py"

FAKE = r'''#!/usr/bin/env python3
import json, os, sys
mode = os.environ["FAKE_MODE"]
rows = ["start\t-\t0\t0\t0\t0\t0\t0"]
def act(kind, name, stream, start, end, nbytes=0, value=0):
    rows.append(f"{kind}\t{name}\t{stream}\t0\t{start}\t{end}\t{nbytes}\t{value}")
t = 1_000_000
repeats, kernel_ns = 3, 100_000
for i in range(repeats):
    act("memset", "memset", 7, t, t + 1000, 1, 0x5A)
    if mode == "copy":
        act("memcpy", "HtoD", 7, t + 2000, t + 52000, 1 << 20)
        act("kernel", "k", 7, t + 53000, t + 53000 + kernel_ns)
        end = t + 54000 + kernel_ns
    else:
        act("kernel", "k", 7, t + 2000, t + 2000 + kernel_ns)
        end = t + 3000 + kernel_ns
    if mode == "stream":      # a second stream's kernel runs on past the stop event
        act("kernel", "k2", 9, t + 2000, t + 2000 + 2 * kernel_ns)
    act("memset", "memset", 7, end, end + 1000, 1, 0xA5)
    if mode == "launch":      # a second launch after the stop event, before the next start
        act("kernel", "k3", 7, end + 2000, end + 2000 + kernel_ns // 2)
    t = end + 400_000
if mode == "copy_outside":     # the copy made once, before the marks
    rows.insert(1, f"memcpy\tHtoD\t7\t0\t10\t50010\t{1 << 20}\t0")
rows.append("end\t-\t0\t0\t0\t0\t0\t0")
open(os.environ["CLOCK_OUT"], "w").write("\n".join(rows) + "\n")
event_ms = (kernel_ns + (51000 if mode == "copy" else 1000)) / 1e6
rate = (1 << 20) / (event_ms * 1e6) if mode in ("copy", "copy_outside") else 1.0
rec = {"schema": 1, "program": "fake", "variant": "v", "time_ms": {"median": event_ms,
       "min": event_ms, "max": event_ms, "repeats": repeats}, "gbps": rate, "gflops": None,
       "clock_first_pair": -1 if mode == "host" else 0, "clock_device": -1 if mode == "host" else 0}
print(json.dumps(rec))
print("Verdict: PASS (fake)")
'''

CASES = [  # (mode, expected exit, a word the output must hold)
    ("honest", 0, "PASS"),
    ("stream", 1, "CLOCKED OTHERWISE"),
    ("launch", 1, "CLOCKED OTHERWISE"),
    ("copy", 0, "PASS"),
    ("copy_outside", 1, "CLOCKED OTHERWISE"),
    ("host", 1, "a host timer"),
]


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        fake = Path(tmp) / "fake"
        fake.write_text(FAKE)
        fake.chmod(0o755)
        lib = Path(tmp) / "libclock_inject.so"
        lib.write_text("not loaded by the fake")
        for mode, want, word in CASES:
            env = dict(os.environ, FAKE_MODE=mode, CLOCK_RUNS_FILE=str(Path(tmp) / "runs.json"))
            entry = {"name": "fake.run", "program": "fake", "folder": "x", "args": []}
            if mode.startswith("copy"):
                entry["copied"] = {"v": 1.0}  # its claim is the bytes copied
            Path(env["CLOCK_RUNS_FILE"]).write_text(json.dumps({"runs": [entry]}))
            r = subprocess.run([sys.executable, str(CLOCK), "run", "fake.run", "--program",
                                str(fake), "--lib", str(lib)], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            ok = r.returncode == want and word in r.stdout
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {mode}: exit {r.returncode} (want {want}, '{word}')")
            if not ok:
                print(r.stdout)
    # The coverage check itself, on the real sources: passes now; a new call fails it.
    r = subprocess.run([sys.executable, str(CLOCK), "coverage"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    ok = r.returncode == 0
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} coverage of the sources: exit {r.returncode}")
    if not ok:
        print(r.stdout)
    # ...and a record added to a copy of a program, with neither a run nor a reason, fails it.
    with tempfile.TemporaryDirectory() as tmp:
        root = HERE.parents[1]
        for folder in root.glob("ch0*"):
            (Path(tmp) / folder.name).mkdir()
            for f in list(folder.glob("*.cu")) + list(folder.glob("*.h")) + list(folder.glob("*.cpp")):
                (Path(tmp) / folder.name / f.name).write_text(f.read_text())
        va = Path(tmp) / "ch02_vector_add" / "VA-GPU-NN.cu"
        va.write_text(va.read_text() + '\nvoid more(Report& report) { report.bandwidth("kernel-again", "x", 1, [] {}); }\n')
        r = subprocess.run([sys.executable, str(CLOCK), "coverage"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=dict(os.environ, CLOCK_SOURCES=tmp))
        ok = r.returncode == 1 and '"kernel-again": neither checked nor listed' in r.stdout
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} a new record without a check or a reason: exit {r.returncode}")
    print(f"test_clock: {len(CASES) + 2 - failures} of {len(CASES) + 2} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

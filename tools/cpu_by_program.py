#!/usr/bin/env python3
"""Where a machine's CPU time goes, by program: a sampler to start before a long run (command 2,
a self-test) and a summary of what it saw.

    tools/cpu_by_program.py sample FILE        every 0.5 s, every process of the machine: its
        name, parent, command line (200 characters), when first and last seen (seconds from the
        start), its own CPU seconds (utime + stime) and its waited-for children's; written to
        FILE (JSON) every 5 s and at SIGTERM. Stop it with SIGTERM.
    tools/cpu_by_program.py summary FILE [FROM TO]   the own CPU seconds of the processes that
        started between FROM and TO (seconds; default: all), by kind: each of nvcc's phases
        (cc1plus, cicc, cudafe++, ptxas...), a Python script by name, the grader's programs
        (a driver, reference or launcher copy), anything else by its name; the single processes
        that used the most; then the clang children by the test that started them, and nvcc's
        builds by what started them.

A process that lives less than half a second may be missed, and the last half second of each
one is: the sums are lower bounds. Processes already running when the sampler starts count only
what they use after it.
"""
import collections
import json
import os
import re
import signal
import sys
import time

NVCC_PHASES = ("cc1plus", "cicc", "cudafe++", "ptxas", "nvlink", "fatbinary", "ld", "collect2",
               "as", "gcc", "g++", "nvcc", "cc1")


def sample(out):
    hz = os.sysconf("SC_CLK_TCK")
    seen, t0 = {}, time.time()

    def dump(*stop):
        with open(out + ".tmp", "w") as f:
            json.dump(seen, f)
        os.replace(out + ".tmp", out)
        if stop:
            sys.exit(0)
    signal.signal(signal.SIGTERM, dump)
    for n in range(1 << 40):
        now = round(time.time() - t0, 1)
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    s = f.read()
            except OSError:
                continue
            name = s[s.index("(") + 1:s.rindex(")")]
            rest = s[s.rindex(")") + 2:].split()
            own = (int(rest[11]) + int(rest[12])) / hz
            kids = (int(rest[13]) + int(rest[14])) / hz
            e = seen.get(pid)
            if e is None or (e["comm"] != name and e["last"] < now - 5):  # a new process
                try:
                    cmd = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")[:200]
                except OSError:
                    cmd = "?"
                e = seen[pid] = {"comm": name, "ppid": int(rest[1]), "first": now, "cmd": cmd,
                                 "own0": own if n == 0 else 0.0, "kids0": kids if n == 0 else 0.0}
            e["comm"], e["last"], e["own"], e["kids"] = name, now, own, kids
        if n % 10 == 9:
            dump()
        time.sleep(0.5)


def kind(e):
    name, cmd = e["comm"], e["cmd"]
    if name.startswith("python"):
        m = re.search(r"(\S+\.py)", cmd)
        return "python " + (os.path.basename(m.group(1)) if m else "?")
    if name in NVCC_PHASES:
        return "nvcc: " + name
    if re.match(r"(ch0\d\.\d|reference|launcher)-", name):
        return "the grader's programs (drivers, references, launchers)"
    return name


def summary(path, lo=0.0, hi=1e18):
    seen = json.load(open(path))
    inside = [e for e in seen.values() if lo <= e["first"] <= hi]
    used = collections.Counter()
    count = collections.Counter()
    for e in inside:
        used[kind(e)] += e["own"] - (e.get("own0", 0.0) if e["first"] < 1 else 0.0)
        count[kind(e)] += 1
    total = sum(used.values())
    nvcc = sum(v for k, v in used.items() if k.startswith("nvcc: "))
    print(f"processes started from {lo:g} to {hi:g} s: {len(inside)}, {total:.0f} CPU-s of their own; "
          f"nvcc's phases {nvcc:.0f} CPU-s ({100 * nvcc / max(total, 1):.0f}%)")
    for k, v in used.most_common(25):
        print(f"{v:8.1f} CPU-s {count[k]:5d} processes  {k}")

    print("the single processes that used the most:")
    for e in sorted(inside, key=lambda e: -e["own"])[:8]:
        print(f"{e['own']:8.1f} CPU-s from {e['first']:g} to {e['last']:g} s  {e['cmd'][:90]}")

    def by_parent(title, which, cpu):
        parents = collections.Counter()
        many = collections.Counter()
        for e in inside:
            if which(e):
                p = seen.get(str(e["ppid"]))
                started = "?" if p is None else kind(p) + " " + p["cmd"].split(" ", 2)[-1][:70]
                parents[started] += cpu(e)
                many[started] += 1
        print(title)
        for k, v in parents.most_common(12):
            print(f"{v:8.1f} CPU-s {many[k]:5d}  {k}")
    by_parent("clang children (own CPU), by what started them:",
              lambda e: "clang_child" in e["cmd"], lambda e: e["own"])
    by_parent("nvcc builds (nvcc's own CPU and its phases' once waited for), by what started them:",
              lambda e: e["comm"] == "nvcc", lambda e: e["own"] + e["kids"])


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "sample":
        sample(sys.argv[2])
    elif len(sys.argv) in (3, 5) and sys.argv[1] == "summary":
        summary(sys.argv[2], *(float(x) for x in sys.argv[3:5]))
    else:
        print(__doc__)
        sys.exit(2)

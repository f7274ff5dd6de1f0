#!/usr/bin/env python3
"""Measure the system calls that fenced commands need, and write the fence's allow-list.

    python3 tools/measure_syscalls.py [--labs ch02 ...] [--build-only] [--nvcc P] [--arch A]
                                      [--merge] [--out labs/grader/syscalls.json]

For each lab it makes the solution's folder (lab.py make CH DIR --solution) and grades it with
LAB_SECCOMP_MEASURE set (labs/grader/fence.py): every fenced command (the build with nvcc, the
driver's test runs, each compute-sanitizer tool, the timed runs) runs under a seccomp filter that
hands each system call to the fence's supervisor, which writes its number down and lets it go on.
The union is the allow-list, written with the names of this machine's <asm/unistd_64.h>
(--merge: added to the list already there, e.g. a GPU machine's measurement to a CPU's).
Run it on a GPU machine (without one only the builds run: --build-only). The honest
solutions only: never a cheat, whose calls are what the list refuses.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "scripts" / "lab.py"
DEFAULT = REPO / "labs" / "grader" / "syscalls.json"
UNISTD = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")


# Never allowed, measured or not: what reaches past the fence (other processes, the kernel's
# keyrings, mounts and namespaces, BPF, performance counters, io_uring, module and kexec loading,
# identities). A measured one is reported and left out; if an honest grade needs it, the grade
# under the filter fails and says so (the check that follows a measurement). Sockets: socket is
# allowed for AF_UNIX only (fence.py's FIRST_ARGUMENT), so the calls on a socket stay local.
NEVER = {"socketpair", "sendmmsg", "recvmmsg", "ptrace", "process_vm_readv", "process_vm_writev",
         "personality", "keyctl", "add_key", "request_key", "mount", "umount2", "move_mount", "open_tree",
         "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr", "pivot_root", "chroot", "unshare", "setns",
         "bpf", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
         "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
         "swapoff", "acct", "quotactl", "lookup_dcookie", "open_by_handle_at", "name_to_handle_at",
         "pidfd_getfd", "pidfd_open", "seccomp", "setuid", "setgid", "setreuid", "setregid", "setresuid",
         "setresgid", "setgroups", "capset", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime",
         "sethostname", "setdomainname", "iopl", "ioperm", "syslog", "vhangup"}


def names():
    """{number: name} of x86-64's system calls, from the kernel's header where it is installed,
    else from the list already written."""
    out = {}
    if UNISTD.exists():
        out = {int(n): name for name, n in re.findall(r"#define __NR_(\w+) (\d+)", UNISTD.read_text())}
    if DEFAULT.exists():
        for name, n in json.loads(DEFAULT.read_text()).get("allow", {}).items():
            out.setdefault(n, name)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labs", nargs="*", default=["ch02", "ch03", "ch04", "ch05", "ch06"])
    ap.add_argument("--no-labs", action="store_true", help="grade no lab (with --from-log, --fence-tests)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--arch", default=None)
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--jobs", type=int, default=4, help="each lab's grade's jobs (the labs run side by side)")
    ap.add_argument("--out", default=str(DEFAULT))
    ap.add_argument("--log", default=None, help="keep the per-command lines here")
    ap.add_argument("--fence-tests", action="store_true",
                    help="also the commands of tests/labs/test_fence.py (View, Kill, SafeReads)")
    ap.add_argument("--from-log", nargs="*", default=[], help="add earlier measurements' lines")
    args = ap.parse_args()
    if os.uname().machine != "x86_64":
        print("measure_syscalls.py: the fence filters x86-64 only")
        return 2
    work = Path(tempfile.mkdtemp(prefix="lab-syscalls-"))
    log = Path(args.log) if args.log else work / "measured.txt"
    env = dict(os.environ, LAB_SECCOMP_MEASURE=str(log))
    if args.fence_tests:  # the shell commands of the fence's own tests (not its attacks)
        subprocess.run([sys.executable, str(REPO / "tests" / "labs" / "test_fence.py"), "View", "Kill", "SafeReads"],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    extra = (["--nvcc", args.nvcc] if args.nvcc else []) + (["--arch", args.arch] if args.arch else [])
    graders = []
    for ch in args.labs if not args.no_labs else []:  # side by side: each grade's own uids and scratch (lab.py's fence)
        folder = work / f"solution-{ch}"
        subprocess.run([sys.executable, str(LAB), "make", ch, str(folder), "--solution"], check=True,
                       stdout=subprocess.DEVNULL)
        graders.append((ch, subprocess.Popen(
            [sys.executable, str(LAB), "grade", str(folder), "--lab", ch, "--jobs", str(args.jobs),
             "--out", str(work / f"report-{ch}"), "--work", str(work / f"work-{ch}")] + extra
            + (["--build-only"] if args.build_only else []), env=env)))
    failed = []
    for ch, p in graders:
        rc = p.wait()
        print(f"measure_syscalls.py: {ch} graded under the measurement, exit {rc}")
        if rc != 0 and not args.build_only:
            failed.append(ch)
    if failed:  # what ran is still measured (and written); the run says that it is incomplete
        print(f"measure_syscalls.py: {', '.join(failed)}: the solution did not score full marks: "
              "the measurement may be incomplete")
    table = names()
    seen, bad = {}, []
    lines = log.read_text().split("\n") if log.exists() else []
    for extra_log in args.from_log:
        lines += Path(extra_log).read_text().split("\n")
    for line in lines:
        if not line.strip():
            continue
        prog, *nums = line.split()
        if not nums or nums[0] == "?":  # a command stopped before its supervisor wrote (a kill)
            bad.append(line)
            continue
        for n in nums:
            seen.setdefault(int(n), set()).add(prog)
    if bad:
        print("measure_syscalls.py: commands without a record (killed by their test):\n  " + "\n  ".join(bad))
    if not seen:
        print("measure_syscalls.py: nothing measured")
        return 1
    allow = {}
    if args.merge and Path(args.out).exists():
        allow = json.loads(Path(args.out).read_text()).get("allow", {})
    for n in sorted(seen):
        name = table.get(n, f"nr_{n}")
        if name in NEVER:
            print(f"measure_syscalls.py: {name} measured ({', '.join(sorted(seen[n]))}) and never allowed")
            continue
        allow[name] = n
    doc = {"about": "The system calls the fence lets fenced commands make (x86-64), measured by "
                    "tools/measure_syscalls.py (labs/grader/fence.py's docstring); any other fails with EPERM.",
           "arch": "x86_64", "allow": dict(sorted(allow.items(), key=lambda kv: kv[1]))}
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    for n in sorted(seen):
        print(f"  {n:4d} {table.get(n, '?'):24s} {', '.join(sorted(seen[n]))}")
    print(f"measure_syscalls.py: {len(seen)} system calls measured, {len(allow)} in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

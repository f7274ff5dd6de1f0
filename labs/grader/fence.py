"""The fence around every build and run of student code, and the grader's own GPU probe.

The fence is the operating system's, not the lint's. Each fenced command (a student's build, a
run of a driver, the reference's runs too) starts in new namespaces (util-linux `unshare`, then
fence_init.py inside them), where it sees only what the run needs:
  mount    a new root: /usr and /lib* (the compilers, the C and CUDA libraries), a few files of
           /etc, the CUDA toolkit, /sys read-only, /dev with the usual nodes and /dev/nvidia*
           only, a private empty /tmp and /dev/shm, its own folder (the jail, read-write, at
           /lab) and the one program it runs (read-only, under /lab-programs). No course
           repository, no cache, no reference binary, no other submission, no home folder; its
           argv, cwd, environment and /proc/self/mountinfo name /lab, never the grader's
           scratch folder: the jail and the program are copied into file systems of their own
           (tmpfs), not bound (a bind's root column in mountinfo is its source's path), and the
           jail is copied back out when the command has ended (fence_init.py).
  PID      its first process is PID 1 of a PID namespace of its own: when it ends, the kernel
           kills every process it made (a double fork, setsid and a cleared environment change
           nothing); its /proc shows its own processes only (not even fence_init.py's
           supervisor, whose PID namespace holds its own).
  network  no interface but a loopback of its own; IPC and host name its own too.
  uid      (root) a uid of its own (UID_BASE..), the reference's runs another range (REF_BASE..),
           no capabilities, no new privileges; not root: a user namespace (the grader's uid).
  limits   rlimits on processes, file size, CPU time, open files, no core files; with cgroup v2
           (memory and pids controllers, writable): memory.max and pids.max, and cgroup.kill.
           RLIMIT_AS is never set: CUDA reserves far more address space than it uses.
  syscalls a seccomp filter (x86-64), installed by fence_init.py right before the exec and
           inherited by everything the command starts: the system calls of labs/grader/
           syscalls.json, measured (below), and nothing else. Any other call fails with EPERM
           rather than killing the process: a program that merely probes for a feature (glibc's
           clone3 before clone, the CUDA driver's optional calls) goes on as it would on a
           kernel without it, so a grade never depends on a call the measurement missed; an
           attack gets an error, the same refusal. A call of another architecture (the 32-bit
           ABI) kills the process; an x32 call fails.
The allow-list is measured, not guessed: with LAB_SECCOMP_MEASURE=FILE in the grader's
environment, each fenced command runs under a filter that hands every system call to
fence_init.py (SECCOMP_RET_USER_NOTIF), which writes its number down and lets it go on
(SECCOMP_USER_NOTIF_FLAG_CONTINUE); no ptrace, no strace. The numbers go to FILE, one line per
command; tools/measure_syscalls.py grades the labs' solutions so (builds, tests, sanitizers,
timed runs, on a GPU) and writes syscalls.json.
Every fenced command also runs in its own session and process group, stdin closed (a timed
run's: a pipe that carries one byte, its turn: Fence.start), its output
capped (HEAD + TAIL bytes kept), with a cleared environment and a time limit; after it ends,
every process of its uid (or with its token) is killed too.

The strongest fence that works here is chosen once (probe):
  namespaces        (root) all of the above
  namespaces-user   (not root) the same view in a user namespace: the grader's own uid outside
  unshare+setpriv   (root, no mount or PID namespace here) no network and another uid, but the
                    file system stays in view: weak
  setsid            process group, limits and time limit only: weak
A weak fence leaves the grading machine's files in view: lab.py refuses to grade for credit with
one unless the instructor passes --accept-weak-fence. The report names the fence that ran.
"""
import atexit
import ctypes
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HEAD, TAIL = 48 * 1024, 16 * 1024
UID_BASE = 61000  # one uid per concurrent fenced job: UID_BASE + 64 * block + slot
SLOTS, BLOCKS = 64, 32
UID_LOCKS = Path("/run/lock/labgrader-uids")
_slots = threading.Semaphore(SLOTS)
_slot_lock = threading.Lock()
_free = list(range(SLOTS))
_block = None  # (block, its open lock file): this process's own uids, claimed at first use
_block_lock = threading.Lock()


def _claim_uid_block():
    """A block of 64 uids that no other grader on this machine uses while this one runs.
    Every grader sweeps away every process of a run's uid when the run ends, so two graders
    sharing uids (ctest runs the five lab self-tests side by side) killed each other's compilers
    and drivers: builds with no output, "exit -9", on the H200. flock holds a block for as long
    as this process lives, and lets it go however the process ends.
    One claim per process, under a lock: the grader's threads ask at once, and flock refuses a
    second open of a block this process holds, so two threads claimed two blocks, and a jail
    chowned to one block's uid was then built in by the other's ("nvcc fatal: Could not open
    output file", the first builds of every lab self-test, H200)."""
    global _block
    with _block_lock:
        if _block is None:
            os.makedirs(UID_LOCKS, mode=0o700, exist_ok=True)
            st = os.lstat(UID_LOCKS)
            if st.st_uid != os.geteuid() or st.st_mode & 0o077 or not os.path.isdir(UID_LOCKS):
                raise RuntimeError(f"{UID_LOCKS} must be a folder only the grader's user can use")
            for block in range(BLOCKS):
                fd = os.open(UID_LOCKS / f"{block}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                _block = (block, fd)
                break
            else:
                raise RuntimeError(f"all {BLOCKS} blocks of uids are held by other graders")
        return _block[0]


def gpu_probe():
    """None when the CUDA driver sees a device, else the reason, in the programs' words."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no usable CUDA device (libcuda.so.1 not found: no NVIDIA driver on this machine)"
    rc = cuda.cuInit(0)
    if rc != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(rc, ctypes.byref(name))
        return f"no usable CUDA device (cuInit: {(name.value or b'?').decode()})"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "no usable CUDA device (the driver lists none)"
    return None


def _works(words):
    try:
        return subprocess.run(words, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


WEAK = ("unshare+setpriv", "setsid")  # fences that leave the file system in view
KINDS = ("namespaces", "namespaces-user") + WEAK
REF_BASE = UID_BASE + SLOTS * BLOCKS + 64  # the reference's runs: a uid no student run has
REF_GID = REF_BASE - 1  # the group of every reference run: the only one that may run a reference
INIT = Path(__file__).resolve().parent / "fence_init.py"
COURSE = os.path.realpath(Path(__file__).resolve().parents[2])  # the course repository or kit
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
       "alternatives", "localtime")
DEV = ("null", "zero", "full", "random", "urandom")
# Where a fenced command finds its folder and the programs it was shown (mount points of its own
# root): no path of the grading machine reaches its argv, cwd, environment or mount points.
JAIL_AT, SHOWN_AT = "/lab", "/lab-programs"
JAIL_BYTES = 4 << 30  # the jail's tmpfs inside the fence (memory, charged to the run's cgroup)
COPY_BYTES = 1 << 30  # what a run may leave in its jail to be copied back (a build: a few MB)


def neutral_paths(home, show):
    """{host path: the path inside the fence} for the jail and each shown file, longest first
    (a shown file may lie inside the jail)."""
    paths = {}
    for i, p in enumerate(show):
        inside = f"{SHOWN_AT}/{i}/{Path(os.path.realpath(p)).name}"
        paths[str(p)] = paths[os.path.realpath(p)] = inside
    paths.setdefault(str(home), JAIL_AT)
    paths.setdefault(os.path.realpath(home), JAIL_AT)
    return dict(sorted(paths.items(), key=lambda kv: -len(kv[0])))


def translate(text, paths):
    """text with every host path of `paths` (a prefix of a path, or inside an option such as
    --out=PATH) written as the fence's."""
    for host, inside in paths.items():  # a whole path or a prefix of one: never /a/j-1 in /a/j-12
        text = re.sub(re.escape(host) + r"(?![\w.-])", lambda m: inside, text)
    return text

MEMORY = 16 << 30  # memory.max of a fenced command where a cgroup holds it (bytes)
SYSCALLS = Path(__file__).resolve().parent / "syscalls.json"
AUDIT_ARCH_X86_64 = 0xC000003E
RET_KILL_PROCESS, RET_ERRNO, RET_USER_NOTIF, RET_ALLOW = 0x80000000, 0x00050000, 0x7FC00000, 0x7FFF0000
EPERM = 1


def _bpf(code, k, jt=0, jf=0):
    return struct.pack("<HBBI", code, jt, jf, k)


# Calls allowed only with these first arguments. The CUDA driver opens a local (AF_UNIX) socket in
# every program, and compute-sanitizer talks to its target over one (measured on an H200: socket,
# connect, bind, listen, accept, sendto, recvfrom); a socket of any other family (AF_INET,
# AF_NETLINK, AF_PACKET, ...) is refused, so the other socket calls can reach only local sockets
# inside the fence's own network namespace and file system.
AF_UNIX = 1
FIRST_ARGUMENT = {41: AF_UNIX}  # socket(domain, ...)


def seccomp_filter(allowed, measure=False):
    """The BPF program (hex) of the fence's filter: the architecture checked, then each allowed
    number (x86-64) let through (socket for AF_UNIX only) and anything else answered EPERM;
    measure: every call handed to the supervisor instead (fence_init.py)."""
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    code = [_bpf(ld, 4), _bpf(jeq, AUDIT_ARCH_X86_64, 1, 0), _bpf(ret, RET_KILL_PROCESS), _bpf(ld, 0)]
    if measure:
        code.append(_bpf(ret, RET_USER_NOTIF))
    else:
        code += [_bpf(jge, 0x40000000, 0, 1), _bpf(ret, RET_ERRNO | EPERM)]  # the x32 ABI
        for nr in sorted(set(allowed)):
            if nr in FIRST_ARGUMENT:  # the low word of args[0] (seccomp_data offset 16)
                code += [_bpf(jeq, nr, 0, 4), _bpf(ld, 16), _bpf(jeq, FIRST_ARGUMENT[nr], 0, 1),
                         _bpf(ret, RET_ALLOW), _bpf(ret, RET_ERRNO | EPERM)]
            else:
                code += [_bpf(jeq, nr, 0, 1), _bpf(ret, RET_ALLOW)]
        code.append(_bpf(ret, RET_ERRNO | EPERM))
    return b"".join(code).hex()


# Always allowed, measured or not: without them a process or thread cannot end (a thread whose
# exit failed would spin in glibc's exit loop) or return from a signal handler.
ENDINGS = {"rt_sigreturn": 15, "exit": 60, "exit_group": 231, "restart_syscall": 219}


def allowed_syscalls():
    """{name: number} of syscalls.json (x86-64) and ENDINGS, or None where the filter cannot
    apply."""
    if os.uname().machine != "x86_64":
        return None
    try:
        return dict(json.loads(SYSCALLS.read_text())["allow"], **ENDINGS)
    except (OSError, ValueError, KeyError, TypeError):
        return None
PIDS = 512


def safe_read(path, cap=1 << 20, under=None):
    """(bytes, None) or (None, why): a file that fenced code could have made or replaced, read
    by the grader (root) without following a symbolic link (under: a folder that fenced code
    cannot replace; every folder from there to the file is opened without following one
    either), without blocking on a FIFO or device, and at most cap bytes (the rest dropped).
    Never raises for what the file is."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
    parts = Path(path).relative_to(under).parts if under else (str(path),)
    fd = None
    try:
        if under:
            fd = os.open(under, os.O_RDONLY | os.O_DIRECTORY)
            for part in parts[:-1]:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = nxt
        last = os.open(parts[-1], flags, dir_fd=fd) if fd is not None else os.open(parts[-1], flags)
    except FileNotFoundError:
        return None, "missing"
    except OSError as e:
        return None, f"not opened ({'a symbolic link' if e.errno in (20, 40) else e.strerror})"
    finally:
        if fd is not None:
            os.close(fd)
    fd = last
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "not a regular file"
        data = bytearray()
        while len(data) <= cap:
            chunk = os.read(fd, min(1 << 20, cap + 1 - len(data)))
            if not chunk:
                break
            data += chunk
        return bytes(data[:cap]), None
    finally:
        os.close(fd)


class Cgroup:
    """cgroup v2 for the fenced commands, where it is writable and has the memory and pids
    controllers: one child cgroup per command (memory.max, pids.max), killed whole at its end.
    self.why says why there is none."""

    def __init__(self):
        self.base, self.why = None, None
        try:
            mounts = [l.split() for l in Path("/proc/self/mounts").read_text().split("\n") if l]
            v2 = [m[1] for m in mounts if m[2] == "cgroup2"]
            if not v2:
                raise OSError("no cgroup v2 mounted")
            own = next(l[3:] for l in Path("/proc/self/cgroup").read_text().split("\n")
                       if l.startswith("0::"))
            here = Path(v2[0] + own.rstrip("/")) if own != "/" else Path(v2[0])
            if not {"memory", "pids"} <= set((here / "cgroup.controllers").read_text().split()):
                raise OSError(f"the grader's cgroup v2 ({here}) was given no memory and pids controllers")
            (here / "cgroup.subtree_control").write_text("+memory +pids")
            base = here / f"labgrader-{os.getpid()}"
            base.mkdir(exist_ok=True)
            (base / "cgroup.subtree_control").write_text("+memory +pids")
            self.base = base
        except (OSError, StopIteration) as e:
            self.why = getattr(e, "strerror", None) and f"{e.filename}: {e.strerror}" or str(e) or "no cgroup"

    def make(self, token, memory, pids):
        if self.base is None:
            return None
        g = self.base / token
        try:
            g.mkdir()
            (g / "memory.max").write_text(str(memory))
            if (g / "memory.swap.max").exists():
                (g / "memory.swap.max").write_text("0")
            (g / "pids.max").write_text(str(pids))
        except OSError as e:
            raise RuntimeError(f"cgroup {g}: {e}")  # the run is not started without its limits
        return g

    def kill(self, g):
        if g is None:
            return
        for _ in range(200):
            try:
                if (g / "cgroup.kill").exists():
                    (g / "cgroup.kill").write_text("1")
                else:
                    for pid in (g / "cgroup.procs").read_text().split():
                        os.kill(int(pid), signal.SIGKILL)
                g.rmdir()
                return
            except (OSError, ValueError):
                time.sleep(0.05)


class Fence:
    def __init__(self, kind=None, tools=()):
        """tools: the programs fenced commands run (nvcc, compute-sanitizer): their toolkit's
        folder is shown read-only."""
        self.root = os.geteuid() == 0
        self.tools = [t for t in tools if t]
        self.newroot = None
        self.cgroup = None
        self.probe_said = ""
        self.syscalls = allowed_syscalls()
        self.filter = seccomp_filter(self.syscalls.values()) if self.syscalls else None
        self.measure = os.environ.get("LAB_SECCOMP_MEASURE") if os.uname().machine == "x86_64" else None
        self.kind = kind or self.probe()
        if self.kind not in KINDS:
            raise ValueError(f"no fence {self.kind!r}: one of {', '.join(KINDS)}")
        if self.namespaces and self.root:
            self.cgroup = Cgroup()
            if self.cgroup.base is not None and not self.works():
                self.cgroup.base, self.cgroup.why = None, "a fenced command could not join a cgroup here"

    @property
    def namespaces(self):
        return self.kind in ("namespaces", "namespaces-user")

    @property
    def weak(self):
        return self.kind in WEAK

    def works(self):
        """Whether a fenced command runs here, in its own PID namespace where there is one."""
        d = Path(tempfile.mkdtemp(prefix="lab-fence-probe-"))
        measure, self.measure = self.measure, None  # the probe asks for PID 1: no supervisor there
        try:
            d.chmod(0o711)
            slot = self.take_slot()
            try:
                jail = self.jail(d, slot, "j")
                rc, out, _ = self.run(["/bin/sh", "-c", "test ! -e /proc/2 && echo fenced"], jail, slot, 20)
            finally:
                self.give_slot(slot)
            self.probe_said = out.strip()[-300:]
            return rc == 0 and out.strip() == "fenced"
        finally:
            self.measure = measure
            shutil.rmtree(d, ignore_errors=True)

    def probe(self):
        have = lambda t: shutil.which(t) is not None  # noqa: E731
        if have("unshare"):
            self.kind = "namespaces" if self.root else "namespaces-user"
            if self.works():
                return self.kind
        if self.root and have("unshare") and have("setpriv") and have("prlimit") and _works(
                ["unshare", "-n", "setpriv", f"--reuid={UID_BASE}", f"--regid={UID_BASE}",
                 "--clear-groups", "--no-new-privs", "true"]):
            return "unshare+setpriv"
        return "setsid"

    def describe(self):
        if self.namespaces:
            who = "its own uid" if self.kind == "namespaces" else "a user namespace (the grader's uid)"
            mem = ("memory.max %d GiB (cgroup v2)" % (MEMORY >> 30) if self.cgroup and self.cgroup.base
                   else "memory unlimited (%s; RLIMIT_AS would break CUDA)" %
                   (self.cgroup.why if self.cgroup else "no cgroup without root"))
            sc = (f"a seccomp filter ({len(self.syscalls)} system calls, sockets AF_UNIX only, any other EPERM)"
                  if self.syscalls
                  else "no seccomp filter (not x86-64, or labs/grader/syscalls.json unreadable)")
            if self.measure:
                sc = "the system calls measured (LAB_SECCOMP_MEASURE), none refused"
            return (f"{self.kind}: mount, PID, network, IPC namespaces (only the toolkit, its own "
                    f"folder and program, /dev/nvidia*, a private /tmp and /dev/shm in view), {who}, "
                    f"rlimits (processes, file size, CPU time), {mem}, {sc}")
        return {"unshare+setpriv": "unshare+setpriv: no network, an unprivileged uid, rlimits; "
                                   "WEAK: the file system stays in view",
                "setsid": "setsid: process group, rlimits and time limit only; WEAK: the file system "
                          "stays in view, the grader's own uid"}[self.kind]

    @property
    def drops_uid(self):
        return self.kind in ("namespaces", "unshare+setpriv") and self.root

    def take_slot(self):
        _slots.acquire()
        with _slot_lock:
            return _free.pop(0)

    def give_slot(self, slot):
        with _slot_lock:
            _free.append(slot)
        _slots.release()

    def uid(self, slot, reference=False):
        if not self.drops_uid:
            return os.getuid()
        return (REF_BASE if reference else UID_BASE) + SLOTS * _claim_uid_block() + slot

    def gid(self, slot, reference=False):
        if not self.drops_uid:
            return os.getgid()
        return REF_GID if reference else self.uid(slot)

    def jail(self, parent, slot, name, reference=False):
        """A fresh folder that the fenced command may write (owned by its uid)."""
        d = Path(parent) / name
        d.mkdir(parents=True)
        (d / "tmp").mkdir()
        if self.drops_uid:
            for p in (d, d / "tmp"):
                os.chown(p, self.uid(slot, reference), self.gid(slot, reference))
        d.chmod(0o700)
        return d

    def inside(self, path, home):
        """`path` (under the jail `home`) as a fenced command sees it: under /lab in the namespace
        fences, unchanged in the others."""
        return translate(str(path), neutral_paths(home, ())) if self.namespaces else str(path)

    def limits(self, limits):
        return {"nproc": limits.get("nproc", 256), "fsize": limits.get("fsize", 256 << 20),
                "cpu": limits.get("cpu", 600), "nofile": limits.get("nofile", 1024), "core": 0}

    def view(self, jail, show):
        """The mounts of the new root, in order (fence_init.py)."""
        steps, shown = [], []

        def ro(path, how="ro"):
            real = os.path.realpath(path)
            if not os.path.exists(real) or any(real == s or real.startswith(s + "/") for s in shown):
                return
            if COURSE == real or COURSE.startswith(real.rstrip("/") + "/") or real.startswith(COURSE + "/"):
                return  # never the course repository (or grading kit), a folder that holds it or one
                # of its own (build-lab/ holds the reference cache): a library folder there stays out
            shown.append(real)
            steps.append(["bind", real, real, how])
        # First the tmpfs folders (a toolkit or a jail may lie under /tmp: bound after it).
        steps.append(["tmpfs", "/tmp", 1 << 30])
        steps += [["tmpfs", "/dev", 1 << 20]]
        for name in DEV:
            steps.append(["bind", f"/dev/{name}", f"/dev/{name}", "dev"])
        for dev in sorted(Path("/dev").glob("nvidia*")):
            steps.append(["bind", str(dev), str(dev), "dev"])
        for i, name in enumerate(("stdin", "stdout", "stderr")):
            steps.append(["symlink", f"/dev/{name}", f"/proc/self/fd/{i}"])
        steps += [["symlink", "/dev/fd", "/proc/self/fd"], ["tmpfs", "/dev/shm", 256 << 20]]
        for top in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            p = Path("/") / top
            if p.is_symlink():
                steps.append(["symlink", str(p), os.readlink(p)])
            elif p.is_dir():
                ro(str(p))
        for name in ETC:
            p = f"/etc/{name}"
            if os.path.islink(p):
                steps.append(["symlink", p, os.readlink(p)])
            elif os.path.exists(p):
                steps.append(["bind", p, p, "ro"])
        for tool in self.tools:  # the toolkit (nvcc, compute-sanitizer) where it is not in /usr
            real = Path(os.path.realpath(tool))
            if real.exists():
                ro(str(real.parent.parent))
        for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
            if d and os.path.isdir(d):
                ro(d)
        ro("/sys")
        # The jail and the programs are copied in, never bound: a bind's root column in
        # /proc/self/mountinfo names its source's path (fence_init.py copies the jail back out).
        steps += [["tmpfs", JAIL_AT, JAIL_BYTES], ["copy", str(jail), JAIL_AT]]
        paths = neutral_paths(jail, show)
        if show:
            size = sum(os.stat(p).st_size for p in show) + (1 << 20)
            steps.append(["tmpfs", SHOWN_AT, size])
            steps += [["copy", str(p), paths[str(p)]] for p in show]
            steps.append(["readonly", SHOWN_AT])
        return steps

    def prefix(self, slot, writable, limits, show=(), reference=False, cgroup=None):
        lim = self.limits(limits)
        if self.namespaces:
            if self.newroot is None:  # empty here: each namespace mounts its own root on it
                self.newroot = tempfile.mkdtemp(prefix="lab-fence-root-")
                os.chmod(self.newroot, 0o700)
                atexit.register(shutil.rmtree, self.newroot, True)
            spec = {"root": self.newroot, "mounts": self.view(writable, show), "cwd": str(writable),
                    "copy_back": [JAIL_AT, str(writable), COPY_BYTES],
                    "uid": self.uid(slot, reference) if self.drops_uid else None,
                    "gid": self.gid(slot, reference) if self.drops_uid else None,
                    "limits": lim, "cgroup": str(cgroup) if cgroup else None}
            user = [] if self.root else ["--user", "--map-root-user"]
            return (["unshare"] + user + ["--mount", "--pid", "--net", "--ipc", "--uts", "--fork",
                                          "--kill-child", sys.executable, "-I", str(INIT)], spec)
        words = ["prlimit"] + [f"--{k}={v}" for k, v in lim.items()] + ["--"]
        if self.kind == "unshare+setpriv":
            uid = self.uid(slot, reference)
            words = ["unshare", "-n", "setpriv", f"--reuid={uid}", f"--regid={self.gid(slot, reference)}",
                     "--clear-groups",
                     "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"] + words
        return words, None

    def run(self, words, cwd, slot, timeout, limits=None, extra_env=None, home=None, show=(),
            reference=False):
        """(exit code, or 'timeout'; output; processes killed after it ended). home: the jail
        (its tmp/ is TMPDIR); default cwd. show: files the command needs besides its folder (the
        program it runs), shown read-only. reference: the run of a reference driver (its own
        uids)."""
        return self.start(words, cwd, slot, timeout, limits, extra_env, home, show,
                          reference).finish(timeout)

    def start(self, words, cwd, slot, timeout, limits=None, extra_env=None, home=None, show=(),
              reference=False, waits=False):
        """The command started, as run() starts it: a FencedRun, to finish(). waits: its stdin
        is a pipe the grader writes one byte to (FencedRun.go) when the command's turn comes:
        a timed run opens the GPU and loads its code beforehand (labs/drivers/driver.h:
        Driver::wait_for_go); otherwise stdin is closed."""
        token = secrets.token_hex(12)
        home = Path(home or cwd)
        env = {"PATH": "/usr/local/cuda/bin:/usr/bin:/bin", "HOME": str(home),
               "TMPDIR": str(home / "tmp"), "LANG": "C", "LC_ALL": "C", "LAB_FENCE": token}
        for k in ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"):
            if k in os.environ:
                env[k] = os.environ[k]
        env.update(extra_env or {})
        limits = dict(limits or {})
        limits.setdefault("cpu", int(timeout * 2) + 10)
        group = self.cgroup.make(token, limits.get("memory", MEMORY), limits.get("pids", PIDS)) \
            if self.cgroup else None
        prefix, spec = self.prefix(slot, Path(home) if self.namespaces else cwd, limits,
                                   [os.path.realpath(p) for p in show], reference, group)
        record = None
        if spec is not None:  # the jail at /lab, the programs shown under /lab-programs
            paths = neutral_paths(home, list(show))
            spec["cwd"] = translate(str(cwd), paths)
            spec["argv"] = [translate(str(w), paths) for w in words]
            env = {k: translate(v, paths) for k, v in env.items()}
            if self.measure:
                record = home / f".lab-syscalls-{token}"
                spec["seccomp_measure"] = seccomp_filter((), measure=True)
                spec["seccomp_record"] = translate(str(record), paths)
            else:
                spec["seccomp"] = self.filter
            argv = prefix + [json.dumps(spec)]
        else:
            argv = prefix + [str(w) for w in words]
        proc = subprocess.Popen(argv, cwd=cwd, env=env,
                                stdin=subprocess.PIPE if waits else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        return FencedRun(self, proc, slot, token, reference, group, record, home, words)

    def note_syscalls(self, record, home, words):
        """The measurement's numbers of one command, appended to LAB_SECCOMP_MEASURE."""
        data, why = safe_read(record, under=home)
        line = f"{Path(str(words[0])).name} " + (data.decode(errors="replace").strip() if data else f"? {why}")
        with open(self.measure, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write(line + "\n")
        try:
            os.unlink(record)
        except OSError:
            pass

    def sweep(self, pgid, slot, token, reference=False):
        """Kill the run's process group, then every process of its uid or with its token, until
        none is left. Returns how many were found after the run's own process ended."""
        killed = 0
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for _ in range(100):
            left = self.leftovers(slot, token, reference)
            if not left:
                return killed
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.05)
        return killed

    def leftovers(self, slot, token, reference=False):
        uid = self.uid(slot, reference) if self.drops_uid else None
        mark = f"LAB_FENCE={token}".encode()
        found = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == os.getpid():
                continue
            try:
                if uid is not None:
                    with open(f"/proc/{d}/status") as f:
                        for line in f:
                            if line.startswith("Uid:"):
                                if int(line.split()[1]) == uid:
                                    found.append(int(d))
                                break
                    continue
                with open(f"/proc/{d}/environ", "rb") as f:
                    if mark in f.read():
                        found.append(int(d))
            except (OSError, ValueError):
                continue
        return [p for p in found if not _zombie(p)]


class FencedRun:
    """A fenced command that has started (Fence.start): its output read as it comes (HEAD and
    TAIL bytes kept), go() to let a waiting one on, finish() to wait for its end."""

    def __init__(self, fence, proc, slot, token, reference, group, record, home, words):
        self.fence, self.proc, self.slot, self.token = fence, proc, slot, token
        self.reference, self.group, self.record, self.home, self.words = reference, group, record, home, words
        self.head, self.tail, self.dropped = bytearray(), bytearray(), 0
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        while True:
            chunk = self.proc.stdout.read1(65536)
            if not chunk:
                return
            if len(self.head) < HEAD:
                take = chunk[:HEAD - len(self.head)]
                self.head.extend(take)
                chunk = chunk[len(take):]
            if chunk:
                self.tail.extend(chunk)
                if len(self.tail) > TAIL:
                    self.dropped += len(self.tail) - TAIL
                    del self.tail[:len(self.tail) - TAIL]

    def go(self, go=True):
        """A waiting command's turn (its one byte, then end of file); go=False: end of file
        alone, and the command ends without running (it was started for a turn that never came)."""
        if self.proc.stdin is None:
            return
        try:
            if go:
                self.proc.stdin.write(b"g")
            self.proc.stdin.close()
        except OSError:  # it has ended already: finish() says how
            pass

    def finish(self, timeout):
        """(exit code, or 'timeout'; output; processes killed after it ended), `timeout` seconds
        from now at most. A waiting command that had no go() ends without running."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.go(False)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = "timeout"
        killed = self.fence.sweep(self.proc.pid, self.slot, self.token, self.reference)
        if self.group is not None:
            self.fence.cgroup.kill(self.group)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.reader.join(timeout=10)
        self.proc.stdout.close()
        if self.record is not None:
            self.fence.note_syscalls(self.record, self.home, self.words)
        out = self.head.decode(errors="replace")
        if self.dropped:
            out += f"\n[... {self.dropped} bytes of output dropped ...]\n"
        out += self.tail.decode(errors="replace")
        return rc, out, killed


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True

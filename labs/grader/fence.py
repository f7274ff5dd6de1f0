"""The fence around every build and run of student code, and the grader's own GPU probe.

Every fenced command runs in its own session and process group (setsid), with stdin closed, its
output capped (HEAD + TAIL bytes kept, the rest read and dropped), a cleared environment, and
limits (prlimit: processes, file size, CPU time, open files, no core files). At its time limit
the whole group is killed; after it ends, every process left behind (found by the run's uid,
or by the token in its environment) is killed too, so nothing of a submission outlives its run.

The strongest fence that works here is chosen once (probe):
  bwrap            bubblewrap: no network, read-only root, private /tmp, /dev/nvidia* only
  unshare+setpriv  (root) a new network namespace with no interfaces, and the command dropped
                   to an unprivileged uid of its own (no capabilities, no new privileges)
  unshare-user     (not root) a user and network namespace: no network, same uid
  setsid           (nothing else works) process group, limits and time limit only
The report names the fence that ran (docs/instructors.md says what each one stops).
"""
import ctypes
import fcntl
import os
import secrets
import shutil
import signal
import subprocess
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


class Fence:
    def __init__(self, kind=None):
        self.root = os.geteuid() == 0
        self.kind = kind or self.probe()

    def probe(self):
        have = lambda t: shutil.which(t) is not None  # noqa: E731
        if have("bwrap") and have("prlimit") and _works(
                ["bwrap", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/tmp",
                 "--die-with-parent", "--new-session", "true"]):
            return "bwrap"
        if self.root and have("unshare") and have("setpriv") and have("prlimit") and _works(
                ["unshare", "-n", "setpriv", f"--reuid={UID_BASE}", f"--regid={UID_BASE}",
                 "--clear-groups", "--no-new-privs", "true"]):
            return "unshare+setpriv"
        if have("unshare") and have("prlimit") and _works(["unshare", "-rn", "true"]):
            return "unshare-user"
        return "setsid"

    def describe(self):
        return {"bwrap": "bubblewrap (no network, read-only root, private /tmp, /dev/nvidia* only)",
                "unshare+setpriv": "unshare -n + setpriv to an unprivileged uid + prlimit",
                "unshare-user": "unshare -rn (no network, the grader's own uid) + prlimit",
                "setsid": "setsid + prlimit only (no namespace tools here): weakest"}[self.kind]

    @property
    def drops_uid(self):
        return self.kind == "unshare+setpriv" or (self.kind == "bwrap" and self.root)

    def take_slot(self):
        _slots.acquire()
        with _slot_lock:
            return _free.pop(0)

    def give_slot(self, slot):
        with _slot_lock:
            _free.append(slot)
        _slots.release()

    def uid(self, slot):
        return UID_BASE + SLOTS * _claim_uid_block() + slot if self.drops_uid else os.getuid()

    def jail(self, parent, slot, name):
        """A fresh folder that the fenced command may write (owned by its uid)."""
        d = Path(parent) / name
        d.mkdir(parents=True)
        (d / "tmp").mkdir()
        if self.drops_uid:
            for p in (d, d / "tmp"):
                os.chown(p, self.uid(slot), self.uid(slot))
        d.chmod(0o700)
        return d

    def prefix(self, slot, writable, limits):
        lim = ["prlimit", f"--nproc={limits.get('nproc', 256)}",
               f"--fsize={limits.get('fsize', 256 << 20)}", f"--cpu={limits.get('cpu', 600)}",
               f"--nofile={limits.get('nofile', 1024)}", "--core=0", "--"]
        uid = self.uid(slot)
        drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs"]
        if self.kind == "bwrap":
            words = ["bwrap", "--unshare-net", "--unshare-ipc", "--unshare-pid", "--ro-bind", "/", "/",
                     "--dev", "/dev", "--tmpfs", "/tmp", "--bind", str(writable), str(writable),
                     "--die-with-parent", "--new-session"]
            for dev in sorted(Path("/dev").glob("nvidia*")):
                words += ["--dev-bind", str(dev), str(dev)]
            return words + ["--"] + (drop if self.root else []) + lim
        if self.kind == "unshare+setpriv":
            return ["unshare", "-n"] + drop + lim
        if self.kind == "unshare-user":
            return ["unshare", "-rn"] + lim
        return lim

    def run(self, words, cwd, slot, timeout, limits=None, extra_env=None, home=None):
        """(exit code, or 'timeout'; output; processes killed after it ended). home: the jail
        (its tmp/ is TMPDIR); default cwd."""
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
        proc = subprocess.Popen(self.prefix(slot, cwd, limits) + [str(w) for w in words], cwd=cwd,
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        head, tail, dropped = bytearray(), bytearray(), [0]

        def reader():
            while True:
                chunk = proc.stdout.read1(65536)
                if not chunk:
                    return
                if len(head) < HEAD:
                    take = chunk[:HEAD - len(head)]
                    head.extend(take)
                    chunk = chunk[len(take):]
                if chunk:
                    tail.extend(chunk)
                    if len(tail) > TAIL:
                        dropped[0] += len(tail) - TAIL
                        del tail[:len(tail) - TAIL]

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = "timeout"
        killed = self.sweep(proc.pid, slot, token)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        t.join(timeout=10)
        proc.stdout.close()
        out = head.decode(errors="replace")
        if dropped[0]:
            out += f"\n[... {dropped[0]} bytes of output dropped ...]\n"
        out += tail.decode(errors="replace")
        return rc, out, killed

    def sweep(self, pgid, slot, token):
        """Kill the run's process group, then every process of its uid or with its token, until
        none is left. Returns how many were found after the run's own process ended."""
        killed = 0
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for _ in range(100):
            left = self.leftovers(slot, token)
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

    def leftovers(self, slot, token):
        uid = self.uid(slot) if self.drops_uid else None
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


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True

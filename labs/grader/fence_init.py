"""The inside of the namespace fence (labs/grader/fence.py): run by `unshare --mount --pid --net
--ipc --uts --fork --kill-child` (as root) or `unshare --user --map-root-user ...` (not root), as
the first process of the new namespaces, before any student code. It builds the only file
system that student code sees, then starts the student's command (fork, then exec: the command
is PID 1 of a PID namespace of its own, so when it ends the kernel kills every process it made)
and waits for it (below).

    python3 fence_init.py SPEC_JSON

SPEC: {"root": an empty folder to build on, "mounts": in order, ["bind", source, target,
"ro"|"rw"|"dev"], ["tmpfs", target, bytes], ["copy", source, target] (a file or a folder's
contents copied in, owners, modes and times kept), ["readonly", target] (a mount made read-only)
or ["symlink", link, points to]; "copy_back": [folder inside, folder of the grading machine] or
null; "cwd", "uid", "gid" (null: keep the uid), "limits": {name: value}, "cgroup": a folder of
cgroup v2 or null,
"seccomp": the filter's BPF program (hex, fence.py's seccomp_filter) or null, "seccomp_record":
a file to write the system calls used into (the measurement: fence.py's docstring) or null,
"argv": [...]}. The environment is the grader's cleared one, passed through.

The seccomp filter is installed last, right before the exec: every system call of the command and
of everything it starts is then checked against the allow-list (filters are inherited and cannot
be removed; no_new_privs is set first, as the kernel requires).

Nothing of the grading machine's paths reaches the command, not even /proc/self/mountinfo's root
column (each mount's path within its file system): the command's folder and programs are not
bound in but copied into file systems of their own (tmpfs), and the folder is copied back out
when the command has ended. So this process stays, as the command's supervisor, in a PID
namespace of its own: the command runs as PID 1 of a PID namespace nested in it (when it ends,
the kernel kills every process it made), with a mount namespace and a /proc of its own, and sees
nothing of this process (its argv holds the spec, with the machine's paths). This process keeps
the machine's folder open from before the new root hid it, waits for the command, then copies
the folder back through that descriptor: every process of the command is gone by then, no link
is followed, and what is copied is bounded (COPY_FILES entries, and the grader's byte limit),
measured before anything is written.
An exit status of 128 + N says that the command ended on signal N.

It imports nothing of the grader: it runs from the grader's folder before the new root hides it.
"""
import ctypes
import json
import os
import resource
import select
import stat
import struct
import sys
import time
import warnings  # noqa: F401  os.execvpe's search of PATH imports it; after pivot_root the
# interpreter's own library (a pyenv or venv outside /usr) may be out of view

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
CLONE_NEWNS, CLONE_NEWPID = 0x00020000, 0x20000000
PR_SET_DUMPABLE = 4
COPY_FILES = 100_000  # entries copied back at most (files, folders, links)
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 38, 24, 28
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 8
SYS_SECCOMP, SYS_PIDFD_OPEN, SYS_PIDFD_GETFD = 317, 434, 438  # x86_64 (fence.py filters no other)
NOTIF_RECV, NOTIF_SEND = 0xC0502100, 0xC0182101  # SECCOMP_IOCTL_NOTIF_RECV, _SEND
USER_NOTIF_FLAG_CONTINUE = 1
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1, 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
libc = ctypes.CDLL(None, use_errno=True)
LIMITS = {"nproc": resource.RLIMIT_NPROC, "fsize": resource.RLIMIT_FSIZE, "cpu": resource.RLIMIT_CPU,
          "nofile": resource.RLIMIT_NOFILE, "core": resource.RLIMIT_CORE}


def fail(what):
    sys.stderr.write(f"lab fence: {what}\n")
    sys.exit(125)


def mount(source, target, fstype, flags, data=None):
    if libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                  ctypes.c_ulong(flags), data and data.encode()) != 0:
        e = ctypes.get_errno()
        fail(f"mount {source} on {target} ({fstype}): {os.strerror(e)}")


def place(root, target, like):
    """An empty folder or file at root+target to mount on (like: the source's kind)."""
    path = root + target
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if stat.S_ISDIR(like):
        os.makedirs(path, exist_ok=True)
    elif not os.path.lexists(path):
        open(path, "w").close()
    return path


def build(spec):
    """The new root; returns the descriptor of the folder to copy back into (or None), opened
    before the old root goes."""
    root = spec["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here leaks back out
    mount("fence", root, "tmpfs", MS_NOSUID, "mode=0755,size=16m")
    for step in spec["mounts"]:  # in order: a tmpfs first, then what is bound inside it
        if step[0] == "bind":
            _, source, target, how = step
            st = os.stat(source)
            path = place(root, target, st.st_mode)
            mount(source, path, None, MS_BIND | MS_REC)
            flags = MS_BIND | MS_REMOUNT | MS_NOSUID
            if how == "ro":
                flags |= MS_RDONLY | MS_NODEV
            elif how == "rw":
                flags |= MS_NODEV
            mount(None, path, None, flags)
        elif step[0] == "copy":
            _, source, target = step
            copy_in(source, root + target)
        elif step[0] == "readonly":
            mount(None, root + step[1], None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        elif step[0] == "tmpfs":
            _, target, size = step
            path = root + target
            os.makedirs(path, exist_ok=True)
            dev = target == "/dev"  # device nodes are bound into it one by one
            mount("fence", path, "tmpfs", MS_NOSUID | (0 if dev else MS_NODEV),
                  f"mode={'0755' if dev else '1777'},size={size}")
        else:
            _, link, points = step
            os.makedirs(os.path.dirname(root + link), exist_ok=True)
            os.symlink(points, root + link)
    os.makedirs(root + "/proc", exist_ok=True)
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this PID namespace only
    back = None
    if spec.get("copy_back"):
        back = os.open(spec["copy_back"][1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    os.chdir(root)
    if libc.syscall(SYS_PIVOT_ROOT[os.uname().machine], b".", b".") != 0:
        fail(f"pivot_root: {os.strerror(ctypes.get_errno())}")
    if libc.umount2(b".", MNT_DETACH) != 0:  # the old root: gone from this namespace
        fail(f"umount of the old root: {os.strerror(ctypes.get_errno())}")
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)
    return back


class Budget:
    """What a copy may still write: entries and bytes (a copy back of a folder the command filled
    with hard links or sparse files stops here instead of filling the grading machine's disk)."""

    def __init__(self, files, size):
        self.files, self.size = files, size

    def take(self, size=0):
        self.files -= 1
        self.size -= size
        if self.files < 0 or self.size < 0:
            raise OverflowError


def _open_dir(name, dir_fd):
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)


def _remove(name, dir_fd):
    """name under dir_fd, whatever it is, a folder with all it holds; no link followed."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        fd = _open_dir(name, dir_fd)
        try:
            for inner in os.listdir(fd):
                _remove(inner, fd)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def _keep(st, fd=None, name=None, dir_fd=None):
    """The source's owner, mode (no set-id bits) and times, on a copy (by fd, or a link by name)."""
    if fd is None:
        os.chown(name, st.st_uid, st.st_gid, dir_fd=dir_fd, follow_symlinks=False)
        return
    os.fchown(fd, st.st_uid, st.st_gid)
    os.fchmod(fd, stat.S_IMODE(st.st_mode) & (0o1777 if stat.S_ISDIR(st.st_mode) else 0o777))
    os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))


def copy_file(name, src_dir, dst_dir, st, budget, to=None):
    """File name of folder src_dir (stat st) to folder dst_dir, as `to` (default: name)."""
    to = to or name
    budget.take(st.st_size)
    try:
        old = os.stat(to, dir_fd=dst_dir, follow_symlinks=False)
        if stat.S_ISREG(old.st_mode) and (old.st_size, old.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
            return  # unchanged (as make judges it)
        _remove(to, dst_dir)
    except FileNotFoundError:
        pass
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src_dir)
    try:
        dst = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                      dir_fd=dst_dir)
        try:
            left = st.st_size
            while left > 0:
                n = os.sendfile(dst, src, None, min(left, 1 << 30))
                if n == 0:
                    break
                left -= n
            _keep(st, dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def copy_tree(src_dir, dst_dir, budget, depth=0):
    """The contents of folder src_dir into folder dst_dir (descriptors): folders, regular files,
    symbolic links (as links, never followed) and FIFOs (as FIFOs); nothing else (sockets).
    What dst_dir holds and src_dir does not is removed."""
    if depth > 64:
        raise OverflowError
    names = set(os.listdir(src_dir))
    for gone in set(os.listdir(dst_dir)) - names:
        _remove(gone, dst_dir)
    for name in sorted(names):
        st = os.stat(name, dir_fd=src_dir, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):
            copy_file(name, src_dir, dst_dir, st, budget)
        elif stat.S_ISDIR(st.st_mode):
            budget.take()
            try:
                if not stat.S_ISDIR(os.stat(name, dir_fd=dst_dir, follow_symlinks=False).st_mode):
                    _remove(name, dst_dir)
                    os.mkdir(name, 0o700, dir_fd=dst_dir)
            except FileNotFoundError:
                os.mkdir(name, 0o700, dir_fd=dst_dir)
            s, d = _open_dir(name, src_dir), _open_dir(name, dst_dir)
            try:
                copy_tree(s, d, budget, depth + 1)
                _keep(st, d)
            finally:
                os.close(s)
                os.close(d)
        elif stat.S_ISLNK(st.st_mode):
            budget.take()
            _remove(name, dst_dir)
            os.symlink(os.readlink(name, dir_fd=src_dir), name, dir_fd=dst_dir)
            _keep(st, name=name, dir_fd=dst_dir)
        elif stat.S_ISFIFO(st.st_mode):  # kept for what it is: the grader refuses to read one
            budget.take()
            _remove(name, dst_dir)
            os.mkfifo(name, 0o600, dir_fd=dst_dir)
            _keep(st, name=name, dir_fd=dst_dir)
        else:  # a socket (a device node cannot be made there): gone, as if it were removed
            _remove(name, dst_dir)


def copy_in(source, path):
    """A step ["copy", source, target]: a file to path (its folders made), or a folder's contents
    into the folder at path (a tmpfs made for it), owners, modes and times kept."""
    st = os.stat(source)
    budget = Budget(10 * COPY_FILES, 1 << 62)  # the grader's own files: bounded by the tmpfs
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if stat.S_ISDIR(st.st_mode):
        os.makedirs(path, exist_ok=True)
        s = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        d = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            copy_tree(s, d, budget)
            _keep(st, d)
        finally:
            os.close(s)
            os.close(d)
    else:
        s = os.open(os.path.dirname(source), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        d = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            copy_file(os.path.basename(source), s, d, st, budget, os.path.basename(path))
        finally:
            os.close(s)
            os.close(d)


def measure_tree(fd, budget, depth=0):
    """Raises OverflowError where the folder (descriptor) holds more than the budget: entries,
    bytes (each name of a hard link, and a sparse file's whole length, as a copy writes them) or
    folders more than 64 deep."""
    if depth > 64:
        raise OverflowError
    for name in os.listdir(fd):
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        budget.take(st.st_size if stat.S_ISREG(st.st_mode) else 0)
        if stat.S_ISDIR(st.st_mode):
            inner = _open_dir(name, fd)
            try:
                measure_tree(inner, budget, depth + 1)
            finally:
                os.close(inner)


def copy_back(inside, back, size):
    """The command's folder (inside) copied back to the grading machine's folder (descriptor
    back), when it holds at most COPY_FILES entries and size bytes; else nothing is copied.
    Returns None, or why it was not."""
    src = os.open(inside, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        measure_tree(src, Budget(COPY_FILES, size))
        copy_tree(src, back, Budget(COPY_FILES, size))
        return None
    except OverflowError:
        return (f"the command left more than {COPY_FILES} files or {size >> 20} MiB (or folders "
                f"more than 64 deep) in its folder: nothing of it copied back")
    except OSError as e:
        return f"its folder not copied back: {e}"
    finally:
        os.close(src)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def filter_of(hexcode):
    code = bytes.fromhex(hexcode)
    buf = ctypes.create_string_buffer(code, len(code))
    return SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_char_p)), buf


def install(hexcode):
    """The allow-list, for this process and all it starts (no_new_privs is already set)."""
    prog, keep = filter_of(hexcode)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        fail(f"seccomp filter refused: {os.strerror(ctypes.get_errno())}")


def measure(spec):
    """The measurement of what a command needs (fence.py, LAB_SECCOMP_MEASURE): the command runs
    in a child under a filter that hands every system call to this process (SECCOMP_RET_USER_NOTIF),
    which writes its number down and lets it go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE). No ptrace,
    no strace: the kernel's own notifier. Returns in the child (which goes on to exec); the parent
    supervises until no process of the command is left, writes the numbers and exits with the
    command's status."""
    probe = os.open("/dev/null", os.O_RDONLY)  # the lowest free descriptor: the listener's
    os.close(probe)
    libc.syscall.restype = ctypes.c_long
    pid = os.fork()
    if pid == 0:
        return lambda: child_listener(spec["seccomp_measure"], probe)
    seen, status = set(), 1
    # each number written as it is first seen: a command killed at its time limit leaves them too
    out = os.open(spec["seccomp_record"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    listener, deadline = -1, time.time() + 20
    while listener < 0:
        if time.time() > deadline:
            fail("seccomp listener: not reached (pidfd_getfd needs Linux 5.6 and ptrace access)")
        listener = libc.syscall(SYS_PIDFD_GETFD, pidfd, probe, 0)
        if listener >= 0 and os.readlink(f"/proc/self/fd/{listener}") != "anon_inode:seccomp notify":
            os.close(listener)  # the child's descriptor before its filter was in place
            listener = -1
        if listener < 0:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                fail("the measured command ended before its filter was seen")
            time.sleep(0.001)
    poll = select.poll()
    poll.register(listener, select.POLLIN)
    notif, resp = ctypes.create_string_buffer(80), ctypes.create_string_buffer(24)
    child_done = False
    while True:
        for _, ev in poll.poll(100):
            if ev & select.POLLIN:
                ctypes.memset(notif, 0, 80)
                if libc.ioctl(listener, NOTIF_RECV, notif) == 0:
                    nid, _, _, nr = struct.unpack_from("<QIIi", notif.raw)
                    if nr not in seen:
                        seen.add(nr)
                        os.write(out, f"{nr} ".encode())
                    struct.pack_into("<QqiI", resp, 0, nid, 0, 0, USER_NOTIF_FLAG_CONTINUE)
                    libc.ioctl(listener, NOTIF_SEND, resp)
            if ev & (select.POLLHUP | select.POLLERR) and child_done:
                return end(status)
        while True:  # PID 1: every orphan of the command is reaped here
            try:
                done, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                done = 0
            if not done:
                break
            if done == pid:
                child_done, status = True, os.waitstatus_to_exitcode(st)
        if child_done and not poll.poll(0):
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return end(status)


def child_listener(path, expected):
    prog, keep = filter_of(path)
    fd = libc.syscall(SYS_SECCOMP, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, ctypes.byref(prog))
    if fd != expected:
        fail(f"seccomp listener: {fd} ({os.strerror(ctypes.get_errno())}), expected {expected}")


def end(status):
    sys.exit(status if status >= 0 else 128 - status)


def main():
    spec = json.loads(sys.argv[1])
    if spec.get("cgroup"):  # before anything else: every process it makes is in the cgroup
        with open(os.path.join(spec["cgroup"], "cgroup.procs"), "w") as f:
            f.write("0")
    back = build(spec)
    if libc.unshare(CLONE_NEWPID) != 0:  # the command's PID namespace, nested in this one
        fail(f"PID namespace: {os.strerror(ctypes.get_errno())}")
    pid = os.fork()
    if pid == 0:
        if back is not None:
            os.close(back)
        command(spec)
    supervise(pid, spec, back)


def supervise(pid, spec, back):
    """This process, while the command runs and after: it waits (the command's PID namespace is
    empty when its first process has ended), then copies the folder back."""
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # its /proc entries: closed even to its own uid
    status = 1
    while True:
        try:
            done, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if done == pid:
            status = os.waitstatus_to_exitcode(st)
    code = status if status >= 0 else 128 - status
    if back is not None:
        inside, _, size = spec["copy_back"]
        why = copy_back(inside, back, size)
        if why:
            sys.stderr.write(f"lab fence: {why}\n")
            code = code or 125
    sys.exit(code)


def command(spec):
    """The command's first process: PID 1 of its own PID namespace, with its own /proc (of that
    namespace only) in a mount namespace of its own; then its limits, and the exec."""
    if libc.unshare(CLONE_NEWNS) != 0:
        fail(f"mount namespace: {os.strerror(ctypes.get_errno())}")
    # Over the supervisor's /proc, not in place of it: a user namespace mounts a new proc only
    # where one is already fully in view.
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(spec["cwd"])
    listen = measure(spec) if spec.get("seccomp_measure") else None
    # No capability survives the exec, even as root of a user namespace (namespaces-user): the
    # bounding set emptied, and root no longer special (SECBIT_NOROOT, locked).
    if libc.prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0) != 0:
        fail(f"securebits: {os.strerror(ctypes.get_errno())}")
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            fail(f"capability {cap} not dropped: {os.strerror(ctypes.get_errno())}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if spec.get("uid") is not None:
        os.setgroups([])
        os.setresgid(spec["gid"], spec["gid"], spec["gid"])
        os.setresuid(spec["uid"], spec["uid"], spec["uid"])  # and every capability is gone
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        fail("no_new_privs refused")
    for name, value in spec["limits"].items():
        resource.setrlimit(LIMITS[name], (value, value))
    argv = spec["argv"]
    if listen:
        listen()
    elif spec.get("seccomp"):
        install(spec["seccomp"])
    try:
        os.execvpe(argv[0], argv, os.environ)
    except OSError as e:
        fail(f"cannot run {argv[0]}: {e.strerror}")


if __name__ == "__main__":
    main()

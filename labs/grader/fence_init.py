"""The inside of the namespace fence (labs/grader/fence.py): run by `unshare --mount --pid --net
--ipc --uts --fork --kill-child` (as root) or `unshare --user --map-root-user ...` (not root), as
the first process of the new namespaces, before any student code. It builds the only file
system that student code sees, then becomes the student's command (exec: the command is PID 1
of its PID namespace, so when it ends the kernel kills every process it made).

    python3 fence_init.py SPEC_JSON

SPEC: {"root": an empty folder to build on, "mounts": in order, ["bind", source, target,
"ro"|"rw"|"dev"], ["tmpfs", target, bytes] or ["symlink", link, points to]; "cwd", "uid", "gid"
(null: keep the uid), "limits": {name: value}, "cgroup": a folder of cgroup v2 or null,
"argv": [...]}. The environment is the grader's cleared one, passed through.

It imports nothing of the grader: it runs from the grader's folder before the new root hides it.
"""
import ctypes
import json
import os
import resource
import stat
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_SET_SECUREBITS = 38, 24, 28
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
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
    os.chdir(root)
    if libc.syscall(SYS_PIVOT_ROOT[os.uname().machine], b".", b".") != 0:
        fail(f"pivot_root: {os.strerror(ctypes.get_errno())}")
    if libc.umount2(b".", MNT_DETACH) != 0:  # the old root: gone from this namespace
        fail(f"umount of the old root: {os.strerror(ctypes.get_errno())}")
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)


def main():
    spec = json.loads(sys.argv[1])
    if spec.get("cgroup"):  # before anything else: every process it makes is in the cgroup
        with open(os.path.join(spec["cgroup"], "cgroup.procs"), "w") as f:
            f.write("0")
    build(spec)
    os.chdir(spec["cwd"])
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
    try:
        os.execvpe(argv[0], argv, os.environ)
    except OSError as e:
        fail(f"cannot run {argv[0]}: {e.strerror}")


if __name__ == "__main__":
    main()

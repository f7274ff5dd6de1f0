#!/usr/bin/env python3
"""The fence (labs/grader/fence.py) proved on a machine without a GPU: what fenced code sees
(mounts, processes, network, uid), that nothing it starts outlives its run, its limits, the
grader's reads of files it could have changed, the refusal of a weak fence, and the attacks of
tests/labs/cheats/fence_cheats.py (compiled with g++, run in the fence beside a scratch folder
laid out as the grader's). The attacks also run under the weakest fence, where they must get
through: so these tests can fail. Run: python3 tests/labs/test_fence.py (ctest: lab.fence)."""
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
import fence_cheats  # noqa: E402
from grader import fence, score  # noqa: E402

STRONG = fence.Fence()
NEEDS_STRONG = unittest.skipUnless(STRONG.namespaces, f"fence here: {STRONG.kind} (no namespaces)")


class Scratch:
    """A grader's scratch folder: a reference copy in ref/ (only the reference's group may run
    it), a cache with a reference and its manifest in work/, a student's program in bin/."""

    def __init__(self, f):
        self.f = f
        self.top = Path(tempfile.mkdtemp(prefix="lab-grade-"))
        self.top.chmod(0o711)
        (self.top / "ref").mkdir(mode=0o711)
        self.ref = self.top / "ref" / "reference-test"
        self.ref.write_text("#!/bin/sh\necho LEAK: the reference ran\n")
        if f.drops_uid:
            os.chown(self.ref, 0, fence.REF_GID)
            self.ref.chmod(0o550)
        else:
            self.ref.chmod(0o500)
        self.work = Path(tempfile.mkdtemp(prefix="lab-work-"))
        (self.work / "cache" / "k").mkdir(parents=True)
        (self.work / "cache" / "k" / "driver").write_text("#!/bin/sh\necho reference\n")
        (self.work / "cache" / "k" / "driver").chmod(0o755)
        import hashlib
        import json
        (self.work / "cache" / "k" / "manifest.json").write_text(json.dumps(
            {"sha256": hashlib.sha256((self.work / "cache" / "k" / "driver").read_bytes()).hexdigest()}))
        (self.top / "bin").mkdir(mode=0o711)

    def program(self, source):
        """g++ source into bin/ (0555, as the grader keeps a student's build)."""
        src = self.top / "p.cpp"
        src.write_text(source)
        out = self.top / "bin" / f"p-{time.time_ns()}"
        subprocess.run(["g++", "-O0", "-w", "-o", str(out), str(src)], check=True)
        out.chmod(0o555)
        return out

    def run(self, words, timeout=30, show=(), reference=False, name="j"):
        slot = self.f.take_slot()
        try:
            jail = self.f.jail(self.top, slot, f"{name}-{time.time_ns()}", reference)
            return self.f.run([str(w) for w in words], jail, slot, timeout, show=show, reference=reference)
        finally:
            self.f.give_slot(slot)

    def sh(self, script, **kw):
        return self.run(["/bin/sh", "-c", script], **kw)

    def close(self):
        shutil.rmtree(self.top, ignore_errors=True)
        shutil.rmtree(self.work, ignore_errors=True)


@NEEDS_STRONG
class View(unittest.TestCase):
    """What a fenced command sees."""

    def setUp(self):
        self.s = Scratch(STRONG)

    def tearDown(self):
        self.s.close()

    def test_nothing_of_the_grader_in_view(self):
        probes = [str(REPO), str(REPO / "scripts" / "lab.py"), str(self.s.work), str(self.s.work / "cache"),
                  str(self.s.ref), str(self.s.top / "ref"), "/root", "/home", "/work", "/var", "/run",
                  "/proc/1/root" + str(REPO)]
        script = "; ".join(f"test -e '{p}' && echo SEEN {p}" for p in probes) + "; true"
        rc, out, _ = self.s.sh(script)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("SEEN", out)

    def test_no_folder_of_the_course_through_the_library_path(self):
        """LD_LIBRARY_PATH's folders are shown (read-only), but never one inside the course
        repository: there build-lab/ holds the reference cache."""
        inside = REPO / "labs"
        old = os.environ.get("LD_LIBRARY_PATH")
        os.environ["LD_LIBRARY_PATH"] = f"{inside}:/usr/lib"
        try:
            rc, out, _ = self.s.sh(f"test -e '{inside}/labs.json' && echo SEEN; echo done")
        finally:
            if old is None:
                del os.environ["LD_LIBRARY_PATH"]
            else:
                os.environ["LD_LIBRARY_PATH"] = old
        self.assertIn("done", out)
        self.assertNotIn("SEEN", out)

    def test_its_own_processes_only(self):
        rc, out, _ = self.s.sh("ls /proc | grep -c '^[0-9]'; tr '\\0' ' ' </proc/1/cmdline; echo")
        lines = out.split("\n")
        self.assertLessEqual(int(lines[0]), 4, out)  # sh, ls, grep (and tr)
        self.assertIn("/bin/sh -c", lines[1])  # PID 1 is the command itself

    def test_private_tmp_and_shm(self):
        name = f"lab-fence-test-{os.getpid()}"
        rc, out, _ = self.s.sh(f"ls -A /tmp /dev/shm; echo x > /tmp/{name} && echo x > /dev/shm/{name} && echo wrote")
        self.assertIn("wrote", out)
        self.assertFalse(Path("/tmp", name).exists())
        self.assertFalse(Path("/dev/shm", name).exists())
        listed = [l for l in out.split("\n") if l and not l.endswith(":") and l != "wrote"]
        self.assertTrue(all(l.startswith("lab-grade-") for l in listed), out)  # only its own folder's path

    def test_its_own_program_runs_the_reference_does_not(self):
        mine = self.s.program("#include <cstdio>\nint main() { std::puts(\"mine ran\"); }\n")
        rc, out, _ = self.s.run([mine], show=[mine])
        self.assertEqual((rc, out.strip()), (0, "mine ran"))
        rc, out, _ = self.s.run([self.s.ref])
        self.assertNotEqual(rc, 0)
        self.assertNotIn("the reference ran", out)

    def test_a_reference_copy_is_closed_to_student_uids(self):
        # Even in view (a weak fence), only the reference's group may read or run it.
        if not STRONG.drops_uid:
            self.skipTest("the fence keeps the grader's uid here")
        st = os.stat(self.s.ref)
        self.assertEqual((st.st_gid, stat.S_IMODE(st.st_mode)), (fence.REF_GID, 0o550))
        weak = Scratch(fence.Fence("unshare+setpriv"))
        try:
            rc, out, _ = weak.run([self.s.ref])
            self.assertNotIn("the reference ran", out)
            rc, out, _ = weak.run([self.s.ref], reference=True)
            self.assertIn("the reference ran", out)
        finally:
            weak.close()

    def test_no_network_no_root_limits(self):
        rc, out, _ = self.s.run(["/bin/bash", "-c", "cat /proc/net/dev | grep -c :; id -u; id -g; ulimit -u; "
                                 "ulimit -f; ulimit -t; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status"])
        lines = out.split()
        self.assertEqual(lines[0], "1", out)  # lo only, and it is down
        if STRONG.drops_uid:
            self.assertNotIn(lines[1], ("0", str(os.getuid())))
            self.assertNotEqual(lines[2], "0")
        self.assertEqual(lines[3:6], ["256", str((256 << 20) // 1024), "70"])  # a 30 s run: 70 s of CPU
        self.assertIn("0000000000000000", out)  # no capability
        self.assertRegex(out, r"NoNewPrivs:\s+1")
        lo = socket.socket()
        lo.bind(("127.0.0.1", 0))
        lo.listen(1)
        rc, out, _ = self.s.run(["/bin/bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{lo.getsockname()[1]} && "
                                 "echo CONNECTED"])
        lo.settimeout(0.5)
        with self.assertRaises(socket.timeout):
            lo.accept()
        lo.close()
        self.assertNotIn("CONNECTED", out)

    def test_no_host_path_in_argv_cwd_environment_or_mount_points(self):
        """The jail is /lab, the program /lab-programs/0/NAME: its argv (an --out=PATH in the jail
        included), its executable, cwd, HOME, TMPDIR and every mount point name neither the
        scratch folder nor the program's place."""
        prog = self.s.program('#include <cstdio>\n#include <unistd.h>\nint main(int, char** v) {\n'
                              '  char b[4096]; ssize_t n = readlink("/proc/self/exe", b, 4095);\n'
                              '  b[n > 0 ? n : 0] = 0; std::printf("EXE=%s\\n", b); fflush(stdout);\n'
                              '  return execl("/bin/sh", "sh", "-c", v[2], "sh", v[1], (char*)0); }\n')
        script = ('echo "CWD=$(pwd) ARG=$1"; tr "\\0" "\\n" < /proc/self/environ; '
                  'awk \'{print "POINT=" $5}\' /proc/self/mountinfo')
        slot = self.s.f.take_slot()
        try:
            jail = self.s.f.jail(self.s.top, slot, "paths")
            rc, out, _ = self.s.f.run([str(prog), f"--out={jail}/out.txt", script], jail, slot, 30,
                                      show=[prog])
        finally:
            self.s.f.give_slot(slot)
        self.assertEqual(rc, 0, out)
        self.assertIn("CWD=/lab ARG=--out=/lab/out.txt", out)
        self.assertIn("EXE=/lab-programs/0/" + prog.name, out)
        self.assertIn("HOME=/lab", out)
        self.assertIn("TMPDIR=/lab/tmp", out)
        self.assertIn("POINT=/lab\n", out)
        self.assertNotIn(str(self.s.top), out)
        self.assertNotIn(self.s.top.name, out)

    def test_mountinfo_names_nothing_of_the_host(self):
        """Issue 42, item 5: /proc/self/mountinfo, every column (a bind's root column names its
        source's path within its file system), names neither the scratch folder nor the
        program's place: the jail and the program are copied into file systems of their own."""
        prog = self.s.program('#include <cstdio>\nint main() { std::puts("ran"); }\n')
        slot = self.s.f.take_slot()
        try:
            jail = self.s.f.jail(self.s.top, slot, "mounts")
            rc, out, _ = self.s.f.run(["/bin/sh", "-c", f"cat /proc/self/mountinfo /proc/1/mountinfo; "
                                       f"{fence.SHOWN_AT}/0/{prog.name}"],
                                      jail, slot, 30, home=jail, show=[prog])
        finally:
            self.s.f.give_slot(slot)
        self.assertEqual(rc, 0, out)
        self.assertIn(" /lab ", out)
        self.assertIn("ran", out)
        for leak in (str(self.s.top), self.s.top.name, str(prog.parent)):
            self.assertNotIn(leak, out)

    def test_the_jail_comes_back_as_it_was_left(self):
        """The jail is copied in and back out: what the command wrote, changed and removed is so
        on the grading machine after it; a link comes back a link (never followed), a FIFO a
        FIFO; times are kept (make's view of a build tree)."""
        slot = self.s.f.take_slot()
        try:
            jail = self.s.f.jail(self.s.top, slot, "back")
            (jail / "keep.txt").write_text("kept")
            (jail / "change.txt").write_text("old")
            (jail / "gone.txt").write_text("gone")
            os.utime(jail / "keep.txt", ns=(10**18, 10**18))
            if self.s.f.drops_uid:
                for p in jail.iterdir():
                    os.chown(p, self.s.f.uid(slot), self.s.f.uid(slot))
            script = ("import os\nopen('change.txt', 'w').write('new')\nos.unlink('gone.txt')\n"
                      "os.makedirs('d/e')\nopen('d/e/f.txt', 'w').write('deep')\n"
                      "os.symlink('/etc/passwd', 'link')\nos.mkfifo('fifo')\nprint('made')")
            rc, out, _ = self.s.f.run(["python3", "-c", script], jail, slot, 30, home=jail)
        finally:
            self.s.f.give_slot(slot)
        self.assertEqual(rc, 0, out)
        self.assertEqual((jail / "keep.txt").read_text(), "kept")
        self.assertEqual((jail / "keep.txt").stat().st_mtime_ns, 10**18)
        self.assertEqual((jail / "change.txt").read_text(), "new")
        self.assertFalse((jail / "gone.txt").exists())
        self.assertEqual((jail / "d" / "e" / "f.txt").read_text(), "deep")
        self.assertEqual(os.readlink(jail / "link"), "/etc/passwd")
        self.assertTrue(stat.S_ISFIFO(os.lstat(jail / "fifo").st_mode))

    def test_a_jail_too_full_is_not_copied_back(self):
        """The copy back is bounded, and measured before anything is written: a command that
        leaves more entries than fence_init.py's COPY_FILES, or more bytes than COPY_BYTES (sparse
        files: a copy writes each one's whole length) or folders more than 64 deep, is told so, its
        run fails and its jail stays as it was."""
        for what, script in (("entries", "for i in range(100001): open(f'f{i}', 'w')"),
                             ("bytes", "for i in range(5):\n  f = open(f's{i}', 'wb'); f.seek(255 << 20); f.write(b'x')"),
                             ("depth", "import os\nos.makedirs('/'.join(['d'] * 70))")):
            slot = self.s.f.take_slot()
            try:
                jail = self.s.f.jail(self.s.top, slot, f"full-{what}")
                rc, out, _ = self.s.f.run(["python3", "-c", script + "\nprint('made')"], jail, slot, 120,
                                          home=jail)
            finally:
                self.s.f.give_slot(slot)
            self.assertIn("made", out, what)
            self.assertEqual(rc, 125, out)
            self.assertIn("nothing of it copied back", out)
            self.assertEqual(sorted(p.name for p in jail.iterdir()), ["tmp"], what)

    def test_memory_limit_or_the_reason_why_not(self):
        said = STRONG.describe()
        self.assertTrue("memory.max" in said or "memory unlimited (" in said, said)


@NEEDS_STRONG
class Syscalls(unittest.TestCase):
    """The seccomp filter: in place in every fenced command, refusing what is not on the list with
    EPERM; and the measurement that made the list records what a command calls, refusing nothing."""

    def test_the_filter_is_in_place_and_refuses_with_eperm(self):
        if STRONG.filter is None:
            self.skipTest("no seccomp filter here (not x86-64)")
        s = Scratch(STRONG)
        try:
            prog = s.program("#include <cstdio>\n#include <cerrno>\n#include <sys/socket.h>\n#include <unistd.h>\n"
                             "#include <sys/syscall.h>\nint main() {\n"
                             "  int u = socket(AF_UNIX, SOCK_STREAM, 0);\n"
                             "  errno = 0; int i = socket(AF_INET, SOCK_STREAM, 0); int ei = errno;\n"
                             "  errno = 0; long p = syscall(SYS_personality, 0xffffffffL); int ep = errno;\n"
                             "  std::printf(\"unix %d inet %d %d personality %ld %d\\n\", u >= 0, i, ei, p, ep);\n}\n")
            rc, out, _ = s.run([prog], show=[prog])
            self.assertEqual(out.strip(), "unix 1 inet -1 1 personality -1 1", out)  # EPERM is 1
            rc, out, _ = s.sh("grep Seccomp: /proc/self/status")
            self.assertRegex(out, r"Seccomp:\s+2")  # a filter
        finally:
            s.close()

    def test_the_measurement_records_and_refuses_nothing(self):
        log = Path(tempfile.mkdtemp(prefix="lab-measure-")) / "m.txt"
        old = os.environ.get("LAB_SECCOMP_MEASURE")
        os.environ["LAB_SECCOMP_MEASURE"] = str(log)
        try:
            f = fence.Fence(STRONG.kind)
            s = Scratch(f)
            try:
                rc, out, _ = s.run(["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9 || echo refused"])
            finally:
                s.close()
        finally:
            if old is None:
                del os.environ["LAB_SECCOMP_MEASURE"]
            else:
                os.environ["LAB_SECCOMP_MEASURE"] = old
        nums = {int(n) for n in log.read_text().split()[1:]}
        self.assertTrue({59, 41, 42} <= nums, nums)  # execve, and the socket and connect it tried
        self.assertIn("measured", f.describe())
        shutil.rmtree(log.parent, ignore_errors=True)

    def test_the_filter_lets_the_list_through_and_nothing_else(self):
        code = bytes.fromhex(fence.seccomp_filter([0, 41, 60]))
        self.assertEqual(len(code) % 8, 0)
        # arch check (3), ld nr, x32 (2), read (2), socket with its argument (5), exit (2), EPERM
        self.assertEqual(len(code) // 8, 3 + 1 + 2 + 2 + 5 + 2 + 1)
        self.assertNotIn(41, [n for n in fence.allowed_syscalls().values() if n in (101, 135, 165, 272, 321, 298, 425)])
        for never in ("ptrace", "personality", "mount", "unshare", "bpf", "perf_event_open", "io_uring_setup",
                      "keyctl", "add_key", "kexec_load", "setns", "seccomp"):
            self.assertNotIn(never, fence.allowed_syscalls())


@NEEDS_STRONG
class Kill(unittest.TestCase):
    def test_double_fork_setsid_cleared_environment_ends_with_the_run(self):
        s = Scratch(STRONG)
        mark = f"4711.{os.getpid()}"
        try:
            rc, out, _ = s.sh(f"(setsid env -i /bin/sh -c 'sleep {mark} </dev/null >/dev/null 2>&1 &' &); "
                              f"sleep 0.3; echo started")
            self.assertIn("started", out)
            time.sleep(0.2)
            self.assertEqual(fence_cheats.alive(mark), [])
            started = time.time()
            rc, out, _ = s.sh(f"setsid sleep {mark} & sleep 100", timeout=2)
            self.assertEqual(rc, "timeout")
            self.assertLess(time.time() - started, 15)
            self.assertEqual(fence_cheats.alive(mark), [])
        finally:
            s.close()


class SafeReads(unittest.TestCase):
    """Root never follows a link, waits on a FIFO or reads without a bound where fenced code
    could have written."""

    def setUp(self):
        self.d = Path(tempfile.mkdtemp())
        self.secret = self.d / "secret"
        self.secret.write_text("SECRET")
        self.secret.chmod(0o600)

    def test_links_fifos_sizes_and_folders_on_the_way(self):
        j = self.d / "jail"
        (j / "tree").mkdir(parents=True)
        os.symlink(self.secret, j / "link")
        os.mkfifo(j / "fifo")
        (j / "big").write_bytes(b"x" * 5000)
        os.symlink(self.d, j / "up")
        started = time.time()
        self.assertEqual(fence.safe_read(j / "link")[0], None)
        self.assertEqual(fence.safe_read(j / "fifo"), (None, "not a regular file"))
        self.assertEqual(len(fence.safe_read(j / "big", 100)[0]), 100)
        self.assertEqual(fence.safe_read(j / "up" / "secret", under=j)[0], None)
        self.assertEqual(fence.safe_read(j / "tree" / "none", under=j), (None, "missing"))
        self.assertLess(time.time() - started, 2)

    def test_a_replaced_sanitizer_log_scores_zero_and_reaches_no_report(self):
        # A fake sanitizer writes its log and runs the program; the program puts a link to a
        # secret (then a FIFO) in the log's place, as the fence cheats do on a GPU.
        tk = Path(tempfile.mkdtemp(prefix="lab-toolkit-"))  # shown as the CUDA toolkit is
        tk.chmod(0o755)
        (tk / "bin").mkdir()
        san = tk / "bin" / "sanitizer"
        s = Scratch(fence.Fence(STRONG.kind if STRONG.namespaces else "setsid", tools=[san]))
        try:
            san.write_text('#!/bin/sh\nwhile [ "$1" != --log-file ]; do shift; done\n'
                           'echo "========= ERROR SUMMARY: 0 errors" > "$2"; shift 2; exec "$@"\n')
            san.chmod(0o555)
            g = score.Grader(None, s.f, s.top, 20, str(san))
            for how in (f"ln -sf {self.secret} sanitizer.log", "rm -f sanitizer.log; mkfifo sanitizer.log"):
                prog = s.top / "bin" / f"prog-{time.time_ns()}"
                prog.write_text(f"#!/bin/sh\n{how}\n")
                prog.chmod(0o555)
                started = time.time()
                with self.assertRaises(score.Tampered) as e:
                    g.run_driver(prog, "sanitize", 1, 20, "memcheck")
                self.assertNotIn("SECRET", str(e.exception))
                self.assertLess(time.time() - started, 15)
            # The honest log is read.
            prog = s.top / "bin" / "honest"
            prog.write_text("#!/bin/sh\ntrue\n")
            prog.chmod(0o555)
            self.assertIn("ERROR SUMMARY: 0", g.run_driver(prog, "sanitize", 1, 20, "memcheck")[1])
        finally:
            s.close()
            shutil.rmtree(tk, ignore_errors=True)


class NeutralPaths(unittest.TestCase):
    """fence.translate: the jail's and the shown programs' host paths, whole or as a prefix (an
    option's value, a list of paths), become /lab and /lab-programs; a longer name that only
    starts like one stays as it is."""

    def test_translate(self):
        p = fence.neutral_paths("/s/x/j-1", ["/s/x/bin/p-9"])
        for host, inside in [("/s/x/j-1", "/lab"), ("--out=/s/x/j-1/out.txt", "--out=/lab/out.txt"),
                             ("a:/s/x/j-1:b", "a:/lab:b"), ("/s/x/bin/p-9", "/lab-programs/0/p-9"),
                             ("/s/x/j-12/a", "/s/x/j-12/a"), ("/s/x/j-1.bak", "/s/x/j-1.bak")]:
            self.assertEqual(fence.translate(host, p), inside)


class WeakFence(unittest.TestCase):
    def test_refused_without_the_flag(self):
        with tempfile.TemporaryDirectory() as d:
            sub = Path(d) / "s"
            subprocess.run([sys.executable, str(REPO / "scripts" / "lab.py"), "make", "ch02", str(sub)],
                           stdout=subprocess.DEVNULL, check=True)
            base = [sys.executable, str(REPO / "scripts" / "lab.py"), "grade", str(sub), "--lab", "ch02",
                    "--fence", "setsid", "--work", str(Path(d) / "w"), "--out", str(Path(d) / "r")]
            r = subprocess.run(base, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn("REFUSED", r.stdout)
            self.assertIn("--accept-weak-fence", r.stdout)
            self.assertFalse((Path(d) / "r").exists())
            if fence.gpu_probe() is not None:  # here it then stops for want of a GPU, and says so
                r = subprocess.run(base + ["--accept-weak-fence"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=60)
                self.assertEqual(r.returncode, 77, r.stdout)
                self.assertTrue(r.stdout.startswith("fence: setsid"), r.stdout[:200])
                import json
                doc = json.loads((Path(d) / "r" / "results.json").read_text())
                self.assertEqual(list(doc)[:2], ["fence", "fence_detail"])  # at the report's top
                self.assertEqual(doc["fence"], "setsid")
                self.assertIn('<property name="fence" value="setsid:', (Path(d) / "r" / "junit.xml").read_text())


class Attacks(unittest.TestCase):
    """The fence cheats' attacks: nothing gets through the namespace fence; through the
    weakest fence, the attacks that it cannot stop get through (the checks can fail)."""

    def attack(self, f, name):
        s = Scratch(f)
        try:
            port = 0
            if name == "reaches-the-network":
                fence_cheats.LISTENERS[name] = fence_cheats.Listener()
                port = fence_cheats.LISTENERS[name].port
            if name == "sanitizer-log-symlink":
                fence_cheats.SECRETS[name] = fence_cheats.secret_file(name)
            # Writes only into this test's own cache: through the weakest fence the attack gets
            # out, and beside a lab self-test (ctest runs them side by side) it overwrote the
            # self-test's cached references, found through its command line's --work.
            prog = s.program(fence_cheats.program(name, port, main=True, write_root=f"{s.work}/"))
            # The paths that the grader's command lines show (ctest's lab.py line, --work).
            rc, out, _ = s.run([prog, f"--work={s.work}", f"{REPO}/scripts/lab.py"], show=[prog],
                               timeout=40)
            time.sleep(0.3)
            found = fence_cheats.problems(name, out, s.work)
            if name == "sanitizer-log-symlink":  # the planted link: the grader's read refuses it
                jail = [p for p in s.top.iterdir() if p.name.startswith("j-")][0]
                self.assertEqual(fence.safe_read(jail / "sanitizer.log")[0], None)
            return out, found
        finally:
            fence_cheats.cleanup(name)
            s.close()

    def names(self, f):
        skip = set()
        if not (f.cgroup and f.cgroup.base):
            skip.add("memory-hog")  # no memory limit here: it would take 24 GiB of this machine
        return [n for n in fence_cheats.ATTACKS if n not in skip]

    def test_every_attack_is_a_cheat_of_the_suite(self):
        import cheats
        mine = [c for c in cheats.CHEATS if c["name"].startswith("fence-")]
        self.assertGreaterEqual(len(mine), 8)
        self.assertEqual(sorted(c["name"][6:] for c in mine), sorted(fence_cheats.ATTACKS))
        for c in mine:  # graded past the lint, on a GPU; the attacked task scores 0
            self.assertEqual((c["lint"], c["gpu"], c["zero"]), (False, True, ["ch02.2"]), c["name"])
            self.assertTrue(c["tries"] and callable(c["after"]))

    @NEEDS_STRONG
    def test_nothing_gets_through_the_fence(self):
        for name in self.names(STRONG):
            with self.subTest(name):
                out, found = self.attack(STRONG, name)
                self.assertEqual(found, [], out[-1500:])

    def test_through_the_weakest_fence_they_do(self):
        weak = fence.Fence("setsid")
        leaked = {}
        # A grader beside this test (ctest runs lab.fence beside the lab self-tests), its --work
        # on its command line: the attacks that get out must not reach its cache.
        bystander = Path(tempfile.mkdtemp(prefix="lab-bystander-"))
        driver = bystander / "cache" / "k" / "driver"
        driver.parent.mkdir(parents=True)
        driver.write_text("#!/bin/sh\necho reference\n")
        # (its own session, no pipe of ctest's: its sleep must not keep the test open after it)
        beside = subprocess.Popen(["bash", "-c", "sleep 60; :", "grader", f"--work={bystander}"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            for name in ("runs-reference-found-on-disk", "reads-course-repo-via-proc",
                         "leaves-files-in-tmp-and-shm", "outlives-the-grade", "poisons-reference-cache",
                         "reaches-the-network", "syscalls-outside-the-list", "sees-the-graders-paths"):
                out, found = self.attack(weak, name)
                leaked[name] = found
            self.assertEqual(driver.read_text(), "#!/bin/sh\necho reference\n")
        finally:
            os.killpg(beside.pid, 9)
            beside.wait()
            shutil.rmtree(bystander, ignore_errors=True)
        self.assertEqual([n for n, f in leaked.items() if not f], [], leaked)


if __name__ == "__main__":
    unittest.main(verbosity=1)

#!/usr/bin/env python3
"""Unit tests of the grader's stages (labs/grader), one class per module; no GPU and no
compiler needed. Run: python3 tests/labs/test_stages.py (ctest: lab.unit, label cpu)."""
import io
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
from grader import build, fence, intake, kit, labs, lint, report, score, verify  # noqa: E402

SOURCE = """int f(int n) {
    // LAB t.one {
    int secret_answer = n * 42;
    // LAB }
    return secret_answer;
}
"""
LAB = {"chapter": "t", "folder": "t", "title": "t", "files": ["f.cu"],
       "tasks": [{"id": "t.1", "title": "t", "file": "f.cu", "points": {"tests": 3},
                  "regions": {"t.one": {"todo": "compute it", "stub": ["int secret_answer = 0;"],
                                        "kind": "device", "calls": []}}}]}


class Labs(unittest.TestCase):
    def test_regions_and_refusals(self):
        self.assertEqual(labs.regions(SOURCE, "f.cu"), {"t.one": (1, 3, "    ")})
        with self.assertRaises(labs.LabError):
            labs.regions("// LAB a {\nx\n", "f.cu")
        with self.assertRaises(labs.LabError):
            labs.regions("// LAB a {\n// LAB b {\n// LAB }\n// LAB }\n", "f.cu")

    def test_skeleton_and_splice(self):
        skel = labs.skeleton(SOURCE, LAB, "f.cu")
        self.assertIn("// TODO(lab t.1): compute it", skel)
        self.assertNotIn("n * 42", skel)
        student = "// notes\n" + SOURCE.replace("n * 42", "n * 41").replace("return", "return 1+")
        out = labs.splice(SOURCE, student, LAB["tasks"][0], "ref.cu", "mine.cu")
        self.assertIn("n * 41", out)
        self.assertIn("return secret_answer;", out)  # outside the markers: the grader's copy
        self.assertIn('#line 4 "mine.cu"', out)

    def test_every_lab_kit_holds_no_solution_line(self):
        for lab in labs.load_labs()["labs"]:
            with tempfile.TemporaryDirectory() as d:
                kit.cmd_make(lab["chapter"], Path(d) / "k")
                self.assertEqual(kit.kit_leaks(lab, Path(d) / "k"), [], lab["chapter"])
                self.assertFalse((Path(d) / "k" / ".lab.json").exists())

    def test_the_leak_check_can_fail(self):
        lab = labs.find_lab("ch04")[0]
        with tempfile.TemporaryDirectory() as d:
            kit.cmd_make("ch04", Path(d) / "k", solution=True)
            self.assertTrue(kit.kit_leaks(lab, Path(d) / "k"))


class Intake(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp())
        (self.dir / "t").mkdir()

    def test_regular_text_file_is_taken_and_nothing_else_read(self):
        (self.dir / "t" / "f.cu").write_text(SOURCE)
        (self.dir / ".lab.json").write_text('{"chapter": "ch05"}')
        got = intake.take(self.dir, LAB)
        self.assertEqual(got["f.cu"][0], SOURCE)

    def test_refusals(self):
        p = self.dir / "t" / "f.cu"
        cases = {"symbolic link": lambda: os.symlink("/etc/hostname", p), "FIFO": lambda: os.mkfifo(p),
                 "directory": lambda: p.mkdir(), "bytes": lambda: p.write_text("x" * 70000),
                 "NUL": lambda: p.write_bytes(b"a\0b"), "UTF-8": lambda: p.write_bytes(b"\xff\xfe")}
        for word, make in cases.items():
            make()
            started = time.time()
            text, why, _ = intake.take(self.dir, LAB)["f.cu"]
            self.assertIsNone(text, word)
            self.assertIn(word, why)
            self.assertLess(time.time() - started, 5)  # a FIFO never hangs the grader
            if p.is_dir() and not p.is_symlink():
                p.rmdir()
            else:
                p.unlink()

    def test_a_symlinked_folder_on_the_way_is_refused(self):
        other = Path(tempfile.mkdtemp())
        (other / "f.cu").write_text(SOURCE)
        (self.dir / "t").rmdir()
        os.symlink(other, self.dir / "t")
        text, why, _ = intake.take(self.dir, LAB)["f.cu"]
        self.assertIsNone(text)
        self.assertIn("symbolic link", why)


class Lint(unittest.TestCase):
    def lint(self, *lines, kind="device", calls=()):
        return lint.lint_region(list(lines), 10, {"kind": kind, "calls": list(calls)}, "f.cu", "r")

    def test_every_solution_region_passes(self):
        for lab in labs.load_labs()["labs"]:
            for task in lab["tasks"]:
                text = (REPO / lab["folder"] / task["file"]).read_text()
                for name, spec in task["regions"].items():
                    body, first = labs.region_body(text, name, task["file"])
                    self.assertEqual(lint.lint_region(body, first, spec, task["file"], name), [], name)

    def test_violations_name_line_and_rule(self):
        cases = [(("}", "int x;", "void g() {"), "leaves its function"),
                 (("#include <x>",), "preprocessor"), (("%>",), "digraph"), (("??>",), "trigraph"),
                 (("// a \\",), "line splice"), (("/* open",), "unterminated comment"),
                 (("asm(\"exit;\");",), "forbidden word"), (("static int k;",), "forbidden word"),
                 (("printf(\"x\");",), "forbidden word"), (("long t = clock64();",), "forbidden word"),
                 (("(system)(\"x\");",), "call through an expression"),
                 (("(int)(system)(\"x\");",), "call through an expression"),
                 (("std::system(\"x\");",), "qualified name"), (("foo(1);",), "call not allowed"),
                 (("int x = 1; {",), "leaves its function"), (("x = \"é\";",), "not plain text")]
        for lines, rule in cases:
            found = self.lint(*lines)
            self.assertTrue(any(rule in f for f in found), (lines, found))
            self.assertTrue(found[0].startswith("f.cu:1"), found)

    def test_allowed_calls_and_declarations(self):
        self.assertEqual(self.lint("dim3 threads(4, 4);", "dim3 b(ceil_div(n, 4), 1);", kind="host"), [])
        self.assertEqual(self.lint("v += __shfl_down_sync(FULL_WARP, v, 16);", "__syncthreads();"), [])
        self.assertEqual(self.lint("if (t > (maxz)) r = s[i].hit(ox, oy, &n);", calls=[".hit"]), [])
        self.assertTrue(self.lint("r = s[i].hit(ox, oy, &n);"))
        self.assertEqual(self.lint("float f = float(i) * 2.0f;", "c[i] = (elem_t)(a[i]);"), [])

    def test_host_regions_take_no_address_and_cast_nothing(self):
        host = dict(kind="host", calls=["run_op"])
        for code, rule in [("int* q = &p.steps;", "address in a host region"),
                           ("run_op(p, *q, 0, 0, false);", "address in a host region"),
                           ("long long at = (long long)p.n;", "cast in a host region"),
                           ("long long at = (unsigned long long)x;", "cast in a host region"),
                           ("auto at = static_cast<long long>(x);", "cast in a host region"),
                           ("long long at = int(x);", "cast in a host region")]:
            found = self.lint(code, **host)
            self.assertTrue(any(rule in f for f in found), (code, found))
        spec = dict(kind="host", calls=["run_op"])
        self.assertEqual(lint.lint_region(["for (int op = H2D; op <= D2H; op++) run_op(p, (Op)op, 0, 0, false);",
                                           "if (ready) run_op(p, H2D, c * 2, s, false);"], 1,
                                          dict(spec, casts=["Op"]), "f.cu", "r"), [])
        self.assertTrue(self.lint("run_op(p, (Op)op, 0, 0, false);", **host))  # Op not in its casts
        self.assertEqual(self.lint("int b = (int)x & 1; float f = (float)(i) * 2;"), [])  # device: fine


def another_grader(code):
    """The command line of a grader process of its own (its own uids, its own threads): Python
    with the grader's fence imported, then code."""
    return [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1])\n"
            "from grader import fence\n" + code, str(Path(fence.__file__).parent.parent)]


class Fence(unittest.TestCase):
    def setUp(self):
        self.fence = fence.Fence()
        self.dir = Path(tempfile.mkdtemp())
        self.dir.chmod(0o711)

    def run_fenced(self, script, timeout=20):
        slot = self.fence.take_slot()
        try:
            jail = self.fence.jail(self.dir, slot, f"j{time.time_ns()}")
            return self.fence.run(["/bin/sh", "-c", script], jail, slot, timeout)
        finally:
            self.fence.give_slot(slot)

    def test_a_waiting_run_runs_only_at_its_go(self):
        # A timed run started ahead of its turn (Fence.start waits=True) waits on its stdin; go()
        # writes its one byte, and a run finished without one reads end of file.
        script = 'x=$(head -c 1); [ -n "$x" ] || exit 76; echo "turn $x"'
        for go in (True, False):
            slot = self.fence.take_slot()
            try:
                jail = self.fence.jail(self.dir, slot, f"w{time.time_ns()}")
                run = self.fence.start(["/bin/sh", "-c", script], jail, slot, 20, waits=True)
                time.sleep(0.5)
                self.assertIsNone(run.proc.poll(), "it did not wait for its turn")
                if go:
                    run.go()
                rc, out, _ = run.finish(20)
            finally:
                self.fence.give_slot(slot)
            self.assertEqual((rc, out.strip()), (0, "turn g") if go else (76, ""))
        # Any other run's stdin is closed.
        self.assertEqual(self.run_fenced('x=$(head -c 1); echo "[$x]"')[1].strip(), "[]")

    def test_time_limit_kills_the_group(self):
        started = time.time()
        rc, _, _ = self.run_fenced("sleep 100 & sleep 100", timeout=2)
        self.assertEqual(rc, "timeout")
        self.assertLess(time.time() - started, 20)

    def test_a_setsid_process_does_not_outlive_the_run(self):
        marker = f"sleep 299.{os.getpid()}"  # a process no one else runs
        rc, _, killed = self.run_fenced(f"setsid {marker} </dev/null >/dev/null 2>&1 & sleep 0.5; echo started")
        self.assertEqual(rc, 0)
        time.sleep(0.2)
        alive = subprocess.run(["pgrep", "-f", marker], stdout=subprocess.PIPE).stdout.strip()
        self.assertEqual(alive, b"", "a process of the run is still alive")
        if not self.fence.namespaces:  # there the kernel ends them with the PID namespace
            self.assertGreaterEqual(killed, 1)

    def test_output_is_capped_and_environment_cleared(self):
        os.environ["LAB_SECRET_OF_THE_GRADER"] = "x"
        rc, out, _ = self.run_fenced("env; head -c 5000000 /dev/zero | tr '\\0' a")
        self.assertNotIn("LAB_SECRET_OF_THE_GRADER", out)
        self.assertLess(len(out), fence.HEAD + fence.TAIL + 1000)
        self.assertIn("bytes of output dropped", out)

    def test_no_network_and_no_root(self):
        if self.fence.kind == "setsid":
            self.skipTest(f"fence {self.fence.kind}: no network namespace here")
        rc, out, _ = self.run_fenced("cat /proc/net/dev | wc -l; id -u")
        lines = out.split()
        self.assertLessEqual(int(lines[0]), 3)  # only lo (down): no network interface
        if self.fence.drops_uid:
            self.assertNotEqual(lines[1], "0")

    def test_two_graders_never_share_a_uid(self):
        # Each grader kills every process of a run's uid when the run ends. Another grader on
        # the same machine (ctest runs the lab self-tests side by side) must not lose its run.
        if not self.fence.drops_uid:
            self.skipTest(f"fence {self.fence.kind}: every run keeps the grader's own uid")
        other = subprocess.Popen(another_grader(
            "import tempfile; from pathlib import Path\n"
            "f = fence.Fence(); slot = f.take_slot(); d = Path(tempfile.mkdtemp()); d.chmod(0o711)\n"
            "print(f.uid(slot), flush=True)\n"
            "rc, out, _ = f.run(['/bin/sh', '-c', 'sleep 3; echo survived'], f.jail(d, slot, 'j'), slot, 20)\n"
            "print(rc, out.strip(), flush=True)"), stdout=subprocess.PIPE, text=True)
        other_uid = int(other.stdout.readline())
        slot = self.fence.take_slot()
        try:
            self.assertNotEqual(self.fence.uid(slot), other_uid)
        finally:
            self.fence.give_slot(slot)
        for _ in range(3):  # runs (and sweeps) of this grader while the other one's run goes on
            self.assertEqual(self.run_fenced("true")[0], 0)
        self.assertEqual(other.communicate(timeout=30)[0].strip(), "0 survived")

    def test_threads_of_one_grader_share_one_uid_block(self):
        # The grader's build threads ask for their uids at once, at first use. A jail chowned to
        # one uid and built in as another fails to compile (H200: the first builds of every lab).
        if not self.fence.drops_uid:
            self.skipTest(f"fence {self.fence.kind}: every run keeps the grader's own uid")
        out = subprocess.run(another_grader(
            "import threading\n"
            "f = fence.Fence(); go = threading.Barrier(16); seen = []\n"
            "def ask():\n"
            "    go.wait(); seen.append(f.uid(0))\n"
            "ts = [threading.Thread(target=ask) for _ in range(16)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "print(len(set(seen)), len(seen))"), stdout=subprocess.PIPE, text=True,
            timeout=60).stdout.split()
        self.assertEqual(out, ["1", "16"], "threads of one grader were given uids of different blocks")

    def test_no_gpu_wording(self):
        why = fence.gpu_probe()
        if why:
            self.assertTrue(why.startswith("no usable CUDA device ("), why)


def fake_nvcc(script):
    """(folder, path): an executable `nvcc` in a new folder that runs SCRIPT (shell lines)
    instead of compiling: a build's stand-in where the test is about the grader, not nvcc."""
    d = Path(tempfile.mkdtemp())
    nvcc = d / "nvcc"
    nvcc.write_text("#!/bin/sh\n" + script)
    nvcc.chmod(0o755)
    return d, nvcc


class Build(unittest.TestCase):
    @unittest.skipUnless(shutil.which("nvcc"), "no nvcc: the module cannot be built here")
    def test_device_code_is_the_module_that_defines_the_kernel(self):
        # The launcher's module: the fat binary of a built program that holds the kernel named
        # in labs.json (a ch04.3 name here), taken from the program's .nv_fatbin section.
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "k.cu"
            src.write_text("__global__ void matmul_sm(const float* M, const float* N, float* P, int W)"
                           " { if (threadIdx.x == 0) P[0] = M[0] + N[0] + W; }\nint main() { return 0; }\n")
            subprocess.run(["nvcc", "-arch=sm_90", "-o", str(Path(d) / "k"), str(src)], check=True,
                           capture_output=True)
            kernel = next(t for l in labs.load_labs()["labs"] for t in l["tasks"]
                          if t["id"] == "ch04.3")["perf"]["launcher"]["kernel"]
            module = build.device_code(Path(d) / "k", kernel)
            self.assertEqual(module[:4], bytes.fromhex("50ed55ba"))  # a fat binary's magic
            self.assertIn(kernel.encode(), module)
            (Path(d) / "not-a-program").write_bytes(b"#!/bin/sh\n")
            with self.assertRaises(labs.LabError):
                build.device_code(Path(d) / "not-a-program", kernel)

    def test_driver_for_every_task_and_key_follows_the_text(self):
        b = build.Builder(tempfile.mkdtemp(), "sm_90", "nvcc", fence.Fence("setsid"), False)
        whole = set()
        for lab in labs.load_labs()["labs"]:
            for task in lab["tasks"]:
                self.assertTrue(build.driver_source(task).exists())
                words = b.words(lab, task, "/x/driver")
                self.assertIn("-DCUDA_EXAMPLES_NO_MAIN", words)
                if not build.builds_alone(task):  # the driver includes the program
                    whole.add(task["id"])
                    self.assertIn("grade_driver.cu", words)
                    self.assertNotIn(task["file"], words)
                    continue
                # the program alone, after the driver's object: where both define one inline
                # function, the linker keeps the first copy; both read program_memory.h first
                self.assertNotIn("grade_driver.cu", words)
                self.assertLess(words.index(build.UNIT), words.index(task["file"]))
                unit = b.unit_words(lab, task, "/x/unit.o")
                for w in (words, unit):
                    self.assertEqual(w[w.index("-include") + 1], "lab_program_memory.h")
                self.assertEqual(unit[-4:], ["-c", "-o", "/x/unit.o", "grade_driver.cu"])
                self.assertNotIn(task["file"], unit)
                self.assertNotIn(f'#include "{task["file"]}"', build.driver_source(task).read_text())
        self.assertEqual(whole, {"ch06.1", "ch06.2"})  # their driver reads the program's types
        lab = labs.find_lab("ch02")[0]
        t = lab["tasks"][0]
        self.assertNotEqual(b.key(lab, t, "a"), b.key(lab, t, "b"))

    def test_a_driver_unit_is_built_without_the_program_and_used_only_as_built(self):
        # A fake nvcc that writes an object only where its tree holds no program but the driver.
        d, nvcc = fake_nvcc("[ \"$(ls *.cu)\" = grade_driver.cu ] || exit 1\n"
                            "while [ \"$1\" != -o ]; do shift; done\necho unit > \"$2\"\n")
        lab = labs.find_lab("ch04")[0]
        task = next(t for t in lab["tasks"] if t["id"] == "ch04.3")
        b = build.Builder(d, "sm_90", str(nvcc), fence.Fence("setsid"), False)
        unit = b.driver_unit(lab, task)
        self.assertEqual(unit.read_text(), "unit\n")
        self.assertEqual(b.driver_unit(lab, task), unit)  # cached
        tree = b.tree(lab, task, "// the program", d / "tree", unit)
        self.assertEqual((tree / build.UNIT).read_bytes(), unit.read_bytes())
        self.assertTrue((tree / "MM-GPU-GM.cu").exists())  # the program it includes, not the driver
        unit.chmod(0o644)
        unit.write_bytes(b"changed")
        with self.assertRaises(labs.LabError):
            b.tree(lab, task, "// the program", d / "tree2", unit)
        with self.assertRaises(labs.LabError):
            b.verified(unit)
        b.close()

    def test_two_graders_sharing_a_cache_build_a_reference_once(self):
        # A fake nvcc that takes a moment and writes different bytes each time, as two real
        # builds in two temporary trees do (-lineinfo keeps their paths).
        d, nvcc = fake_nvcc("while [ \"$1\" != -o ]; do shift; done\n"
                            "sleep 1; head -c 64 /dev/urandom > \"$2\"\n")
        lab = labs.find_lab("ch02")[0]
        task = lab["tasks"][0]
        graders = [build.Builder(d / "work", "sm_90", str(nvcc), fence.Fence("setsid"), True)
                   for _ in range(2)]
        got = [None, None]

        def grade(i):
            got[i] = graders[i].reference(lab, task, "the reference's text")[0]
        ts = [threading.Thread(target=grade, args=(i,)) for i in range(2)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        self.assertEqual(got[0], got[1])
        for g in graders:  # each grader's recorded hash still matches the one binary
            g.verified(got[0])

    def test_a_cached_launcher_is_used_only_as_built(self):
        # The launcher shares the references' cache rules (build.py's _cached): reused while it
        # is the grader's own regular file, writable by no one else, with its manifest's hash.
        d, nvcc = fake_nvcc("while [ \"$1\" != -o ]; do shift; done\n"
                            "head -c 64 /dev/urandom > \"$2\"\n")
        b = build.Builder(d / "work", "sm_90", str(nvcc), fence.Fence("setsid"), True)
        first = b.launcher()
        kept = first.read_bytes()
        self.assertEqual(b.launcher().read_bytes(), kept)  # cached: not built again
        first.write_bytes(b"changed")
        self.assertNotEqual(b.launcher().read_bytes(), b"changed")  # changed: built again
        kept = first.read_bytes()
        first.chmod(0o777)
        self.assertNotEqual(b.launcher().read_bytes(), kept)  # writable by others: built again
        b.verified(b.launcher())

    def test_a_changed_binary_is_refused(self):
        b = build.Builder(tempfile.mkdtemp(), "sm_90", "nvcc", fence.Fence("setsid"), False)
        d = Path(tempfile.mkdtemp()) / "key1"
        d.mkdir()
        (d / "driver").write_bytes(b"one")
        b.hashes["key1"] = build.sha256_file(d / "driver")
        b.verified(d / "driver")
        (d / "driver").write_bytes(b"two")
        with self.assertRaises(labs.LabError):
            b.verified(d / "driver")


class FakeRun:
    """A fenced run as the fakes below start it: go() or go(False) says whether its turn came."""
    def __init__(self, said=None):
        self.went, self.said = None, said

    def go(self, go=True):
        self.went = go
        if self.said is not None:
            self.said(go)


def fake_runs(g, run_driver, said=None):
    """Every run of grader g through one fake, run_driver (its arguments): the checked and plan
    runs as g.run_driver, a timed run started ahead (Grader.start_round) when its go comes; one
    whose turn never came runs nothing (driver.h: EXIT_CODE_NO_TURN). said(what, alone, run):
    each start ("start"), go ("go", "drop") and end ("end"), and whether the GPU was held alone."""
    tell = said or (lambda *a: None)
    g.run_driver = run_driver

    def start(binary, mode, seed, timeout, tool, reference, params, show, waits=False):
        started = {"call": (binary, mode, seed, timeout, tool, reference, params, show), "waits": waits,
                   "at": time.time()}
        started["run"] = FakeRun(lambda go: tell("go" if go else "drop", g.gpu.alone(), started))
        tell("start", g.gpu.alone(), started)
        return started

    def end(started, timeout):
        tell("end", g.gpu.alone(), started)
        if not started["run"].went:
            return 76, "", None
        binary, mode, seed, timeout, tool, reference, params, show = started["call"]
        return run_driver(binary, mode, seed, timeout, tool=tool, reference=reference, params=params,
                          show=show)
    g._start_driver, g._end_driver = start, end


def driver_file(path, records, end=True):
    with open(path, "wb") as f:
        for name, (t, a) in records.items():
            f.write(f"rec {name} {t} {len(a)}\n".encode() + a.tobytes())
        if end:
            f.write(b"end\n")


class Verify(unittest.TestCase):
    def test_compare(self):
        import array
        d = Path(tempfile.mkdtemp())
        nan = float("nan")
        ref = {"p": ("f32", array.array("f", [1.0, 2.0, nan])), "c": ("i64", array.array("q", [5, -1])),
               "p.inputs-written": ("i64", array.array("q", [0]))}
        driver_file(d / "ref", ref)
        driver_file(d / "same", ref)
        self.assertTrue(verify.compare_files(d / "ref", d / "same", {})[0])
        keep = {"p.inputs-written": ref["p.inputs-written"]}
        cases = {"past the end": {"p": ("f32", array.array("f", [1.0, 2.0, 7.0])), "c": ref["c"], **keep},
                 "never written": {"p": ("f32", array.array("f", [nan, 2.0, nan])), "c": ref["c"], **keep},
                 "relative error": {"p": ("f32", array.array("f", [1.0, 2.1, nan])), "c": ref["c"], **keep},
                 "values wrong": {"p": ref["p"], "c": ("i64", array.array("q", [5, 0])),
                                  "p.inputs-written": ref["p.inputs-written"]},
                 "wrote into an input": {"p": ref["p"], "c": ref["c"],
                                         "p.inputs-written": ("i64", array.array("q", [1]))},
                 "no output": {"p": ref["p"]}}
        for word, recs in cases.items():
            driver_file(d / "got", recs)
            ok, why = verify.compare_files(d / "ref", d / "got", {"f32": 1e-6})
            self.assertFalse(ok, word)
            self.assertIn(word, why)
        driver_file(d / "cut", ref, end=False)
        self.assertFalse(verify.compare_files(d / "ref", d / "cut", {})[0])

    def test_a_slow_launch_timed_fewer_times_is_compared_launch_by_launch(self):
        # driver.h's timed_launches stops slow code after as few as one launch (TIMED_BUDGET_MS); the
        # grader, whose own program timed it, asks for the reference's records of those launches
        # only: each still checked, and a wrong one still fails.
        import array
        d = Path(tempfile.mkdtemp())

        def launches(count, wrong=None):
            recs = {"start:kernel.warm-up": ("i64", array.array("q", [7]))}
            for r in range(count):
                recs[f"start:kernel.{r}"] = ("i64", array.array("q", [7 if r != wrong else 8]))
                recs[f"start:kernel.{r}.inputs-written"] = ("i64", array.array("q", [0]))
            return recs
        driver_file(d / "ref", launches(20))
        driver_file(d / "slow", launches(3))
        self.assertEqual(verify.launch_of("start:kernel.12.inputs-written", "kernel"), 12)
        self.assertEqual(verify.launch_of("kernel.3", "kernel"), 3)
        self.assertIsNone(verify.launch_of("start:kernel.warm-up", "kernel"))
        self.assertIsNone(verify.launch_of("start:kernels.3", "kernel"))
        ok, why = verify.compare_files(d / "ref", d / "slow", {})
        self.assertFalse(ok)  # without the cut, the missing launches fail
        self.assertIn("start:kernel.3", why)
        self.assertTrue(verify.compare_files(d / "ref", d / "slow", {}, launches=("kernel", 3))[0])
        driver_file(d / "wrong", launches(3, wrong=1))
        self.assertFalse(verify.compare_files(d / "ref", d / "wrong", {}, launches=("kernel", 3))[0])
        driver_file(d / "short", launches(2))  # fewer than it said it timed
        self.assertFalse(verify.compare_files(d / "ref", d / "short", {}, launches=("kernel", 3))[0])
        driver_file(d / "once", launches(1))  # the least: one timed launch
        self.assertTrue(verify.compare_files(d / "ref", d / "once", {}, launches=("kernel", 1))[0])
        # fewer than driver.h's least, even where the timed run says so
        ok, why = verify.compare_files(d / "ref", d / "once", {}, launches=("kernel", 0))
        self.assertFalse(ok)
        self.assertIn("only 0 timed launches", why)

    def test_a_plan_is_read_like_any_output_and_every_value_checked(self):
        # A schedule's plan (ch06.1's plan run): 4 integers an operation, at most 3 a chunk; the
        # student's program wrote the file, so nothing in it is taken on trust.
        import array
        d = Path(tempfile.mkdtemp())
        depth_first = [v for c in range(3) for op in range(3) for v in (op, c, c % 2, 0)]

        def plan(values, kind="i64", name="depth-first.plan"):
            code = {"i64": "q", "u32": "I", "f32": "f"}[kind]
            driver_file(d / "plan", {name: (kind, array.array(code, values))})
            return verify.read_plan(d / "plan", "depth-first.plan", 3, 2)
        ops, why = plan(depth_first)
        self.assertIsNone(why)
        self.assertEqual(ops[:2], [(0, 0, 0, 0), (1, 0, 0, 0)])
        self.assertEqual(len(ops), 9)
        self.assertEqual(plan([]), ([], None))  # empty: the reference's check refuses it, with its why
        refused = {
            "no 'depth-first.plan'": plan(depth_first, name="other"),
            "not 4 integers": plan(depth_first[:-1]),
            "is 4 u32 values, not 4 integers": plan([0, 0, 0, 0], kind="u32"),
            "10 operations, more than the 3 x 3": plan(depth_first + [0, 0, 0, 0]),
            "operation 0: op 3 is outside 0..2": plan([3, 0, 0, 0]),
            "operation 1: op -1 is outside 0..2": plan([0, 0, 0, 0, -1, 0, 0, 0]),
            "operation 0: chunk 3 is outside 0..2": plan([0, 3, 0, 0]),
            "operation 0: chunk -4294967296 is outside": plan([0, -(1 << 32), 0, 0]),
            "operation 0: stream 2 is outside 0..1": plan([0, 0, 2, 0]),
            "operation 0: synchronous 2 is outside 0..1": plan([0, 0, 0, 2]),
            "operation 0: chunk 4294967296 is outside": plan([0, 1 << 32, 0, 0]),
        }
        for word, (got, why) in refused.items():
            self.assertIsNone(got, word)
            self.assertIn(word, why)
        # A file cut short, too large, a link or a FIFO in its place: refused, never followed.
        driver_file(d / "cut", {"depth-first.plan": ("i64", array.array("q", depth_first))}, end=False)
        self.assertIn("no 'end'", verify.read_plan(d / "cut", "depth-first.plan", 3, 2)[1])
        (d / "big").write_bytes(b"rec depth-first.plan i64 0\n" + b"x" * verify.MAX_PLAN_FILE)
        self.assertIn("sane size", verify.read_plan(d / "big", "depth-first.plan", 3, 2)[1])
        plan(depth_first)
        os.symlink(d / "plan", d / "link")
        self.assertEqual(verify.read_plan(d / "link", "depth-first.plan", 3, 2),
                         (None, "the driver's output is not a regular file (not opened (a symbolic link))"))
        os.mkfifo(d / "fifo")
        self.assertEqual(verify.read_plan(d / "fifo", "depth-first.plan", 3, 2),
                         (None, "the driver's output is not a regular file (not a regular file)"))
        self.assertEqual(verify.read_plan(d / "none", "depth-first.plan", 3, 2),
                         (None, "the driver wrote no output file"))


class Score(unittest.TestCase):
    def test_prepare_scores_a_task_alone(self):
        lab = labs.find_lab("ch02")[0]
        with tempfile.TemporaryDirectory() as d:
            kit.cmd_make("ch02", Path(d) / "s", solution=True)
            p = Path(d) / "s" / lab["folder"] / "VA-GPU-N1.cu"
            p.write_text(p.read_text().replace("long long i = blockIdx.x;", "long long i = clock();"))
            got = score.prepare(lab, Path(d) / "s", REPO)
            self.assertIsNone(got["ch02.1"][0])
            self.assertIn("clock", got["ch02.1"][1])
            self.assertIsNotNone(got["ch02.2"][0])

    def test_speed_gate_takes_more_rounds_only_while_under_it(self):
        # A fake driver: each timed run of "who" takes the next time from its list (ms).
        import array
        d = Path(tempfile.mkdtemp())
        task = {"id": "t.1", "perf": {"what": "speed", "variant": "v", "min_ratio": 0.7,
                                      "shapes": {"n": [1000, 2000], "threads": [32, 64]}}}

        def gate(reference, student, calls=None):
            times = {"ref": list(reference), "mine": list(student)}
            g = score.Grader(None, None, d, 30, None, seed=1)

            def run_driver(binary, mode, seed, timeout, tool=None, reference=False, params=(), show=()):
                if calls is not None:
                    calls.append((binary, seed, list(params)))
                self.assertEqual(reference, binary == "ref")
                out = d / f"{binary}-{len(times[binary])}"
                with open(out, "wb") as f:
                    f.write(f"time v {times[binary].pop(0)}\n".encode())
                    f.write(b"rec p f32 2\n" + array.array("f", [1.0, 2.0]).tobytes() + b"end\n")
                return 0, "", out
            g.gpu = score.GpuLock(d / "gpu.lock")
            fake_runs(g, run_driver)
            fast, said = g.perf(task, "ref", "mine")
            return fast, said, 7 - len(times["mine"])

        # Honest and clearly fast (both rounds at least halfway from the gate of 70% to 100%):
        # two rounds; the same shape and seed for both in a round, drawn within the ranges and
        # named in the report, the order flipped every round.
        calls = []
        fast, said, rounds = gate([2] * 7, [2.1, 2.2, 2.0, 9, 9, 9, 9], calls)
        self.assertEqual((fast, rounds), (True, 2))
        self.assertEqual([c[0] for c in calls], ["ref", "mine", "mine", "ref"])
        self.assertEqual(len({tuple(c[2]) for c in calls}), 1)
        self.assertEqual([c[1] for c in calls[0:2]], [calls[1][1]] * 2)
        n, threads = (int(w.split("=")[1]) for w in calls[0][2][1::2])
        self.assertTrue(1000 <= n <= 2000 and 32 <= threads <= 64, calls[0][2])
        self.assertIn(f"n={n} threads={threads}", said)
        # Above the gate but not clearly (80%, under the 85% halfway), or clearly in one round
        # only: three rounds, as a rule.
        fast, said, rounds = gate([2] * 7, [2.5] * 7)
        self.assertEqual((fast, rounds), (True, 3))
        fast, said, rounds = gate([2] * 7, [2.1, 2.6, 2.1, 9, 9, 9, 9])
        self.assertEqual((fast, rounds), (True, 3))
        # Honest, slowed by another job in its first three rounds: more rounds, and it passes.
        fast, said, rounds = gate([2] * 7, [12, 12, 12, 2.1, 9, 9, 9])
        self.assertEqual((fast, rounds), (True, 4))
        self.assertIn("4 alternated rounds", said)
        # Slow in every round: seven rounds, and it fails.
        fast, said, rounds = gate([2] * 7, [4] * 7)
        self.assertEqual((fast, rounds), (False, 7))
        self.assertIn("50% of the reference's speed", said)
        # Far under the gate (1% of the reference's speed) in both rounds: two rounds. Far
        # under it in one round only (another job on the GPU): three, and it passes.
        fast, said, rounds = gate([2] * 7, [400] * 7)
        self.assertEqual((fast, rounds), (False, 2))
        fast, said, rounds = gate([2] * 7, [400, 2.1, 2.1, 9, 9, 9, 9])
        self.assertEqual((fast, rounds), (True, 3))
        # Under PERF_FAR_GONE of the gate in its first round (a thousand times under the
        # slowest honest round seen): one round, and it fails; just above that line: two.
        far = 2 / (score.PERF_FAR_GONE * 0.7)
        calls = []
        fast, said, rounds = gate([2] * 7, [far * 1.01] + [2.1] * 6, calls)
        self.assertEqual((fast, rounds), (False, 1))
        self.assertEqual([c[0] for c in calls], ["ref", "mine"])
        self.assertIn("1 alternated round, ratio 0%", said)
        fast, said, rounds = gate([2] * 7, [far * 0.99] + [2.1] * 6)
        self.assertEqual((fast, rounds), (True, 3))
        # A reference slowed by another job in one round does not make a slow submission fast.
        fast, said, rounds = gate([2, 20, 2, 2, 2, 2, 2], [4] * 7)
        self.assertEqual((fast, rounds), (False, 7))

    def test_timed_runs_open_the_gpu_before_their_turn(self):
        # Every timed run starts ahead of its turn (--wait: it opens the GPU, loads its code and
        # waits) and runs only at its go, which comes while the GPU is held alone. The runs start
        # in the order they run: the gates' first two rounds, gate after gate, at most AHEAD
        # waiting, the first ones before the gates take the GPU; a later round when it is due.
        # Runs whose turn never came (their gate was decided) end at once; every run is reaped,
        # after the hold.
        import array
        d = Path(tempfile.mkdtemp())
        def tasks_of(count):
            return [{"id": f"t.{k}", "perf": {"what": "speed", "variant": "v", "min_ratio": 0.7}}
                    for k in range(1, count + 1)]
        tasks = tasks_of(2)

        def grade(ahead, slow=(), fails=(), very_slow=()):
            def run_driver(binary, mode, seed, timeout, tool=None, reference=False, params=(), show=()):
                out = d / f"out-{os.urandom(4).hex()}"
                ms = 4.0 if binary in very_slow else 2.5 if binary in slow else 2.0
                with open(out, "wb") as f:
                    f.write(f"time v {ms}\nrec p f32 2\n".encode() + array.array("f", [1.0, 2.0]).tobytes() + b"end\n")
                return (1 if binary in fails else 0), "", out
            g = score.Grader(None, None, d, 30, None, seed=1)
            g.gpu = score.GpuLock(d / f"gpu-{os.urandom(3).hex()}.lock")
            g.AHEAD = ahead
            seen = []
            fake_runs(g, run_driver, lambda what, alone, run: seen.append((what, alone, id(run), run)))
            got = g.gates([(t["id"], t, f"ref{k}", f"mine{k}") for k, t in enumerate(tasks, 1)])
            starts = [e for e in seen if e[0] == "start"]
            self.assertTrue(all(e[3]["waits"] and e[3]["call"][1] == "time" for e in starts))
            self.assertTrue(all(e[1] for e in seen if e[0] == "go"), "a go while the GPU was shared")
            dropped = [e[2] for e in seen if e[0] == "drop"]
            self.assertEqual(sorted(e[2] for e in seen if e[0] == "end"), sorted(e[2] for e in starts))
            self.assertTrue(all(not e[1] for e in seen if e[0] == "end" and e[2] in dropped),
                            "a dropped run was reaped while the GPU was held alone")
            self.assertEqual(g.dropped, [])
            return {k: v[0] for k, v in got.items()}, seen, dropped

        for ahead, before in ((score.Grader.AHEAD, 6), (2, 2)):
            got, seen, dropped = grade(ahead)
            self.assertEqual(got, {"t.1": True, "t.2": True})
            self.assertEqual(sum(not e[1] for e in seen if e[0] == "start"), before, ahead)
            went = [e[2] for e in seen if e[0] == "go"]
            self.assertEqual((len(went), dropped), (8, []))  # two gates, two clear rounds each
            for k in range(1, len(went)):  # each run started before the run before it ended
                begun = next(i for i, e in enumerate(seen) if e[2] == went[k] and e[0] == "start")
                ended = next(i for i, e in enumerate(seen) if e[2] == went[k - 1] and e[0] == "end")
                self.assertLess(begun, ended, (ahead, k))
        # Five gates (ch02's self-test has as many): never more than AHEAD runs waiting besides
        # the round being run, and each run still started before the run before it ended.
        tasks = tasks_of(5)
        got, seen, dropped = grade(score.Grader.AHEAD)
        self.assertEqual((got, dropped), ({t["id"]: True for t in tasks}, []))
        waiting, most = set(), 0
        for what, _, run_id, _ in seen:
            if what == "start":
                waiting.add(run_id)
            elif what in ("go", "drop"):
                waiting.discard(run_id)
            most = max(most, len(waiting))
        self.assertLessEqual(most, score.Grader.AHEAD + 2)
        went = [e[2] for e in seen if e[0] == "go"]
        self.assertEqual(len(went), 20)
        for k in range(1, len(went)):
            begun = next(i for i, e in enumerate(seen) if e[2] == went[k] and e[0] == "start")
            ended = next(i for i, e in enumerate(seen) if e[2] == went[k - 1] and e[0] == "end")
            self.assertLess(begun, ended, k)
        tasks = tasks_of(2)
        # Not clearly fast (80% of the reference's speed: under the halfway point, 85%): a third
        # round, started ahead too, as the second is taken. Under the gate (50%): seven rounds,
        # each started as the one before it is taken. No round is started that is not run.
        for slow, very_slow, fast, runs in (({"mine1"}, (), True, 10), ((), {"mine1"}, False, 18)):
            got, seen, dropped = grade(2, slow=slow, very_slow=very_slow)
            self.assertEqual((got, dropped), ({"t.1": fast, "t.2": True}, []))
            went = [e[2] for e in seen if e[0] == "go"]
            self.assertEqual(len(went), runs)
            for k in range(1, len(went)):
                begun = next(i for i, e in enumerate(seen) if e[2] == went[k] and e[0] == "start")
                ended = next(i for i, e in enumerate(seen) if e[2] == went[k - 1] and e[0] == "end")
                self.assertLess(begun, ended, (runs, k))
        # A student's timed run that fails decides its gate: its second round never runs.
        got, seen, dropped = grade(6, fails={"mine1"})
        self.assertEqual(got, {"t.1": False, "t.2": True})
        self.assertEqual((len([e for e in seen if e[0] == "go"]), len(dropped)), (6, 2))
        first_of_t2 = next(i for i, e in enumerate(seen) if e[0] == "go" and e[3]["call"][0] == "ref2")
        self.assertTrue(all(i < first_of_t2 for i, e in enumerate(seen) if e[0] == "drop"),
                        "a decided gate's rounds kept waiting while the next gate ran")

    def test_a_schedule_is_timed_only_by_the_reference_carrying_out_each_plan(self):
        # A task with perf.plan (ch06.1): each build runs once in plan mode; the student's
        # binary runs nothing else. Every timed run is the reference's, carrying out a plan file
        # the grader wrote, and a plan that cannot be read, or that the reference refuses, costs
        # the gate with its reason.
        import array
        d = Path(tempfile.mkdtemp())
        task = {"id": "t.1", "perf": {"what": "speed", "variant": "v", "min_ratio": 0.7, "plan": True,
                                      "shapes": {"n": [1000, 2000], "chunks": [2, 2], "streams": [2, 2]}}}
        good = [v for c in range(2) for op in range(3) for v in (op, c, c, 0)]

        def gate(student_plan, plan_rc=0, refused=None):
            g = score.Grader(None, None, d / f"scratch-{os.urandom(3).hex()}", 30, None, seed=1)
            g.scratch.mkdir()
            calls = []

            def run_driver(binary, mode, seed, timeout, tool=None, reference=False, params=(), show=()):
                calls.append((binary, mode, reference, list(params), [Path(s) for s in show]))
                out = g.scratch / f"out-{len(calls)}"
                if mode == "plan":
                    self.assertEqual((show, reference), ((), binary == "ref"))
                    values = good if binary == "ref" else student_plan
                    if values == "link":  # a link left where the output should be
                        os.symlink(d / "elsewhere", out)
                    else:
                        driver_file(out, {"v.plan": ("i64", array.array("q", values))})
                    return (plan_rc if binary == "mine" else 0), "driver: stopped", out
                plan_file = Path(params[params.index("--run-plan") + 1])
                if refused and plan_file.name.startswith("student-"):
                    return 1, f"{refused}\n", out
                driver_file(out, {"v.0": ("i64", array.array("q", [7]))})
                with open(out, "r+b") as f:
                    body = f.read()
                    f.seek(0)
                    f.write(b"time v 2.0\n" + body)
                return 0, "", out
            g.gpu = score.GpuLock(g.scratch / "gpu.lock")
            fake_runs(g, run_driver)
            fast, said = g.perf(task, "ref", "mine")
            return fast, said, calls

        fast, said, calls = gate(good)  # the same plan as the reference's
        self.assertTrue(fast, said)
        self.assertIn("the reference's driver, which carried out each schedule's plan", said)
        self.assertEqual([(c[0], c[1]) for c in calls if c[0] == "mine"], [("mine", "plan")])
        timed = [c for c in calls if c[1] == "time"]
        self.assertEqual(len(timed), 4)  # two rounds (both at the reference's speed), two plans each
        self.assertTrue(all(c[0] == "ref" and c[2] for c in timed))
        files = {c[4][0] for c in timed}
        self.assertEqual(sorted(f.name.split("-")[0] for f in files), ["reference", "student"])
        for f in files:  # the grader's own files, beside no output of a run
            self.assertEqual(f.parent.name, "plans")
            self.assertEqual(f.stat().st_mode & 0o777, 0o444)
            self.assertEqual(f.read_text().split("\n")[:2], ["0 0 0 0", "1 0 0 0"])
            self.assertEqual(len(f.read_text().split("\n")), 7)
        for c in timed:
            self.assertEqual(c[3][c[3].index("--run-plan") + 1], str(c[4][0]))
        # Refused before any timed run: a plan out of range, one too long, a link in place of
        # the output, a plan run that failed.
        for plan, rc, word in ((good[:4] + [2, 5, 1, 0], 0, "operation 1: chunk 5 is outside 0..1"),
                               (good + good[:4], 0, "7 operations, more than the 3 x 2"),
                               ("link", 0, "not a regular file (not opened (a symbolic link))"),
                               (good, 1, "your schedule's plan run failed (exit 1): driver: stopped")):
            fast, said, calls = gate(plan, rc)
            self.assertFalse(fast, word)
            self.assertIn(word, said)
            self.assertEqual([c for c in calls if c[1] == "time"], [], word)
        # A plan whose values exist but whose order does not keep the answer right: the
        # reference's own check (schedule.h) refuses it when it carries it out.
        why = "schedule refused: a chunk's operations were not all queued (run_op with op 2, chunk 1, stream -1)"
        fast, said, calls = gate(good[:-4], refused=why)
        self.assertFalse(fast)
        self.assertIn("carrying out your schedule's plan, refused it: " + why, said)

    def test_the_trace_keeps_the_launchers_own_account_of_its_time(self):
        # The line as launcher.cu's printf writes it (its format string, read from the file).
        src = (REPO / "labs" / "drivers" / "launcher.cu").read_text()
        i = src.index('"launcher: main at')
        fmt = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', src[i:src.index(",", src.index('launches', i))]))
        line = fmt.replace("\\n", "") % (1795912618.5, 1795912618.75, 1795912619.25, 180.5, 2.0, 35.25, 120.0)
        got = score.launcher_phases("some output\n" + line + "\nmore\n")
        self.assertEqual(got, {"main_at": 1795912618.5, "go_at": 1795912618.75, "done_at": 1795912619.25,
                               "ms": {"context": 180.5, "module": 2.0, "inputs": 35.2, "launches": 120.0}})
        self.assertEqual(score.launcher_phases("a driver's run says nothing of the kind"), {})
        self.assertEqual(score.launcher_phases(None), {})
        # ... and a fenced run's line of the trace carries it.
        d = Path(tempfile.mkdtemp())
        g = score.Grader(None, None, d, 30, None, seed=1)
        g.trace = io.StringIO()
        g._run_driver = lambda *a: (0, "x\n" + line + "\n", d / "out")
        g.run_driver("launcher-1", "time", 5, 30)
        g._run_driver = lambda *a: (0, "a driver's run", d / "out")
        g.run_driver("driver", "check", 5, 30)
        g._run_driver = lambda *a: (0, "a student's program printed\n" + line, d / "out")
        g.run_driver("driver", "check", 5, 30)  # a checked run runs student code: not its line
        first, second, third = [json.loads(x) for x in g.trace.getvalue().splitlines()]
        self.assertEqual((first["run"], first["ms"]["launches"], first["main_at"]), ("time", 120.0, 1795912618.5))
        self.assertNotIn("ms", second)
        self.assertNotIn("ms", third)

    def test_gpu_lock_shared_by_runs_alone_for_a_gate(self):
        # Checked runs share the GPU; a gate (or a run again after "could not get the GPU")
        # waits for them and holds it alone; the gate's own runs do not wait for the gate.
        import threading
        import time
        lock = score.GpuLock(Path(tempfile.mkdtemp()) / "gpu.lock")
        events, mutex = [], threading.Lock()

        def shared(k):
            with lock.hold():
                with mutex:
                    events.append(("in", k))
                time.sleep(0.2)
                with mutex:
                    events.append(("out", k))
        runs = [threading.Thread(target=shared, args=(k,)) for k in range(3)]
        for t in runs:
            t.start()
        time.sleep(0.05)
        with lock.hold(alone=True):
            with mutex:
                inside = list(events)
            with lock.hold():  # re-entrant: a gate's own run
                self.assertTrue(lock.alone())
        for t in runs:
            t.join()
        self.assertEqual(sum(1 for e in inside if e[0] == "in"), 3)  # all three ran together ...
        self.assertEqual(sum(1 for e in inside if e[0] == "out"), 3)  # ... and were done first

    def test_a_run_that_could_not_get_the_gpu_runs_again_alone(self):
        g = score.Grader(None, None, tempfile.mkdtemp(), 30, None, seed=1)
        g.gpu = score.GpuLock(Path(g.scratch) / "gpu.lock")
        got = []

        def once(binary, mode, seed, timeout, tool, reference, params, show):
            got.append(g.gpu.alone())
            if len(got) == 1:
                return (score.NO_GPU_NOW, "driver: could not get the GPU", None)
            return (0, "", "out")
        g._run_driver = once
        self.assertEqual(g.run_driver("p", "check", 1, 30)[0], 0)
        self.assertEqual((got, g.retried), ([False, True], 1))
        # A program that fails on its own (a wrong answer, a fault) is not run again.
        got.clear()
        g._run_driver = lambda *a: (got.append(1), (1, "cudaErrorIllegalAddress", None))[1]
        self.assertEqual(g.run_driver("p", "check", 1, 30)[0], 1)
        self.assertEqual(len(got), 1)
        # The reference's checked run out of time beside other runs: run again, alone. A
        # student's is not (a kernel that never ends would hold the GPU alone a second time),
        # nor a reference run of another kind (a plan run carries out the student's schedule).
        for reference, mode, runs in ((True, "check", [False, True]), (False, "check", [False]),
                                      (True, "plan", [False])):
            got.clear()
            g.retried = 0

            def slow(binary, mode, seed, timeout, tool, reference, params, show):
                got.append(g.gpu.alone())
                return ("timeout", "", None) if len(got) == 1 else (0, "", "out")
            g._run_driver = slow
            rc = g.run_driver("p", mode, 1, 30, reference=reference)[0]
            self.assertEqual((got, g.retried, rc), (runs, len(runs) - 1, 0 if len(runs) == 2 else "timeout"),
                             (reference, mode))

    def test_the_speed_gates_come_last_in_one_hold_of_the_gpu_alone(self):
        # task(gates=False) leaves a due gate's row open; gates() runs every gate due, each
        # program once, while nothing else may take the GPU (a shared flock fails), and
        # finish() puts each verdict in, an error in a gate scoring its task 0.
        import fcntl
        d = Path(tempfile.mkdtemp())
        g = score.Grader(None, None, d, 30, None, seed=1)
        g.gpu = score.GpuLock(d / "gpu.lock")
        task = {"id": "t.1", "points": {"tests": 6, "perf": 2}, "perf": {"min_ratio": 0.5}}
        g.reference_copy = lambda binary: "ref"
        g.tests = lambda task, ref, mine: (mine != "wrong", "tests said")
        ran = []

        def perf_ready(task, ref, mine):
            if mine == "tamper":
                raise score.Tampered("a link in place of a file")
            return ("programs", [], "") if mine != "unready" else (None, "its plan was refused")

        def perf_gate(task, programs, params, at, way=None, k=0):
            with open(d / "gpu.lock", "a") as other:
                with self.assertRaises(BlockingIOError):
                    fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
            ran.append(g.doing.task)
            return len(ran) == 1, f"gate {len(ran)}"
        g.perf_ready, g.perf_gate = perf_ready, perf_gate
        rows = {m: g.task(task, {"binary": m, "reference": "r"}, gates=False)
                for m in ("fast", "slow", "wrong", "tamper", "unready")}
        self.assertEqual(rows["fast"], [("tests", 6, 6, "tests said"),
                                        ("perf", None, 2, {"ref": "ref", "mine": "fast"})])
        self.assertEqual(rows["wrong"][1], ("perf", 0, 2, "not run: the tests must pass first"))
        self.assertEqual(ran, [])  # no gate before gates()
        due = [g.due(task, r) for r in rows.values() if g.due(task, r)]
        self.assertEqual(due[0], (("t.1", "fast"), task, "ref", "fast"))
        self.assertEqual(len(due), 4)
        done = g.gates(due, workers=2)
        self.assertEqual(ran, ["t.1", "t.1"])  # fast, slow (tamper and unready never started)
        got = {m: g.finish(task, r, done) for m, r in rows.items()}
        self.assertEqual(got["fast"][1], ("perf", 2, 2, "gate 1"))
        self.assertEqual(got["slow"][1], ("perf", 0, 2, "gate 2"))
        self.assertEqual(got["wrong"], rows["wrong"])
        self.assertEqual([r[1] for r in got["tamper"]], [0, 0])
        self.assertIn("an attack on the grader was stopped", got["tamper"][0][3])
        self.assertEqual(got["unready"][1], ("perf", 0, 2, "its plan was refused"))
        self.assertFalse(g.gpu.alone())  # given back

    def test_a_program_is_graded_once_for_every_submission_that_has_it(self):
        # Eight threads grade 40 tasks of four distinct programs: each program once, its rows to
        # all; a task that errs before a build has no program and is never shared.
        import concurrent.futures
        import threading
        import time
        g = score.Grader(None, None, tempfile.mkdtemp(), 30, None, seed=1)
        graded, mutex = [], threading.Lock()

        def task_once(task, plan, gates=True):
            with mutex:
                graded.append((task["id"], plan.get("binary")))
            time.sleep(0.05)
            if plan.get("binary") == "boom":
                raise RuntimeError("the grading itself failed")
            return [("tests", 1, 1, f"graded {plan.get('binary')}")]
        g.task_once = task_once
        plans = [({"id": f"t.{i % 2}"}, {"binary": f"b{i % 4}", "reference": "r"}) for i in range(40)]
        plans += [({"id": "t.0"}, {"error": "lint"})] * 3
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            rows = list(pool.map(lambda tp: g.task(tp[0], tp[1]), plans))
        self.assertEqual(len([k for k in graded if k[1] is not None]), 4)  # t.0/b0, t.0/b2, t.1/b1, t.1/b3
        self.assertEqual(len([k for k in graded if k[1] is None]), 3)
        self.assertEqual(g.shared, 36)
        for (task, plan), r in zip(plans, rows):
            self.assertEqual(r[0][3], f"graded {plan.get('binary')}")
        # A grading that fails fails for every submission that shares it (the caller scores 0).
        for _ in range(2):
            with self.assertRaises(RuntimeError):
                g.task({"id": "t.9"}, {"binary": "boom"})
        self.assertEqual(graded.count(("t.9", "boom")), 1)

    def test_the_reference_runs_once_a_seed_beside_the_students_runs(self):
        # Twelve submissions of two tasks, graded by six threads, each with its tests and a
        # memcheck run: one seed per task and kind of run for the whole grading, so one run of
        # the reference per seed (four), each beside the students' runs; every student run is
        # compared with the reference's output at its own seed and task.
        import concurrent.futures
        import threading
        import time
        g = score.Grader(None, None, tempfile.mkdtemp(), 30, None)
        runs, mutex = [], threading.Lock()
        both = threading.Barrier(2, timeout=5)

        def run_driver(binary, mode, seed, timeout, tool=None, reference=False, params=(), show=()):
            with mutex:
                runs.append((reference, binary, seed, tool, timeout))
            if binary.startswith(("ref0", "mine0")):  # they meet: the two run side by side
                both.wait()
            time.sleep(0.02)
            return 0, "ERROR SUMMARY: 0 errors" if tool else "", f"{binary}@{seed}"
        g.run_driver = run_driver
        compared = []

        def compare_files(ref_out, out, tolerance):
            with mutex:
                compared.append((ref_out, out))
            return ref_out.split("@")[1] == out.split("@")[1] and ref_out[3] == out[4], "same"
        tasks = [{"id": f"t.{k}", "sanitize": {"tools": ["memcheck"]}} for k in (1, 2)]
        with mock.patch.object(score.verify, "compare_files", compare_files), \
                mock.patch.object(score.verify, "read_records", lambda out: ([1], None)):
            self.assertTrue(g.tests({"id": "t.0"}, "ref0", "mine0-0")[0])  # one thread: both at once
            runs.clear()
            with concurrent.futures.ThreadPoolExecutor(6) as pool:
                got = list(pool.map(lambda i: (g.tests(tasks[i % 2], f"ref{i % 2 + 1}", f"mine{i % 2 + 1}-{i}"),
                                               g.sanitize(tasks[i % 2], f"ref{i % 2 + 1}", f"mine{i % 2 + 1}-{i}",
                                                          "memcheck")), range(12)))
        self.assertTrue(all(t[0] and m[0] for t, m in got), got)
        refs = [r for r in runs if r[0]]
        self.assertEqual(len(refs), 4)
        self.assertEqual(len({r[2] for r in refs}), 4)  # tests and memcheck: seeds of their own
        # The reference's time limit is its own, not the student's --timeout (30 s here): one
        # that ran out beside other runs ran again alone, every grader waiting for the GPU.
        self.assertEqual({r[4] for r in refs}, {score.REFERENCE_CHECK_S})
        self.assertEqual({r[4] for r in runs if not r[0] and not r[3]}, {30})
        self.assertEqual(len(runs), 4 + 24)
        self.assertEqual(len(compared), 25)  # each against its own task's reference, at its own seed
        # A reference run that failed fails every submission waiting for it; the next grading
        # of that seed runs it again. With --seed, every run of every task has that one seed,
        # and each task still has its own reference's output.
        g = score.Grader(None, None, tempfile.mkdtemp(), 30, None, seed=7)
        tries = []

        def flaky(binary, mode, seed, timeout, tool=None, reference=False, params=(), show=()):
            if reference:
                tries.append(seed)
                return (1 if len(tries) == 1 else 0), "driver: no", f"{binary}@{seed}"
            return 0, "", f"{binary}@{seed}"
        g.run_driver = flaky
        with mock.patch.object(score.verify, "compare_files", compare_files):
            with self.assertRaisesRegex(score.LabError, "reference driver failed"):
                g.tests(tasks[0], "ref1", "mine1-0")
            self.assertTrue(g.tests(tasks[0], "ref1", "mine1-1")[0])
            self.assertTrue(g.tests(tasks[1], "ref2", "mine2-2")[0])
        self.assertEqual(tries, [7, 7, 7])

    def test_shapes_are_drawn_from_the_grade_seed_within_the_ranges(self):
        ranges = {"n": [2, 300000], "blocks": [1, 7]}
        a = score.draw_shapes(ranges, 5, "t/sanitize", 2)
        self.assertEqual(a, score.draw_shapes(ranges, 5, "t/sanitize", 2))  # replayable
        self.assertNotEqual(a, score.draw_shapes(ranges, 6, "t/sanitize", 2))
        for s in a + score.draw_shapes(ranges, 7, "t/sanitize", 50):
            self.assertTrue(2 <= s["n"] <= 300000 and 1 <= s["blocks"] <= 7, s)
        self.assertEqual(score.shape_params([{"n": 3, "b": 1}, {"n": 4, "b": 2}]),
                         ["--param", "b=1,2", "--param", "n=3,4"])
        self.assertGreater(len({s["n"] for s in score.draw_shapes(ranges, 7, "x", 50)}), 40)

    def test_an_error_scores_zero_for_its_task_only(self):
        task = labs.find_lab("ch02")[0]["tasks"][1]
        rows = score.lose_all(task, "broken")
        self.assertEqual(sum(r[1] for r in rows), 0)
        self.assertEqual([r[0] for r in rows], ["tests", "memcheck", "perf"])


class Report(unittest.TestCase):
    def setUp(self):
        self.lab = labs.find_lab("ch02")[0]
        self.results = report.cannot_grade_results(self.lab, "no usable CUDA device (test)")

    def test_atomic_and_symlinks_refused(self):
        d = Path(tempfile.mkdtemp())
        victim = d / "victim.txt"
        victim.write_text("keep")
        out = d / "out"
        out.mkdir()
        os.symlink(victim, out / "results.json")
        report.write_reports(self.lab, self.results, out, {}, None)
        self.assertEqual(victim.read_text(), "keep")  # the link was replaced, not followed
        self.assertFalse((out / "results.json").is_symlink())
        self.assertEqual(json.loads((out / "results.json").read_text())["score"], 0)
        os.symlink(out, d / "link")
        with self.assertRaises(labs.LabError):
            report.write_reports(self.lab, self.results, d / "link", {}, None)
        with self.assertRaises(labs.LabError):
            report.write_reports(self.lab, self.results, d / "sub" / "grade-report", {}, d / "sub")

    def test_no_gpu_grade_writes_a_report_and_exits_77(self):
        if fence.gpu_probe() is None:
            self.skipTest("a GPU is visible here")
        with tempfile.TemporaryDirectory() as d:
            kit.cmd_make("ch02", Path(d) / "s", solution=True)
            r = subprocess.run([sys.executable, str(REPO / "scripts" / "lab.py"), "grade", str(Path(d) / "s"),
                                "--lab", "ch02", "--out", str(Path(d) / "r"), "--work", str(Path(d) / "w")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(r.returncode, 77, r.stdout)
            self.assertIn("no usable CUDA device (", r.stdout)
            doc = json.loads((Path(d) / "r" / "results.json").read_text())
            self.assertEqual(doc["score"], 0)
            self.assertIn("CANNOT GRADE", doc["tests"][0]["output"])

    def test_grade_times_grades_again_and_again_and_counts_full_marks(self):
        from grader import cli
        lab = labs.find_lab("ch02")[0]
        full = report.cannot_grade_results(lab, "x")
        full = [(t, [(c, m, m, "ok") for c, _, m, _ in rows]) for t, rows in full]
        lost = [(t, [(c, 0, m, "wrong") for c, _, m, _ in rows]) for t, rows in full]
        meta = {"fence": "setsid", "fence_detail": "test"}

        def graded(plan):
            calls = []

            def fake(lab_, folders, args, fence=None):
                calls.append(args.seed)
                what = plan[len(calls) - 1]
                if what == "cannot":
                    return [(Path(folders[0]), report.cannot_grade_results(lab_, "no GPU (test)"), meta)], "no GPU (test)"
                return [(Path(folders[0]), full if what == "full" else lost, meta)], None
            return fake, calls

        def grade(plan, *words):
            fake, calls = graded(plan)
            saved, cli.grade_folders = cli.grade_folders, fake
            with tempfile.TemporaryDirectory() as d:
                kit.cmd_make("ch02", Path(d) / "s", solution=True)
                args = cli.build_parser("t").parse_args(
                    ["grade", str(Path(d) / "s"), "--lab", "ch02", "--out", str(Path(d) / "r"),
                     "--work", str(Path(d) / "w"), "--fence", "setsid", "--accept-weak-fence", *words])
                out = io.StringIO()
                try:
                    with redirect_stdout(out):
                        rc = cli.cmd_grade(args)
                finally:
                    cli.grade_folders = saved
                reports = sorted(p.name for p in (Path(d) / "r").iterdir()) if (Path(d) / "r").is_dir() else []
            return rc, out.getvalue(), calls, reports

        rc, text, calls, reports = grade(["full"] * 3, "--times", "3")
        self.assertEqual(rc, 0, text)
        self.assertEqual(len(calls), 3)
        self.assertEqual(calls, [None] * 3)  # no fixed seed: each grading draws its own
        self.assertEqual(reports, ["grading-1", "grading-2", "grading-3"])
        self.assertIn("full marks in 3 of 3 gradings", text)
        rc, text, calls, _ = grade(["full", "lost", "full"], "--times", "3")
        self.assertEqual(rc, 1, text)
        self.assertEqual(len(calls), 3)
        self.assertIn("full marks in 2 of 3 gradings", text)
        rc, text, calls, _ = grade(["cannot"] * 3, "--times", "3")
        self.assertEqual(rc, 77, text)
        self.assertEqual(len(calls), 1)  # not graded again where it cannot be graded at all
        for words in (["--times", "0"], ["--times", "2", "--seed", "5"]):
            rc, text, calls, _ = grade(["full"] * 2, *words)
            self.assertEqual((rc, calls), (2, []), text)
        rc, text, calls, reports = grade(["lost"], "--times", "1")  # as before: one report, no count
        self.assertEqual((rc, len(calls), reports), (1, 1, ["junit.xml", "results.json"]))
        self.assertNotIn("gradings", text)

    def test_lab_never_taken_from_the_submission(self):
        with tempfile.TemporaryDirectory() as d:
            kit.cmd_make("ch02", Path(d) / "s", solution=True)
            env = {k: v for k, v in os.environ.items() if k != "CUDA_LAB"}
            r = subprocess.run([sys.executable, str(REPO / "scripts" / "lab.py"), "grade", str(Path(d) / "s")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn("--lab", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=1)

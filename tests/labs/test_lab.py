#!/usr/bin/env python3
"""Unit tests of scripts/lab.py that need no GPU and no compiler: the markers, the skeletons,
the splicing of a student's regions into the grader's copy, the leak check, and the honesty
rules (no GPU: exit 77, never a pass)."""
import io
import json
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import lab  # noqa: E402

SOURCE = """int f(int n) {
    // LAB t.one {
    int secret_answer = n * 42;
    // LAB }
    return secret_answer;
}
"""
LAB = {"chapter": "t", "folder": "t", "title": "t", "files": ["f.cu"],
       "tasks": [{"id": "t.1", "title": "t", "file": "f.cu",
                  "regions": {"t.one": {"todo": "compute it", "stub": ["int secret_answer = 0;"]}}}]}


class Markers(unittest.TestCase):
    def test_regions(self):
        self.assertEqual(lab.regions(SOURCE, "f.cu"), {"t.one": (1, 3, "    ")})

    def test_unclosed_and_nested_are_refused(self):
        with self.assertRaises(lab.LabError):
            lab.regions("// LAB a {\nx\n", "f.cu")
        with self.assertRaises(lab.LabError):
            lab.regions("// LAB a {\n// LAB b {\n// LAB }\n// LAB }\n", "f.cu")

    def test_skeleton_keeps_markers_and_drops_the_solution(self):
        skel = lab.skeleton(SOURCE, LAB, "f.cu")
        self.assertIn("// LAB t.one {", skel)
        self.assertIn("// TODO(lab t.1): compute it", skel)
        self.assertNotIn("n * 42", skel)
        self.assertEqual(lab.solution_lines(SOURCE, "f.cu"), {"int secret_answer = n * 42;"})

    def test_splice_takes_only_the_tasks_regions_and_names_the_students_lines(self):
        student = "// my notes\n" + SOURCE.replace("n * 42", "n * 41").replace("return", "return 1+")
        out = lab.splice(SOURCE, student, LAB["tasks"][0], "ref.cu", "mine.cu")
        self.assertIn("n * 41", out)
        self.assertIn("return secret_answer;", out)  # outside the markers: the grader's copy
        self.assertIn('#line 4 "mine.cu"', out)       # the student's region starts on line 4
        self.assertIn('#line 4 "ref.cu"', out)

    def test_missing_markers_are_named(self):
        with self.assertRaises(lab.LabError) as e:
            lab.splice(SOURCE, "int f(int n) { return 0; }", LAB["tasks"][0], "r", "mine.cu")
        self.assertIn("restore the lines", str(e.exception))


class RealLabs(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="lab-test-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_every_region_is_in_a_task_and_every_task_region_is_marked(self):
        for l in lab.load_labs()["labs"]:
            for task in l["tasks"]:
                self.assertIn(task["file"], l["files"])
                text = (REPO / l["folder"] / task["file"]).read_text()
                found = lab.regions(text, task["file"])
                for name in task["regions"]:
                    self.assertIn(name, found, f"{task['id']}: no markers for {name}")
                checks = ["tests"] + task.get("sanitize", {}).get("tools", []) + (
                    ["perf"] if "perf" in task else [])
                self.assertEqual(sorted(checks), sorted(task["points"]), task["id"])

    def test_every_lab_makes_without_leaks(self):
        for l in lab.load_labs()["labs"]:
            folder = self.tmp / l["chapter"]
            with redirect_stdout(io.StringIO()):
                lab.cmd_make(l["chapter"], folder)
            self.assertEqual(lab.skeleton_leaks(l, folder), [], l["chapter"])
            self.assertTrue((folder / "grade.sh").exists())
            self.assertEqual(json.loads((folder / ".lab.json").read_text())["chapter"], l["chapter"])

    def test_leak_check_sees_a_solution_in_a_skeleton(self):
        l, _ = lab.find_lab("ch03")
        folder = self.tmp / "leaky"
        lab.cmd_make("ch03", folder, solution=True)
        self.assertNotEqual(lab.skeleton_leaks(l, folder), [])

    def test_each_selftest_bug_lands_in_one_task(self):
        data = lab.load_labs()
        for l in data["labs"]:
            for name in data["selftest"][l["chapter"]]["mutants"]:
                folder = self.tmp / f"{l['chapter']}-{name}"
                lab.mutated_folder(l, name, folder)
                self.assertEqual(len(lab.changed_tasks(l, folder)), 1, name)

    def test_no_gpu_means_cannot_grade_never_a_pass(self):
        folder = self.tmp / "s"
        lab.cmd_make("ch02", folder, solution=True)
        saved = lab.mutant.gpu_visible
        lab.mutant.gpu_visible = lambda: (False, "no GPU in this test")
        try:
            args = lab.argparse.Namespace(dir=str(folder), lab=None, build_only=False,
                                          nvcc=sys.executable, work=str(self.tmp / "w"))
            out = io.StringIO()
            with redirect_stdout(out):
                rc = lab.cmd_grade(args)
        finally:
            lab.mutant.gpu_visible = saved
        self.assertEqual(rc, 77)
        self.assertIn("CANNOT GRADE", out.getvalue())
        self.assertFalse((folder / "grade-report").exists())


class Parsers(unittest.TestCase):
    """The grader reads gtest, compute-sanitizer and --json output: fake programs that print
    what those print check the reading (a hang, a failure, a race, a slow kernel)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="lab-fake-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fake(self, name, body):
        path = self.tmp / name
        path.write_text("#!/bin/sh\n" + body + "\n")
        path.chmod(0o755)
        return path

    def test_gtest_pass_fail_hang(self):
        task = {"filter": "*"}
        ok = self.fake("ok", 'echo "[==========] 3 tests from 1 test suite ran. (5 ms total)"')
        self.assertTrue(lab.check_tests(task, ok, 10)[0])
        bad = self.fake("bad", "\n".join([
            'echo "[ RUN      ] VA.OneElement"', 'echo "test.cu:14: Failure"',
            'echo "    Which is: 1"', 'echo "[  FAILED  ] VA.OneElement (0 ms)"',
            'echo "[==========] 3 tests from 1 test suite ran. (5 ms total)"', "exit 1"]))
        passed, said, _ = lab.check_tests(task, bad, 10)
        self.assertFalse(passed)
        self.assertIn("1 of 3 tests failed (OneElement)", said)
        self.assertIn("Which is: 1", said)
        hang = self.fake("hang", "sleep 20")
        passed, said, _ = lab.check_tests(task, hang, 1)
        self.assertFalse(passed)
        self.assertIn("did not finish", said)
        skip = self.fake("skip", 'echo "[  SKIPPED ] A.B"')
        with self.assertRaises(lab.CannotGrade):
            lab.check_tests(task, skip, 10)

    def test_sanitizer_race_and_clean(self):
        task = {"sanitize": {"filter": "*"}}
        race = self.fake("race", 'echo "========= Error: Race reported between Write access"\n'
                                 'echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error)"')
        clean = self.fake("clean", 'echo "========= ERROR SUMMARY: 0 errors"')
        passed, said, _ = lab.check_sanitizer(task, "x", "racecheck", 10, str(race))
        self.assertFalse(passed)
        self.assertIn("Race reported", said)
        self.assertTrue(lab.check_sanitizer(task, "x", "memcheck", 10, str(clean))[0])

    def test_performance_gate(self):
        rec = '{"variant":"kernel","time_ms":{"median":%s},"gbps":%s}'
        fast = self.fake("fast", "echo '%s'" % (rec % (0.1, 4000)))
        slow = self.fake("slow", "echo '%s'" % (rec % (0.5, 800)))
        task = {"perf": {"args": "--json", "variant": "kernel", "metric": "gbps",
                         "min_ratio": 0.5, "what": "bandwidth"}}
        self.assertTrue(lab.check_perf(task, fast, fast, 10, self.tmp)[0])
        passed, said, _ = lab.check_perf(task, slow, fast, 10, self.tmp)
        self.assertFalse(passed)
        self.assertIn("20% of the reference", said)
        task["perf"]["metric"] = "time"
        self.assertFalse(lab.check_perf(task, slow, fast, 10, self.tmp)[0])


if __name__ == "__main__":
    unittest.main()

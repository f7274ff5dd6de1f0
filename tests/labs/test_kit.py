#!/usr/bin/env python3
"""The student kit of every lab (lab.py make) works on its own and names nothing of the machine
that made it: no file holds the course repository's path or a line of a solution; its lint.py
runs from a copy of the kit, with the repository out of Python's path, and says which regions
still hold their TODO; grade.sh without a grading kit grades nothing and says so (77); and what a
student reads (the kit's README, lab.py grade's lines) fits in 100 columns. No GPU, no compiler.
Run: python3 tests/labs/test_kit.py (ctest: lab.kit, label cpu)."""
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
from grader import kit, labs, report  # noqa: E402
from grader.fence import gpu_probe  # noqa: E402

WIDTH = 100


def alone_env():
    """The environment of a student's shell: no PYTHONPATH, nothing of the course."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CUDA_EXAMPLES"))}
    return env


class StudentKit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = Path(tempfile.mkdtemp(prefix="lab-kit-test-"))
        cls.kits = {}
        for lab in labs.load_labs()["labs"]:
            folder = cls.root / "made" / lab["chapter"]
            kit.cmd_make(lab["chapter"], folder)
            cls.kits[lab["chapter"]] = (lab, folder)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def files(self, folder):
        return [p for p in sorted(folder.rglob("*")) if p.is_file()]

    def test_names_nothing_of_this_machine(self):
        marks = [str(REPO).encode(), b"/path/to/course", b"CUDA_EXAMPLES_REPO"]
        for chapter, (lab, folder) in self.kits.items():
            for p in self.files(folder):
                data = p.read_bytes()
                for mark in marks:
                    self.assertNotIn(mark, data, f"{chapter}: {p.relative_to(folder)} names {mark!r}")

    def test_no_solution_line_in_any_file(self):
        # Every file, the shipped lint's Python and labs.json included (kit_leaks reads only
        # the kinds of file a program or a handout is).
        for chapter, (lab, folder) in self.kits.items():
            sol = set()
            for name in lab["files"]:
                sol |= labs.solution_lines((REPO / lab["folder"] / name).read_text(), name)
            for p in self.files(folder):
                text = p.read_bytes().decode("utf-8", "replace")
                found = sol & {labs.code_of(line) for line in text.split("\n")}
                self.assertFalse(found, f"{chapter}: {p.relative_to(folder)} holds {sorted(found)[:2]}")
            self.assertFalse(any(p.name in lab["files"] and "drivers" in p.parts
                                 for p in self.files(folder)), "a grading driver in the kit")

    def test_lint_runs_inside_a_copy_without_the_repository(self):
        for chapter, (lab, made) in self.kits.items():
            folder = self.root / "moved" / chapter
            shutil.copytree(made, folder)
            run = lambda: subprocess.run([sys.executable, "-I", "lint.py"], cwd=folder, env=alone_env(),  # noqa: E731
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            r = run()
            regions = [n for t in lab["tasks"] for n in t["regions"]]
            self.assertEqual(r.returncode, 0, f"{chapter}: {r.stdout}")
            self.assertIn("no violation", r.stdout)
            self.assertIn("still hold the skeleton's TODO", r.stdout, chapter)
            for name in regions:
                self.assertIn(name, r.stdout, chapter)
            self.assertTrue(all(len(l) <= WIDTH for l in r.stdout.splitlines()), r.stdout)
            # A violation planted in the first region is caught, by the kit's lint alone.
            task = lab["tasks"][0]
            path = folder / lab["folder"] / task["file"]
            first = next(iter(task["regions"]))
            text = path.read_text().replace(f"// LAB {first} {{", f"// LAB {first} {{\n#define X 1", 1)
            path.write_text(text)
            r = run()
            self.assertEqual(r.returncode, 1, f"{chapter}: {r.stdout}")
            self.assertIn("#", r.stdout)

    def test_grade_sh_without_a_grading_kit_grades_nothing(self):
        lab, folder = self.kits["ch03"]
        r = subprocess.run(["sh", str(folder / "grade.sh")], env=alone_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        self.assertEqual(r.returncode, 77, r.stdout)
        self.assertIn("nothing graded", r.stdout)
        self.assertIn("lint.py", r.stdout)

    def test_readme_fits_in_100_columns(self):
        for chapter, (lab, folder) in self.kits.items():
            for i, line in enumerate((folder / "README.md").read_text().split("\n"), 1):
                self.assertLessEqual(len(line), WIDTH, f"{chapter} README.md:{i}: {line[:60]}...")

    def test_make_names_the_folder_as_given(self):
        out = self.root / "cli" / "lab3"
        r = subprocess.run([sys.executable, str(REPO / "scripts" / "lab.py"), "make", "ch03", f"{out}/"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn(f"{out}/grade.sh", r.stdout)
        self.assertNotIn("//grade.sh", r.stdout)
        self.assertTrue(all(len(l) <= WIDTH for l in r.stdout.splitlines()), r.stdout)


class CheatFolders(unittest.TestCase):
    def test_a_cheat_made_and_never_graded_leaves_nothing_in_tmp(self):
        # The symlink cheat's secret file (tests/labs/cheats/fence_cheats.py): the compiler
        # tests and a self-test without a GPU make the folder and never grade it.
        pattern = "lab-fence-sanitizer-log-symlink-*-secret"
        before = set(Path("/tmp").glob(pattern))
        code = "\n".join([
            "import sys, tempfile", "from pathlib import Path",
            f"sys.path[:0] = [{str(REPO / 'labs')!r}, {str(REPO / 'tests' / 'labs' / 'cheats')!r}]",
            "from grader import kit, labs", "import cheats",
            "c = next(c for c in cheats.CHEATS if c['name'] == 'fence-sanitizer-log-symlink')",
            "with tempfile.TemporaryDirectory(prefix='lab-kit-test-') as t:",
            "    kit.cmd_make('ch02', Path(t) / 's', solution=True)",
            "    c['make'](Path(t) / 's', labs.find_lab('ch02')[0])",
            f"print(sorted(Path('/tmp').glob({pattern!r})))"])
        r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("-secret", r.stdout)  # it was made: the test can fail
        self.assertEqual(set(Path("/tmp").glob(pattern)) - before, set(), "left in /tmp")


class GradeOutput(unittest.TestCase):
    def test_the_fence_line_is_wrapped_and_printed_once(self):
        lab = labs.find_lab("ch02")[0]
        detail = "namespaces: " + ", ".join(f"a long clause number {i} of what the fence does"
                                            for i in range(8))
        results = [(t, [(c, t["points"][c], t["points"][c], "") for c in t["points"]]) for t in lab["tasks"]]
        text, _, _ = report.table(lab, results, "student", detail)
        self.assertEqual(text.count("fence:"), 1, text)
        self.assertTrue(all(len(l) <= WIDTH for l in text.split("\n")), text)

    def test_grade_without_a_gpu_says_nothing_was_graded(self):
        if gpu_probe() is None:
            self.skipTest("a GPU is here: lab.py grade grades (this test is for a machine without one)")
        with tempfile.TemporaryDirectory() as d:
            kit.cmd_make("ch02", Path(d) / "s")
            r = subprocess.run([sys.executable, str(REPO / "scripts" / "lab.py"), "grade", str(Path(d) / "s"),
                                "--lab", "ch02", "--out", str(Path(d) / "r"), "--fence", "setsid",
                                "--accept-weak-fence"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(r.returncode, labs.EXIT_CANNOT, r.stdout)
        self.assertIn("NOT GRADED", r.stdout)
        self.assertIsNone(re.search(r"\b0/\d", r.stdout), f"a score of 0 that reads like points lost:\n{r.stdout}")
        self.assertTrue(all(len(l) <= WIDTH for l in r.stdout.splitlines()), r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)

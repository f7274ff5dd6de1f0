#!/usr/bin/env python3
"""The cheats of tests/labs/cheats/cheats.py that are stopped before anything is built (intake
and lint): each attacked task scores 0 with the rule named, every other task is accepted, the
lint command exits 1, and nothing hangs. The others run on a GPU in `lab.py selftest`."""
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
import cheats  # noqa: E402
from grader import kit, labs, score  # noqa: E402

HALF_THE_CORES = max(2, (os.cpu_count() or 2) // 2)  # the lint's clang children (test_lint_whitelist.py)


class Cheats(unittest.TestCase):
    def test_at_least_25_and_every_class(self):
        self.assertGreaterEqual(len(cheats.CHEATS), 25)

    def test_stopped_before_the_build(self):
        stopped = [c for c in cheats.CHEATS if not c["gpu"]]
        with tempfile.TemporaryDirectory() as d:
            made = []
            for i, c in enumerate(stopped):
                lab = labs.find_lab(c["lab"])[0]
                folder = Path(d) / str(i)
                kit.cmd_make(c["lab"], folder, solution=True)
                c["make"](folder, lab)
                made.append((c, lab, folder))
            got = {}  # the grader's intake and lint, each lab's folders parsed side by side
            for chapter in dict.fromkeys(c["lab"] for c in stopped):
                lab = labs.find_lab(chapter)[0]
                folders = [f for c, _, f in made if c["lab"] == chapter]
                got.update(zip(folders, score.prepare_many(lab, folders, REPO, workers=HALF_THE_CORES)))

            def lint(m):  # `lab.py lint`, a process of its own, as a student runs it
                return subprocess.run([sys.executable, str(REPO / "scripts" / "lab.py"), "lint", str(m[2]),
                                       "--lab", m[0]["lab"]], stdout=subprocess.PIPE, text=True, timeout=120)
            with concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
                linted = list(pool.map(lint, made))
            for (c, lab, folder), r in zip(made, linted):
                with self.subTest(c["name"]):
                    for task in lab["tasks"]:
                        text, why = got[folder][task["id"]]
                        if task["id"] in c["zero"]:
                            self.assertIsNone(text, f"{c['name']}: {task['id']} was accepted")
                            self.assertTrue(why)
                        else:
                            self.assertIsNone(why, f"{c['name']}: honest {task['id']}: {why}")
                    self.assertEqual(r.returncode, 1, r.stdout)

    def test_schedule_cheats_are_lint_clean(self):
        """schedule_cheats.py: the whole lint (tokens and clang's tree) accepts each, so only the
        check in run_op (ch06_streams/schedule.h) stands between its integers and the driver's
        buffers; on a GPU (lab.py selftest) each scores 0 with "schedule refused"."""
        import schedule_cheats
        self.assertGreaterEqual(len(schedule_cheats.CHEATS), 2)
        for c in schedule_cheats.CHEATS:
            with self.subTest(c["name"]), tempfile.TemporaryDirectory() as d:
                self.assertTrue(c["gpu"])
                lab = labs.find_lab(c["lab"])[0]
                folder = Path(d) / "s"
                kit.cmd_make(c["lab"], folder, solution=True)
                c["make"](folder, lab)
                got = score.prepare(lab, folder, REPO)
                for task in lab["tasks"]:
                    text, why = got[task["id"]]
                    self.assertIsNone(why, f"{c['name']}: {task['id']}: {why}")
                    self.assertIsNotNone(text)

    def test_forged_plans_need_the_lint_off(self):
        """truth_cheats.py's ch06.1 cheats that hand the grader a forged plan reach it through
        p.schedule, which no region may name: the lint refuses each (nothing is built), so in
        lab.py selftest, which grades them with the lint off, they stand for an attacker past
        it, and the grader's and the reference's checks of the plan are what stop them."""
        import truth_cheats
        forged = [c for c in truth_cheats.CHEATS if c["name"].startswith("schedule-hands-back-a-plan")]
        self.assertEqual(len(forged), 2)
        for c in forged:
            with self.subTest(c["name"]), tempfile.TemporaryDirectory() as d:
                self.assertIs(c["lint"], False)
                lab = labs.find_lab(c["lab"])[0]
                folder = Path(d) / "s"
                kit.cmd_make(c["lab"], folder, solution=True)
                c["make"](folder, lab)
                got = score.prepare(lab, folder, REPO)
                self.assertIsNone(got["ch06.1"][0])
                self.assertIn("the region lint refused your code (nothing was built)", got["ch06.1"][1])
                self.assertIsNone(got["ch06.2"][1])
                self.assertIsNotNone(score.prepare(lab, folder, REPO, lint_regions=False)["ch06.1"][0])


if __name__ == "__main__":
    unittest.main(verbosity=1)

#!/usr/bin/env python3
"""mutant.py's own rules, without a GPU (ctest: mutants.rules): a fake nvidia-smi and fake
programs (shell scripts that print what the real ones print) stand in for the GPU, so that what
counts as caught, what the control must show, and which architectures are refused are tested
everywhere, CI included."""
import contextlib
import io
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutant  # noqa: E402

VERDICT_MUTANT = """program: fake
bug: a fake bug for the test
expect: verdict
run: --n 7
@@ find
x
@@ replace
y
@@ end
"""


def script(folder, name, body):
    path = Path(folder) / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


class Architectures(unittest.TestCase):
    def test_machine_code_runs_on_its_major_version_only(self):
        self.assertTrue(mutant.runs_on("80-real", "8.6"))
        self.assertFalse(mutant.runs_on("86-real", "8.0"))
        self.assertFalse(mutant.runs_on("90-real", "10.0"))

    def test_ptx_runs_on_anything_newer(self):
        self.assertTrue(mutant.runs_on("90-real,75-virtual", "10.0"))
        self.assertTrue(mutant.runs_on("75", "9.0"))

    def test_arch_specific_code_runs_on_that_gpu_alone(self):
        self.assertTrue(mutant.runs_on("90a-real", "9.0"))
        self.assertFalse(mutant.runs_on("90a-real", "10.0"))
        self.assertFalse(mutant.runs_on("90a", "10.0"))

    def test_native_and_all_are_taken_as_built_for_here(self):
        self.assertTrue(mutant.runs_on("native", "7.5"))


class ControlAndCatch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        os.makedirs(f"{d}/bin")
        os.makedirs(f"{d}/ch99_fake")
        self.smi = script(f"{d}/bin", "nvidia-smi",
                          'case "$*" in *compute_cap*) echo "${FAKE_CAP:-9.0}";; '
                          '*) echo "GPU 0: Fake";; esac')
        self.mutant = Path(f"{d}/ch99_fake/fake.bug.mutant")
        self.mutant.write_text(VERDICT_MUTANT)
        self.good = script(d, "good", 'echo "Verdict: PASS"; exit 0')
        self.bad = script(d, "bad", 'echo "Verdict: FAIL"; exit 1')
        self.refuses = script(d, "refuses", 'echo "fake: error: no"; exit 2')
        self.json = f"{d}/control.json"
        self.saved_path = os.environ["PATH"]
        os.environ["PATH"] = f"{d}/bin:" + self.saved_path
        # The rules hold whatever runs them: a GPU runner's ctest sets these for every test.
        self.saved_env = {k: os.environ.pop(k) for k in ("CUDA_EXAMPLES_REQUIRE_GPU",
                                                         "CUDA_EXAMPLES_LESSONS") if k in os.environ}

    def tearDown(self):
        os.environ["PATH"] = self.saved_path
        os.environ.pop("FAKE_CAP", None)
        os.environ.update(self.saved_env)
        self.tmp.cleanup()

    def call(self, *words):
        out = io.StringIO()
        sys.argv = ["mutant.py"] + [str(w) for w in words]
        with contextlib.redirect_stdout(out):
            rc = mutant.main()
        return rc, out.getvalue()

    def control(self, program, archs="90-real"):
        return self.call("control", self.mutant, "--json", self.json, "--program", program,
                         f"--archs={archs}")

    def caught(self, program, archs="90-real"):
        return self.call("caught", self.mutant, "--control", self.json, "--program", program,
                         f"--archs={archs}")

    def test_a_bug_that_fails_is_caught_against_a_clean_control(self):
        self.assertEqual(self.control(self.good)[0], 0)
        rc, out = self.caught(self.bad)
        self.assertEqual(rc, 0, out)
        self.assertIn("CAUGHT by verdict", out)

    def test_the_catch_names_the_line_that_failed(self):
        # An impossible rate comes first; the verdict and the lesson after it may read well.
        rate = script(self.tmp.name, "rate", 'echo "impossible measurement: 9 TB/s"; '
                      'echo "Verdict: PASS"; echo "Lesson: shown"; exit 1')
        self.assertEqual(self.control(self.good)[0], 0)
        rc, out = self.caught(rate)
        self.assertEqual(rc, 0, out)
        self.assertIn("CAUGHT   verdict (default size): impossible measurement: 9 TB/s", out)

    def test_counters_catch_only_a_miscount(self):
        # A fake tests/counters/counters.py: it runs the program, which says what the real one
        # would report (counts that agree, a miscount, or a crash).
        d = Path(self.tmp.name) / "counters"
        d.mkdir()
        (d / "checks.json").write_text('{"checks": [{"name": "fake", "program": "fake"}]}')
        fake = script(d, "counters.py", 'out=$("$4"); echo "$out"; '
                      'case "$out" in *miscount*) echo "COUNTED OTHERWISE: fake: wrong"; exit 1;; '
                      '*crash*) echo "FAILED: the program under ncu exited 1"; exit 1;; esac; '
                      'echo "counters: fake: the claim agrees with the counters"')
        self.mutant.write_text(VERDICT_MUTANT.replace("expect: verdict", "expect: counters"))
        saved, mutant.COUNTERS = mutant.COUNTERS, Path(fake)
        python, sys.executable = sys.executable, "/bin/sh"  # the fake is a shell script
        try:
            self.assertEqual(self.control(self.good)[0], 0)
            miscount = script(self.tmp.name, "miscount", "echo miscount")
            rc, out = self.caught(miscount)
            self.assertEqual(rc, 0, out)
            self.assertIn("CAUGHT   counters fake: COUNTED OTHERWISE", out)
            crash = script(self.tmp.name, "crash", "echo crash")
            rc, out = self.caught(crash)
            self.assertEqual(rc, 1, out)
            self.assertIn("SURVIVED", out)
        finally:
            mutant.COUNTERS, sys.executable = saved, python

    def test_a_bug_that_passes_survives(self):
        self.control(self.good)
        rc, out = self.caught(self.good)
        self.assertEqual(rc, 1)
        self.assertIn("SURVIVED", out)

    def test_no_catch_counts_when_the_control_fails_too(self):
        self.assertEqual(self.control(self.bad)[0], 1)
        rc, out = self.caught(self.bad)
        self.assertEqual(rc, 1)
        self.assertIn("NOT COUNTED", out)

    def test_a_refused_command_line_is_a_clean_control(self):
        # The unpatched program refuses what the planted bug no longer refuses (exit 2).
        self.assertEqual(self.control(self.refuses)[0], 0)
        self.assertEqual(self.caught(self.bad)[0], 0)

    def test_a_compile_only_build_skips_and_a_gpu_runner_fails(self):
        # Configured where no GPU was visible, the build compiled the patch and linked nothing.
        self.control(self.good)
        rc, out = self.call("caught", self.mutant, "--control", self.json, "--compile-only")
        self.assertEqual(rc, 77, out)
        self.assertIn("only compiled", out)
        os.environ["CUDA_EXAMPLES_REQUIRE_GPU"] = "1"
        try:
            rc, out = self.call("caught", self.mutant, "--control", self.json, "--compile-only")
        finally:
            os.environ.pop("CUDA_EXAMPLES_REQUIRE_GPU")
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED", out)

    def test_no_control_results_no_catch(self):
        rc, out = self.caught(self.bad)
        self.assertEqual(rc, 1)
        self.assertIn("no control results", out)

    def test_an_architecture_the_gpu_cannot_run_is_refused(self):
        self.control(self.good)
        os.environ["FAKE_CAP"] = "8.0"
        rc, out = self.caught(self.bad, archs="90-real")
        self.assertEqual(rc, 1)
        self.assertIn("REFUSED", out)
        rc, out = self.caught(self.bad, archs="90-real,75-virtual")
        self.assertEqual(rc, 0, out)

    def test_no_gpu_is_a_skip_or_with_require_gpu_a_failure(self):
        os.environ["PATH"] = "/nonexistent"  # no nvidia-smi
        try:
            rc, out = self.caught(self.bad)
            self.assertEqual(rc, 77, out)
            os.environ["CUDA_EXAMPLES_REQUIRE_GPU"] = "1"
            self.assertEqual(self.caught(self.bad)[0], 1)
        finally:
            os.environ.pop("CUDA_EXAMPLES_REQUIRE_GPU", None)

    def test_lesson_needs_the_missed_line_and_exit_1(self):
        self.mutant.write_text(VERDICT_MUTANT.replace("expect: verdict", "expect: lesson"))
        plain_fail = self.bad
        missed = script(self.tmp.name, "missed", 'echo "Lesson: MISSED the effect"; exit 1')
        self.assertEqual(self.control(self.good)[0], 0)
        self.assertEqual(self.caught(plain_fail)[0], 1)
        self.assertEqual(self.caught(missed)[0], 0)

    def test_alone_runs_its_verdicts_one_at_a_time_and_plans_them_alone(self):
        # A rate above the peak shows only with the GPU to itself: no two of the runs overlap,
        # in the control as in the planted bug, and CMake is told ("alone") to run it serially.
        self.mutant.write_text(VERDICT_MUTANT.replace("run: --n 7", "alone\nrun: --n 7\nrun: --n 8"))
        log = Path(self.tmp.name) / "runs.log"
        body = (f'echo "start $(date +%s.%N)" >> {log}; sleep 0.3; '
                f'echo "end $(date +%s.%N)" >> {log}; echo "Verdict: {{}}"; exit {{}}')
        good = script(self.tmp.name, "good_timed", body.format("PASS", 0))
        bad = script(self.tmp.name, "bad_timed", body.format("FAIL", 1))
        self.assertEqual(self.control(good)[0], 0)
        self.assertEqual(self.caught(bad)[0], 0)
        words = log.read_text().split()
        self.assertEqual(words[0::2], ["start", "end"] * 6, "two runs overlapped")
        saved, mutant.patched_text = mutant.patched_text, lambda m: None  # no source to patch here
        try:
            rc, out = self.call("plan", self.mutant)
        finally:
            mutant.patched_text = saved
        self.assertTrue(out.strip().endswith("|verdict,alone"), out)


if __name__ == "__main__":
    unittest.main()

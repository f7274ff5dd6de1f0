#!/usr/bin/env python3
"""counters.py's own rules, without a GPU (ctest: counters.rules): a fake nvidia-smi, a fake ncu
(which runs the program and writes the CSV that ncu writes, with counts the test chooses) and a
fake program (which prints a JSON record as common/report.h does) stand in for the GPU. What
agrees, what is a miscount, what is skipped and why, on every machine, CI included."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "mutants"))
import counters  # noqa: E402
import mutant  # noqa: E402

FAKE_NCU = r'''#!/usr/bin/env python3
import json, os, subprocess, sys
args = sys.argv[1:]
if os.environ.get("FAKE_NCU") == "no-permission":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
          "Performance Counters on the target device 0.")
    sys.exit(1)
log = args[args.index("--log-file") + 1]
program = args[args.index("--log-file") + 2:]
r = subprocess.run(program)
counts = json.loads(os.environ.get("FAKE_COUNTS", "{}"))
with open(log, "w") as f:
    f.write('==PROF== Disconnected from process 1\n"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n')
    if os.environ.get("FAKE_NCU") != "no-kernel":
        for name, value in counts.items():
            f.write(f'"0","add(const long long *)","{name}","byte","{value:,.0f}"\n')
sys.exit(r.returncode)
'''

CLAIM = 805306368  # 3 x 2^25 x 8 bytes: VA-GPU-NN's check


def script(folder, name, body):
    path = Path(folder) / name
    path.write_text(body)
    path.chmod(0o755)
    return str(path)


def fake_program(folder, gbps, median_ms=1.0, exit_code=0):
    record = {"schema": 1, "program": "VA-GPU-NN", "variant": "kernel", "device": "Fake GPU",
              "time_ms": {"median": median_ms, "min": median_ms, "max": median_ms, "repeats": 1},
              "gbps": gbps, "gflops": None}
    line = json.dumps(record, separators=(",", ":"))  # as common/report.h prints it
    return script(folder, "program", "#!/bin/sh\n"
                  f"echo '{line}'\necho 'Verdict: PASS (fake)'\nexit {exit_code}\n")


class Run(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.smi = script(d, "nvidia-smi", "#!/bin/sh\necho 'GPU 0: Fake GPU (UUID: GPU-0)'\n")
        self.no_smi = script(d, "no-smi", "#!/bin/sh\necho 'No devices were found'\nexit 6\n")
        self.ncu = script(d, "ncu", FAKE_NCU)
        self.saved = {k: os.environ.pop(k) for k in ("CUDA_EXAMPLES_REQUIRE_GPU",
                      "CUDA_EXAMPLES_REQUIRE_COUNTERS", "FAKE_NCU", "FAKE_COUNTS") if k in os.environ}

    def tearDown(self):
        for k in ("CUDA_EXAMPLES_REQUIRE_GPU", "CUDA_EXAMPLES_REQUIRE_COUNTERS", "FAKE_NCU",
                  "FAKE_COUNTS"):
            os.environ.pop(k, None)
        os.environ.update(self.saved)
        self.tmp.cleanup()

    def run_check(self, program, smi=None, counts=None, name="VA-GPU-NN"):
        os.environ["FAKE_COUNTS"] = json.dumps(counts or {})
        sys.argv = ["counters.py", "run", name, "--program", program, "--ncu", self.ncu,
                    "--nvidia-smi", smi or self.smi,
                    "--result", str(Path(self.tmp.name) / "result.json")]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = counters.main()
        return rc, out.getvalue()

    @staticmethod
    def dram(read, write, seconds=0.001):
        return {"dram__bytes_read.sum": read, "dram__bytes_write.sum": write,
                "gpu__time_duration.sum": seconds * 1e9}

    def test_a_claim_the_counters_confirm_passes(self):
        # VA-GPU-NN on the H200: 536.9 MB read, 256.6 MB written (the rest still in L2).
        rc, out = self.run_check(fake_program(self.tmp.name, CLAIM / 1e6),
                                 counts=self.dram(536897792, 256604160))
        self.assertEqual(rc, 0, out)
        self.assertIn("agrees with the counters", out)
        result = json.loads((Path(self.tmp.name) / "result.json").read_text())
        self.assertTrue(result["ok"])
        self.assertAlmostEqual(result["claimed"], CLAIM, delta=CLAIM * 1e-5)

    def test_two_of_three_arrays_is_a_miscount(self):
        rc, out = self.run_check(fake_program(self.tmp.name, CLAIM * 2 / 3 / 1e6),
                                 counts=self.dram(536897792, 256604160))
        self.assertEqual(rc, 1, out)
        self.assertIn("COUNTED OTHERWISE", out)

    def test_the_claim_is_the_programs_rate_times_its_time(self):
        # The same bytes printed as a rate over 2 ms: the claim is rate x time, not the rate.
        rc, out = self.run_check(fake_program(self.tmp.name, CLAIM / 2e6, median_ms=2.0),
                                 counts=self.dram(536897792, 256604160))
        self.assertEqual(rc, 0, out)

    def test_bytes_left_in_l2_are_allowed_only_to_a_kernel_that_writes(self):
        check = {"count": "dram", "writes": True}
        low, high = counters.bounds(check, 1e9)
        self.assertLess(low, 1e9 - 60e6)  # an H200's L2 full of c's last lines
        low_read_only, _ = counters.bounds({"count": "dram", "writes": False}, 1e9)
        self.assertAlmostEqual(low_read_only, 0.98e9)
        self.assertLess(high, 1.03e9)

    def test_the_fp32_count_is_two_flops_per_ffma(self):
        metrics = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 4096.0 ** 3,
                   "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 0.0,
                   "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0}
        self.assertTrue(counters.compare({"count": "fp32"}, 2 * 4096.0 ** 3, metrics)["ok"])
        self.assertFalse(counters.compare({"count": "fp32"}, 4096.0 ** 3, metrics)["ok"])

    def test_no_gpu_skips_and_require_gpu_fails(self):
        program = fake_program(self.tmp.name, CLAIM / 1e6)
        rc, out = self.run_check(program, smi=self.no_smi)
        self.assertEqual(rc, 77, out)
        self.assertIn("skipped: no usable CUDA device", out)
        os.environ["CUDA_EXAMPLES_REQUIRE_GPU"] = "1"
        rc, out = self.run_check(program, smi=self.no_smi)
        self.assertEqual(rc, 1, out)

    def test_no_permission_says_how_to_allow_it_and_skips(self):
        os.environ["FAKE_NCU"] = "no-permission"
        program = fake_program(self.tmp.name, CLAIM / 1e6)
        rc, out = self.run_check(program)
        self.assertEqual(rc, 77, out)
        self.assertIn("ERR_NVGPUCTRPERM", out)
        self.assertIn("NVreg_RestrictProfilingToAdminUsers=0", out)
        os.environ["CUDA_EXAMPLES_REQUIRE_COUNTERS"] = "1"
        rc, out = self.run_check(program)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAILED: profiling is not permitted", out)

    def test_a_program_without_a_gpu_skips(self):
        rc, out = self.run_check(fake_program(self.tmp.name, CLAIM / 1e6, exit_code=77))
        self.assertEqual(rc, 77, out)

    def test_no_kernel_profiled_fails(self):
        os.environ["FAKE_NCU"] = "no-kernel"
        rc, out = self.run_check(fake_program(self.tmp.name, CLAIM / 1e6),
                                 counts=self.dram(536897792, 256604160))
        self.assertEqual(rc, 1, out)
        self.assertIn("profiled no launch", out)

    def test_a_missing_record_fails(self):
        program = script(self.tmp.name, "silent", "#!/bin/sh\necho 'Verdict: PASS'\n")
        rc, out = self.run_check(program, counts=self.dram(536897792, 256604160))
        self.assertEqual(rc, 1, out)
        self.assertIn("0 JSON records", out)


class Checks(unittest.TestCase):
    def test_every_check_is_well_formed(self):
        data = counters.load_checks()
        programs = {p["name"] for p in json.loads(
            (HERE.parent.parent / "programs.json").read_text())["programs"]}
        names = [c["name"] for c in data["checks"]]
        self.assertEqual(len(names), len(set(names)), "check names must be unique")
        for c in data["checks"]:
            self.assertIn(c["program"], programs, c["name"])
            self.assertIn(c["count"], counters.COUNTS, c["name"])
            self.assertTrue(c["name"] == c["program"] or c["name"].startswith(c["program"] + "."))
            self.assertTrue(c["kernel"].startswith("regex:"), c["name"])
            if c["count"] == "dram":
                self.assertIn("writes", c, c["name"])

    def test_a_planted_bug_runs_its_programs_checks(self):
        m = {"program": "MM-cuBLAS", "path": "x.mutant"}
        self.assertEqual(mutant.counters_checks(m), ["MM-cuBLAS", "MM-cuBLAS.tf32", "MM-cuBLAS.bf16"])
        m["counters"] = "MM-cuBLAS.bf16"
        self.assertEqual(mutant.counters_checks(m), ["MM-cuBLAS.bf16"])
        m["counters"] = "MM-GPU-TC.bf16"
        with self.assertRaises(mutant.MutantError):
            mutant.counters_checks(m)


if __name__ == "__main__":
    unittest.main()

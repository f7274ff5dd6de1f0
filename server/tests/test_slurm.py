#!/usr/bin/env python3
"""The Slurm path: a real one-node cluster (server/slurm/cluster.sh: munged, slurmctld, slurmd from
Debian's packages, in a temporary folder) and the server's SlurmBackend submitting to it.

  - a job's output comes back in its log, run in its own folder;
  - the real grader (scripts/lab.py grade, inside its fence) run as a Slurm job: on a machine
    without a GPU it exits 77 ("NOT GRADED here ...: no usable CUDA device") and the backend
    reports 77, not a pass and not a lost job (with a GPU in the cluster: full marks, exit 0);
  - a cancelled job is cancelled: a negative code, no exit file, none of its processes left;
  - a backend made anew (a server started again) finds a job that still runs and reads its code;
  - through the server (serve.py --backend slurm, its real runner): a student's job page shows
    "cannot run here: no GPU" and exit 77;
  - the server killed while its job runs in the cluster and started again: it adopts the job,
    which ran once, and shows its result;
  - stopping the cluster leaves none of its daemons or jobs.

Run: python3 server/tests/test_slurm.py (ctest -L server). Without Slurm's packages it skips
(exit 77) and says how to install them: apt-get install slurmctld slurmd slurm-client munge
(scripts/setup.sh test does it, and CI=true requires it).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
CLUSTER = ROOT / "server" / "slurm" / "cluster.sh"
PACKAGES = "slurmctld slurmd slurm-client munge"
SBIN = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def missing_tools():
    return [t for t in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol")
            if shutil.which(t, path=SBIN) is None]


def processes_with(marker):
    """The pids whose environment holds the line MARKER (how cluster.sh marks its daemons)."""
    pids = []
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in env.read_bytes().split(b"\0"):
                pids.append(int(env.parent.name))
        except OSError:
            pass
    return pids


def wait_for(what, check, timeout=30, every=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value is not None:
            return value
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout} s")


class SlurmPath(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if missing_tools():
            raise unittest.SkipTest(f"Slurm is not installed (missing {', '.join(missing_tools())}): "
                                    f"apt-get install --no-install-recommends {PACKAGES}")
        cls.tmp = Path(tempfile.mkdtemp(prefix="test_slurm."))
        cls.dir = cls.tmp / "cluster"
        start = time.monotonic()
        out = subprocess.run(["bash", str(CLUSTER), "start", str(cls.dir)], capture_output=True,
                             text=True, timeout=60)
        print(out.stdout + out.stderr, end="", file=sys.stderr)
        if out.returncode != 0:
            raise AssertionError(f"cluster.sh start failed (exit {out.returncode})")
        print(f"test_slurm: cluster up in {time.monotonic() - start:.1f} s", file=sys.stderr)
        cls.conf = str(cls.dir / "slurm.conf")
        from server.slurm import make_backend
        cls.backend = make_backend({"slurm_conf": cls.conf, "slurm_jobs": 2})
        cls.has_gpu = cls.backend.gres is not None

    @classmethod
    def tearDownClass(cls):
        out = subprocess.run(["bash", str(CLUSTER), "stop", str(cls.dir)], capture_output=True,
                             text=True, timeout=90)
        print(out.stdout + out.stderr, end="", file=sys.stderr)
        left = processes_with(f"COURSE_SLURM_CLUSTER={cls.dir}")
        pidfiles = [p for p in cls.dir.glob("*.pid")
                    if p.read_text().strip().isdigit() and Path(f"/proc/{p.read_text().strip()}").exists()]
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if out.returncode != 0 or left or pidfiles:
            raise AssertionError(f"the cluster did not stop cleanly: exit {out.returncode}, "
                                 f"processes left {left}, daemons of {[p.name for p in pidfiles]}")

    def job_folder(self, name):
        d = self.tmp / name
        d.mkdir()
        return d

    def run_job(self, job_id, argv, timeout=30):
        work = self.job_folder(f"job{job_id}")
        h = self.backend.start(job_id, argv, work, work / "log", "slurm0")
        code = wait_for(f"job {job_id}", lambda: self.backend.poll(h), timeout)
        return h, code, (work / "log").read_text(errors="replace")

    def test_output_returns(self):
        h, code, log = self.run_job(1, [sys.executable, "-c",
                                        "import os; print('hello from', os.getcwd())"])
        self.assertEqual(code, 0, log)
        self.assertIn(f"hello from {self.tmp / 'job1'}", log)
        self.assertTrue(h["slurm_id"].isdigit())

    def test_grader_without_gpu_exits_77(self):
        # The real grader, inside its fence, as the server's runner calls it: a solution kit.
        kit = self.tmp / "kit"
        made = subprocess.run([sys.executable, str(ROOT / "scripts" / "lab.py"), "make", "ch02",
                               str(kit), "--solution"], capture_output=True, text=True, timeout=120)
        self.assertEqual(made.returncode, 0, made.stdout + made.stderr)
        self.assertIsNone(self.backend.cannot_run())  # the job decides, on its node
        h, code, log = self.run_job(2, [sys.executable, str(ROOT / "scripts" / "lab.py"), "grade",
                                        str(kit), "--lab", "ch02", "--out",
                                        str(self.tmp / "report2")], timeout=120)
        if self.has_gpu:
            self.assertEqual(code, 0, log)  # the solution: full marks
        else:
            self.assertEqual(code, 77, log)
            self.assertIn("NOT GRADED here, no points lost or won: no usable CUDA device", log)
        self.assertTrue((self.tmp / "report2" / "results.json").is_file(), log)

    def test_exit_codes_and_signals_kept(self):
        _, code, log = self.run_job(3, ["sh", "-c", "echo three; exit 3"])
        self.assertEqual(code, 3, log)
        self.assertIn("three", log)
        _, code, log = self.run_job(4, ["sh", "-c", "kill -KILL $$"])
        self.assertEqual(code, -9, log)  # killed by a signal: negative, as Popen says it

    def test_cancel(self):
        work = self.job_folder("job5")
        h = self.backend.start(5, ["sh", "-c", "echo started; exec sleep 300"], work,
                               work / "log", "slurm0")
        log = work / "log"
        wait_for("job 5 started", lambda: True if log.exists() and "started" in log.read_text()
                 else None)
        self.assertIsNone(self.backend.poll(h))
        job_env = f"SLURM_JOB_ID={h['slurm_id']}"
        self.assertTrue(processes_with(job_env), "the job's processes before cancel")
        self.backend.cancel(h)
        self.backend.cancel(h)  # idempotent
        code = wait_for("job 5's code", lambda: self.backend.poll(h), 10)
        self.assertLess(code, 0)
        # scancel signals every process of the job: the batch script may die first (no exit file;
        # poll reads CANCELLED from the cluster), or see its command killed and write that signal
        # before its own arrives (CI at b89c03f). Either way the code says killed, never an exit.
        exit_file = work / "slurm-exit"
        wait_for("job 5's processes gone", lambda: True if not processes_with(job_env) else None, 10)
        if exit_file.exists():
            # Its code kept: a new server may poll it (as an ended job's, below), and reads the
            # kill (CI at 4f52568 had the exit file, and alive_after_restart said so).
            self.assertLess(int(exit_file.read_text()), 0)
            self.assertTrue(self.backend.alive_after_restart(h))
            self.assertLess(self.backend.poll(h), 0)
        else:
            self.assertFalse(self.backend.alive_after_restart(h))

    def test_restarted_server_finds_its_job(self):
        from server.slurm import make_backend
        work = self.job_folder("job6")
        h = self.backend.start(6, ["sh", "-c", "sleep 3; echo done; exit 5"], work, work / "log",
                               "slurm1")
        again = make_backend({"conf": self.conf})  # a server started anew, with the stored handle
        self.assertTrue(again.alive_after_restart(h))
        code = wait_for("job 6", lambda: again.poll(h), 30)
        self.assertEqual(code, 5)
        self.assertTrue(again.alive_after_restart(h))  # ended, its code kept: poll reads it
        lost = dict(h, slurm_id="999999", exit_file=str(work / "none"))
        self.assertFalse(again.alive_after_restart(lost))
        self.assertEqual(again.poll(lost), -1)  # a job the cluster never had: lost, runs again

    def test_through_the_server(self):
        # The real server (serve.py --backend slurm) with its real runner: a student's job goes
        # through the queue to sbatch, and its page says what the job said.
        if not (ROOT / "server" / "serve.py").exists():
            self.skipTest("server/serve.py is not there yet: the server's core")
        sys.path.insert(0, str(ROOT / "server" / "tests"))
        from serverlib import Client, Server
        server = Server(self.tmp / "state", fake=False,
                        extra=["--backend", "slurm", "--slurm-conf", self.conf,
                               "--slurm-jobs", "2"]).start()
        try:
            token = server.student("ada")
            api = Client(server.port, token)
            status, answer = api.api("POST", "/api/jobs", {"kind": "run", "program": "VA-GPU-NN",
                                                           "args": ["--n", "1000"]})
            self.assertEqual(status, 201, answer)
            job = answer["id"]
            self.assertTrue(server.wait_done([job], 90), f"job {job} did not end in 90 s")
            handle = json.loads(server.store.q("SELECT handle FROM jobs WHERE id = ?", job)[0]["handle"])
            shown = subprocess.run(["scontrol", "-o", "show", "job", handle["slurm_id"]],
                                   capture_output=True, text=True, env=dict(os.environ, SLURM_CONF=self.conf))
            self.assertIn(f"JobName=course-{job} ", shown.stdout, "the job did not go through Slurm")
            _, result = api.api("GET", f"/api/jobs/{job}")
            browser = Client(server.port)
            browser.login(token)
            status, _, page = browser.get(f"/jobs/{job}")
            self.assertEqual(status, 200)
            if self.has_gpu:
                self.assertEqual(result["exit"], 0, result)
            else:
                self.assertEqual((result["state"], result["exit"]), ("done", 77), result)
                self.assertIn("cannot run here: no GPU", result["summary"])
                self.assertIn("cannot run here: no GPU", page)
                self.assertIn('<span id="job-exit">exit 77', page)
        finally:
            server.stop()

    def test_server_killed_finds_its_job_in_the_cluster(self):
        # The server killed (SIGKILL) while its job runs in the cluster, then started again on
        # the same state: it adopts the job (alive_after_restart) and shows its one result; the
        # job ran once. The job is the server tests' fake one (4 s), so no GPU is needed.
        sys.path.insert(0, str(ROOT / "server" / "tests"))
        from serverlib import FAKE, Client, Server
        runs = self.tmp / "runs.log"
        extra = ["--backend", "slurm", "--slurm-conf", self.conf, "--slurm-jobs", "1",
                 "--job-command", FAKE.format(sleep=4, runs=runs)]
        first = Server(self.tmp / "state-restart", fake=False, extra=extra).start()
        try:
            api = Client(first.port, first.student("bo"))
            job = api.api("POST", "/api/jobs", {"kind": "run", "program": "VA-GPU-NN",
                                                "args": []})[1]["id"]

            def running():
                row = first.store.q("SELECT state, handle FROM jobs WHERE id = ?", job)[0]
                return True if row["state"] == "running" and row["handle"] else None
            wait_for(f"job {job} running in the cluster", running, 20)
        finally:
            first.kill()
        second = Server(self.tmp / "state-restart", fake=False, extra=extra).start()
        try:
            self.assertTrue(second.wait_done([job], 40), f"job {job} did not end after the restart")
            row = second.store.q("SELECT state, attempt FROM jobs WHERE id = ?", job)[0]
            _, result = Client(second.port, second.student("bo")).api("GET", f"/api/jobs/{job}")
        finally:
            second.stop()
        self.assertEqual(runs.read_text().split(), [str(job)], "the job ran more than once")
        self.assertEqual((row["state"], row["attempt"]), ("done", 1), "the job was queued again")
        self.assertEqual(result["summary"], f"ran job {job}")

if __name__ == "__main__":
    if missing_tools():
        print(f"test_slurm: skipped: Slurm is not installed (missing {', '.join(missing_tools())});"
              f" install with: apt-get install --no-install-recommends {PACKAGES}"
              " (or scripts/setup.sh test as root)")
        sys.exit(77)
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)

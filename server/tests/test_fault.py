#!/usr/bin/env python3
"""Faults: a job's process killed mid-run (SIGKILL), then the server itself killed (SIGKILL)
with jobs running and queued, and started again on the same state. Every job must finish
exactly once: one result each, the result of its own job (never another's), the killed ones
run again (a new attempt), and no process of the dead server's jobs left running."""
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serverlib import Client, Server, alive  # noqa: E402


class FaultTest(unittest.TestCase):
    def test_kill_a_job_then_the_server_and_every_job_finishes_once(self):
        tmp = Path(tempfile.mkdtemp(prefix="server-fault-"))
        srv = Server(tmp / "state", sleep=0.3, workers=2)
        try:
            srv.start()
            ids = []
            for n in range(6):
                c = Client(srv.port, srv.student(f"s{n}"))
                for _ in range(2):
                    s, r = c.api("POST", "/api/jobs", {"kind": "run", "program": "VA-GPU-NN", "args": []})
                    self.assertEqual(s, 201, r)
                    ids.append(r["id"])
            # 1. kill a running job's process (the worker's child) mid-run
            victim = None
            for _ in range(200):
                rows = srv.store.q("SELECT id, attempt, handle FROM jobs WHERE state='running' AND handle IS NOT NULL")
                if rows:
                    victim = rows[0]
                    break
                time.sleep(0.01)
            self.assertIsNotNone(victim, "no job ran")
            os.killpg(json.loads(victim["handle"])["pid"], signal.SIGKILL)
            # 2. kill the server while jobs run and wait
            for _ in range(300):
                running = srv.store.q("SELECT id, handle FROM jobs WHERE state='running' AND handle IS NOT NULL "
                                      "AND id != ?", victim["id"])
                if running:
                    break
                time.sleep(0.01)
            srv.kill()
            left = srv.store.q("SELECT id, handle FROM jobs WHERE state='running'")
            queued = srv.store.q("SELECT COUNT(*) AS n FROM jobs WHERE state='queued'")[0]["n"]
            print(f"server killed with {len(left)} running ({[r['id'] for r in left]}) and {queued} queued")
            self.assertGreater(len(left) + queued, 0)
            orphans = [json.loads(r["handle"])["pid"] for r in left if r["handle"]]
            # 3. the same state, a new server
            srv.start()
            self.assertTrue(srv.wait_done(ids, 60), "not every job finished after the restart")
            for pid in orphans:
                self.assertFalse(alive(pid), f"a job process of the dead server ({pid}) still runs")
            results = srv.store.q("SELECT job_id, attempt, summary FROM results ORDER BY job_id")
            self.assertEqual([r["job_id"] for r in results], sorted(ids))  # one each, none twice
            for r in results:
                self.assertEqual(r["summary"], f"ran job {r['job_id']}")  # its own, never another's
            jobs = {r["id"]: dict(r) for r in srv.store.q("SELECT id, state, attempt, exit FROM jobs")}
            self.assertTrue(all(j["state"] == "done" and j["exit"] == 0 for j in jobs.values()), jobs)
            self.assertGreaterEqual(jobs[victim["id"]]["attempt"], 2)  # the killed job ran again
            for r in left:
                self.assertGreaterEqual(jobs[r["id"]]["attempt"], 2)
            attempts = {r["job_id"]: r["attempt"] for r in results}
            self.assertEqual(attempts, {i: jobs[i]["attempt"] for i in ids})  # the result of the last attempt
            runs = srv.runs.read_text().split()
            print(f"{len(ids)} jobs, {len(runs)} runs that got to their end, "
                  f"attempts: {sorted(j['attempt'] for j in jobs.values())}")
        finally:
            srv.stop()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)

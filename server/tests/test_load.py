#!/usr/bin/env python3
"""Load: 200 students log in through the pages and submit 3 jobs each, 16 at a time, while the
queue is held; then it is released and 4 workers serve the 600 jobs (a fake job of 10 ms, through
the same queue). Prints the p95 of the pages' latency and the order of service, and checks it is
round robin: every student's k-th job is served in round k (service places 200(k-1)..200k-1)."""
import json
import shutil
import statistics
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serverlib import Client, Server  # noqa: E402

STUDENTS, JOBS, THREADS = 200, 3, 16
P95_LIMIT_S, TOTAL_LIMIT_S = 2.0, 60.0


class LoadTest(unittest.TestCase):
    def test_200_students_are_served_round_robin_within_bounded_time(self):
        tmp = Path(tempfile.mkdtemp(prefix="server-load-"))
        srv = Server(tmp / "state", sleep=0.01, workers=4, extra=["--logins-per-minute", "100000"])
        try:
            tokens = [srv.student(f"st{n:03d}") for n in range(STUDENTS)]
            srv.store.set_setting("hold", "1")
            srv.start()
            latencies = []

            def timed(f, *a):
                t = time.perf_counter()
                r = f(*a)
                latencies.append(time.perf_counter() - t)
                return r

            def student(n):
                b = Client(srv.port)
                timed(b.login, tokens[n])
                ids = []
                for k in range(JOBS):
                    csrf = timed(b.csrf)
                    s, h, _ = timed(b.post, "/jobs", {"kind": "run", "program": "VA-GPU-NN",
                                                      "args": f"--n {k + 1}", "csrf": csrf})
                    assert s == 303, s
                    ids.append(int(h["Location"].rsplit("/", 1)[1]))
                    timed(b.get, h["Location"])
                return ids

            started = time.monotonic()
            with ThreadPoolExecutor(THREADS) as pool:
                ids = [i for batch in pool.map(student, range(STUDENTS)) for i in batch]
            submitted = time.monotonic() - started
            srv.store.set_setting("hold", "0")
            self.assertTrue(srv.wait_done(ids, TOTAL_LIMIT_S), "the queue did not drain in time")
            total = time.monotonic() - started
            p95 = statistics.quantiles(latencies, n=20)[-1]
            order = srv.store.q("SELECT id, student FROM jobs ORDER BY served")
            print(f"{len(latencies)} page requests by {STUDENTS} students ({THREADS} at a time): "
                  f"median {statistics.median(latencies) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
                  f"max {max(latencies) * 1000:.1f} ms; {len(ids)} jobs submitted in {submitted:.1f} s, "
                  f"all served {total:.1f} s after the first request")
            print("order of service (first 8, then each round's first): "
                  + " ".join(r["student"] for r in order[:8]) + " ... "
                  + " | ".join(f"round {k + 1}: {order[k * STUDENTS]['student']}" for k in range(JOBS)))
            self.assertLess(p95, P95_LIMIT_S)
            self.assertLess(total, TOTAL_LIMIT_S)
            # Round robin: the k-th job of every student is served in round k.
            nth, seen = {}, {}
            for r in srv.store.q("SELECT id, student FROM jobs ORDER BY id"):
                seen[r["student"]] = seen.get(r["student"], 0) + 1
                nth[r["id"]] = seen[r["student"]]
            rounds = [nth[r["id"]] for r in order]
            late = [(i, r) for i, r in enumerate(rounds) if r != i // STUDENTS + 1]
            self.assertEqual(late, [], "jobs served outside their round (place, round)")
            summaries = srv.store.q("SELECT job_id, summary FROM results")
            self.assertEqual(len(summaries), len(ids))
            self.assertTrue(all(r["summary"] == f"ran job {r['job_id']}" for r in summaries))
            json.dumps(rounds)
        finally:
            srv.stop()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)

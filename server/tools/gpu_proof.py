#!/usr/bin/env python3
"""The course server's proof on a GPU machine (run by gpu_proof.sh; see its header).

gpu_proof.py OUT: a course of 6 students, lab ch02 open, the server started with its local
workers (one per visible GPU), then through its HTTP API (the client's bearer tokens):
the solution (must score full marks), the skeleton (0), three cheats of tests/labs/cheats
(0 on each one's attacked task), and exercise ch02_vector_add.3 run with a student's edit
(the exercise's own change, written as a student's file: every claim must hold) and with the
course's file unchanged (a claim must not hold), and VA-GPU-NN traced with the solution's file
as the edit (the picture, OUT/trace-VA-GPU-NN.png, served as image/png). Then the
server's time per job against `lab.py grade` alone on the same solution, alternated, 3 rounds,
each grade's speed gates taken out (overhead() says why). Writes OUT/proof.json and OUT/state/ (the server's database and job folders). Exit 0 when every
check held, 1 when one did not, 77 when no GPU is here (after the CPU part ran).

gpu_proof.py OUT --throughput (two GPUs): 8 solutions graded by one worker, then by two
(OUT/throughput.json); two must give at least 1.8 times the throughput of one.

gpu_proof.py OUT --overhead LAB: the overhead check alone, on lab LAB's solution
(OUT/overhead.json)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "labs"))
sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
sys.path.insert(0, str(REPO / "tests" / "exercises"))
sys.path.insert(0, str(REPO))
from grader.fence import gpu_probe  # noqa: E402
from grader.kit import cmd_make  # noqa: E402
from grader.labs import find_lab  # noqa: E402
from server.client import pack  # noqa: E402
from server.jobqueue import Store  # noqa: E402
from server.tests.serverlib import free_port  # noqa: E402

CHEATS = ("static-initializer-prints-gtest-summary", "redefine-expect-macro", "recognises-fixed-inputs")


def api(port, token, method, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def run_job(port, token, body, timeout=900):
    import base64
    started = time.monotonic()
    job = api(port, token, "POST", "/api/jobs", body)
    while time.monotonic() - started < timeout:
        j = api(port, token, "GET", f"/api/jobs/{job['id']}")
        if j["state"] in ("done", "failed"):
            j["wall_s"] = round(time.monotonic() - started, 2)
            return j
        time.sleep(0.1)
    raise SystemExit(f"job {job['id']} did not finish in {timeout} s")
    base64  # noqa: B018


def task_scores(j):
    tests = ((j.get("detail") or {}).get("results") or {}).get("tests", [])
    out = {}
    for t in tests:
        tid = t["name"].split(" ")[0]
        s, m = out.get(tid, (0, 0))
        out[tid] = (s + t["score"], m + t["max_score"])
    return out


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu-proof-"))
    state = work / "state"
    store = Store(state)
    tokens = {n: store.add_student(n, n) for n in ["solution", "skeleton", "timing", "exercise", "trace"] + list(CHEATS)}
    store.set_lab("ch02", True)
    lab = find_lab("ch02")[0]
    import cheats
    folders = {"solution": work / "solution", "skeleton": work / "skeleton"}
    cmd_make("ch02", folders["solution"], solution=True)
    cmd_make("ch02", folders["skeleton"], solution=False)
    for c in cheats.CHEATS:
        if c["name"] in CHEATS:
            folders[c["name"]] = work / c["name"]
            cmd_make("ch02", folders[c["name"]], solution=True)
            c["make"](folders[c["name"]], lab)
    port = free_port()
    log = open(out / "server.log", "w")
    srv = subprocess.Popen([sys.executable, str(REPO / "server" / "serve.py"), "--state", str(state),
                            "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    proof = {"gpu": None, "checks": [], "jobs": {}}
    try:
        for _ in range(100):
            if "serve.py: http" in (out / "server.log").read_text():
                break
            time.sleep(0.1)
        proof["server"] = (out / "server.log").read_text().splitlines()[0]
        print(proof["server"], flush=True)

        def check(name, ok, what):
            proof["checks"].append({"check": name, "held": bool(ok), "what": what})
            print(f"{'HELD' if ok else 'FAILED'}: {name}: {what}", flush=True)

        def grade(who, folder):
            import base64
            j = run_job(port, tokens[who], {"kind": "grade", "lab": "ch02",
                                            "upload_b64": base64.b64encode(pack(folder)).decode()})
            proof["jobs"][who] = {"id": j["id"], "exit": j["exit"], "summary": j["summary"],
                                  "tasks": task_scores(j), "wall_s": j["wall_s"]}
            print(f"{who}: job {j['id']} exit {j['exit']}: {j['summary']} {task_scores(j)} ({j['wall_s']} s)", flush=True)
            return j

        j = grade("solution", folders["solution"])
        why = gpu_probe()
        if j["exit"] == 77 or why:
            print(f"gpu_proof: no GPU here ({why or j['summary']}): the CPU part ran, stopping (77)")
            return 77
        proof["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                      capture_output=True, text=True).stdout.strip()
        check("solution full marks", j["exit"] == 0 and all(s == m for s, m in task_scores(j).values()), j["summary"])
        j = grade("skeleton", folders["skeleton"])
        check("skeleton 0", all(s == 0 for s, _ in task_scores(j).values()), j["summary"])
        for c in cheats.CHEATS:
            if c["name"] in CHEATS:
                j = grade(c["name"], folders[c["name"]])
                zero = {t: task_scores(j).get(t) for t in c["zero"]}
                check(f"cheat {c['name']} 0 on {', '.join(c['zero'])}", all(v and v[0] == 0 for v in zero.values()),
                      f"{zero} ({j['summary']})")
        import exercise as ex
        e = ex.parse(ex.find("ch02_vector_add.3"))
        j = run_job(port, tokens["exercise"], {"kind": "exercise", "exercise": e["name"], "edit": ex.patched(e)})
        claims = (j.get("detail") or {}).get("claims") or []
        proof["jobs"]["exercise"] = {"id": j["id"], "exit": j["exit"], "summary": j["summary"], "claims": claims}
        check("exercise ch02_vector_add.3 with an edit: every claim held", j["exit"] == 0 and claims,
              j["summary"] + "; " + "; ".join(c["says"] for c in claims))
        # The same exercise with an edit that keeps the course's index: its claims are measured on
        # the student's build, so they must not all hold (the change was not made).
        j = run_job(port, tokens["exercise"], {"kind": "exercise", "exercise": e["name"],
                                               "edit": (REPO / e["source"]).read_text()})
        claims = (j.get("detail") or {}).get("claims") or []
        proof["jobs"]["exercise-unchanged"] = {"id": j["id"], "exit": j["exit"], "summary": j["summary"], "claims": claims}
        check("exercise ch02_vector_add.3 with the index unchanged: a claim did not hold", j["exit"] == 1 and claims
              and not all(c["holds"] for c in claims), j["summary"] + "; " + "; ".join(
                  f"{'held' if c['holds'] else 'NOT'}: {c['says']} ({c.get('value')})" for c in claims))
        # A traced run with the student's own file (the solution's regions): the picture of its kernel's accesses.
        args = ["--n", "40", "--blocks", "2", "--threads", "8", "--repeats", "1"]
        j = run_job(port, tokens["trace"], {"kind": "run", "program": "VA-GPU-NN", "args": args, "trace": "1",
                                            "edit": (folders["solution"] / "ch02_vector_add" / "VA-GPU-NN.cu").read_text()})
        detail = j.get("detail") or {}
        png = b""
        if detail.get("picture"):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/api/jobs/{j['id']}/trace.png",
                                         headers={"Authorization": f"Bearer {tokens['trace']}"})
            with urllib.request.urlopen(req, timeout=60) as r:
                png = r.read() if r.headers.get("Content-Type") == "image/png" else b""
            (out / "trace-VA-GPU-NN.png").write_bytes(png)
        proof["jobs"]["trace"] = {"id": j["id"], "exit": j["exit"], "summary": j["summary"],
                                  "trace": detail.get("trace"), "png_bytes": len(png)}
        check("a traced run with an edit: the trace recorded in the fence and read back",
              j["exit"] == 0 and "c: 40 of 40 elements written, 0 more than once" in (detail.get("trace") or ""),
              f"{j['summary']}; {detail.get('trace')}")
        check("a traced run with an edit: the picture served as a PNG (matplotlib draws it)",
              png.startswith(b"\x89PNG"), f"{len(png)} bytes (OUT/trace-VA-GPU-NN.png)")
        proof["overhead"] = overhead(port, tokens["timing"], folders["solution"], "ch02", store, work)
        check("server overhead per job within 5% of lab.py grade alone", proof["overhead"]["held"],
              proof["overhead"]["what"])
        return 0 if all(c["held"] for c in proof["checks"]) else 1
    finally:
        srv.terminate()
        srv.wait(30)
        log.close()
        (out / "proof.json").write_text(json.dumps(proof, indent=1))
        shutil.copytree(state, out / "state", ignore=shutil.ignore_patterns("*.tmp"))
        shutil.rmtree(work, ignore_errors=True)


def stages(state, job_id):
    """Where one grade's time went, as lab.py grade wrote it in its results.json (builds, speed
    gates and their wait for the lock): what to compare when two workers grade slower than one."""
    found = sorted((Path(state) / "jobs" / str(job_id)).glob("a*/result.json"))
    meta = (json.loads(found[-1].read_text()).get("results") or {}) if found else {}
    return {k: meta.get(k) for k in ("build_s", "speed_gates_s", "speed_gate_wait_s", "builds")}


def overhead(port, token, folder, chapter, store, work, rounds=3):
    """The same solution graded by lab.py grade alone and through the server, alternated, both
    with the worker's grader folder (build-lab/server-gpu-0: the same cache, warm after the
    server's first grade). A grade's own time varies by several seconds from one grade to the
    next (ch02's speed gate took 8.7 s in one grade and 14.7 s in the next on an H200), which a
    best of 2 cannot tell from the server's cost; so each grade's speed gates (its results.json)
    are taken out of both sides before they are compared, and the server's own part of each job
    (the client's wall time less the worker process's, from the server's database) is reported
    beside it. Held: the grades without their gates, best of ROUNDS, within 5%."""
    import base64
    gpu_work = REPO / "build-lab" / "server-gpu-0"
    upload = base64.b64encode(pack(folder)).decode()
    alone, served = [], []
    for r in range(rounds):
        t = time.monotonic()
        subprocess.run([sys.executable, str(REPO / "scripts" / "lab.py"), "grade", str(folder), "--lab", chapter,
                        "--out", str(work / f"alone-{r}"), f"--work={gpu_work}"], stdout=subprocess.DEVNULL)
        took = time.monotonic() - t
        results = work / f"alone-{r}" / "results.json"
        gates = (json.loads(results.read_text()).get("speed_gates_s") or 0.0) if results.is_file() else 0.0
        alone.append({"wall_s": round(took, 2), "speed_gates_s": gates})
        j = run_job(port, token, {"kind": "grade", "lab": chapter, "upload_b64": upload})
        (start, end), = store.q("SELECT started, finished FROM jobs WHERE id = ?", j["id"])
        served.append({"wall_s": j["wall_s"], "speed_gates_s": stages(store.state, j["id"])["speed_gates_s"] or 0.0,
                       "worker_process_s": round(end - start, 2), "server_own_s": round(j["wall_s"] - (end - start), 2)})
    net = min(x["wall_s"] - x["speed_gates_s"] for x in served) / \
        min(x["wall_s"] - x["speed_gates_s"] for x in alone) - 1
    raw = min(x["wall_s"] for x in served) / min(x["wall_s"] for x in alone) - 1
    own = max(x["server_own_s"] for x in served)
    what = (f"lab {chapter}, {rounds} rounds: without the speed gates {net * 100:+.1f}% (best of each); "
            f"whole grades {raw * 100:+.1f}%; lab.py grade {[x['wall_s'] for x in alone]} s, through the server "
            f"{[x['wall_s'] for x in served]} s; the server's own part of a job at most {own:.2f} s")
    return {"lab": chapter, "alone": alone, "served": served, "overhead_without_gates": round(net, 4),
            "overhead_whole": round(raw, 4), "held": net <= 0.05, "what": what}


def overhead_only(out, chapter):
    """gpu_proof.py OUT --overhead LAB: the overhead check alone, on lab LAB's solution (a server
    of its own, one warm-up grade through it first)."""
    import base64
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu-overhead-"))
    state = work / "state"
    store = Store(state)
    token = store.add_student("timing", "timing")
    store.set_lab(chapter, True)
    cmd_make(chapter, work / "solution", solution=True)
    port = free_port()
    log = open(out / "server-overhead.log", "w")
    srv = subprocess.Popen([sys.executable, str(REPO / "server" / "serve.py"), "--state", str(state),
                            "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(3)
        j = run_job(port, token, {"kind": "grade", "lab": chapter,
                                  "upload_b64": base64.b64encode(pack(work / "solution")).decode()})
        if j["exit"] == 77:
            print(f"gpu_proof --overhead: {j['summary']}: skipped (77)")
            return 77
        o = overhead(port, token, work / "solution", chapter, store, work)
        print(f"{'HELD' if o['held'] else 'FAILED'}: server overhead per job within 5% of lab.py grade alone: "
              f"{o['what']}", flush=True)
        (out / "overhead.json").write_text(json.dumps(o, indent=1))
        return 0 if o["held"] else 1
    finally:
        srv.terminate()
        srv.wait(30)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def throughput(out, n=8):
    """Two GPUs: the same N solutions graded with one worker (CUDA_VISIBLE_DEVICES=0) and with
    two (0,1), each after a warm-up that fills each worker's reference cache (until every worker
    has finished a grade); each grade's time on its worker is kept. Two workers must
    give at least 1.8 times the jobs per second of one."""
    import base64
    from server.backends import visible_gpus
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    gpus = visible_gpus()
    if len(gpus) < 2:
        print(f"gpu_proof --throughput: needs two GPUs, {len(gpus)} visible: skipped (77)")
        return 77
    work = Path(tempfile.mkdtemp(prefix="gpu-throughput-"))
    solution = work / "solution"
    cmd_make("ch02", solution, solution=True)
    upload = base64.b64encode(pack(solution)).decode()
    rates = {}
    try:
        for name, visible in (("one", gpus[0]), ("two", ",".join(gpus[:2]))):
            state = work / f"state-{name}"
            store = Store(state)
            tokens = [store.add_student(f"s{i}", f"s{i}") for i in range(n + 2)]
            store.set_lab("ch02", True)
            port = free_port()
            log = open(out / f"server-{name}.log", "w")
            srv = subprocess.Popen([sys.executable, str(REPO / "server" / "serve.py"), "--state", str(state),
                                    "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                                   env=dict(os.environ, CUDA_VISIBLE_DEVICES=visible))
            try:
                time.sleep(3)
                from concurrent.futures import ThreadPoolExecutor
                body = {"kind": "grade", "lab": "ch02", "upload_b64": upload}
                workers = len(visible.split(","))
                warm = [store.add_student(f"warm{i}", f"warm{i}") for i in range(workers)]

                def served():  # the workers that have finished a grade
                    return {r[0] for r in store.q("SELECT slot FROM jobs WHERE state='done'")}
                with ThreadPoolExecutor(n) as pool:
                    # Warm-up: each worker's first grade builds and caches the reference in its
                    # own grader folder (about 5 s more). Rounds of one grade per worker until
                    # every worker has finished one: a round can go to one worker twice.
                    for _ in range(4):
                        list(pool.map(lambda t: run_job(port, t, body), warm))
                        if len(served()) == workers:
                            break
                    first = max(r[0] for r in store.q("SELECT id FROM jobs"))
                    started = time.monotonic()
                    jobs = list(pool.map(lambda t: run_job(port, t, body), tokens[:n]))
                wall = time.monotonic() - started
                each = store.q("SELECT id, slot, finished - started FROM jobs WHERE id > ?", first)
                rates[name] = {"jobs": n, "wall_s": round(wall, 1), "jobs_per_min": round(60 * n / wall, 2),
                               "scores": [j["summary"] for j in jobs], "gpus": visible,
                               "warm_workers": sorted(served()),
                               "grade_s": [[slot, round(t, 1)] for _, slot, t in each],
                               "stages": [stages(state, i) for i, _, _ in each]}
                print(f"{name} worker(s) on GPU {visible}: {n} grades in {wall:.1f} s", flush=True)
            finally:
                srv.terminate()
                srv.wait(30)
                log.close()
        ratio = rates["two"]["jobs_per_min"] / rates["one"]["jobs_per_min"]
        rates["ratio"] = round(ratio, 2)
        ok = ratio >= 1.8 and all(s.startswith("18 / 18") for r in ("one", "two") for s in rates[r]["scores"])
        print(f"{'HELD' if ok else 'FAILED'}: two workers on two GPUs give {ratio:.2f} times the throughput "
              f"of one (at least 1.8), every grade 18 / 18", flush=True)
        (out / "throughput.json").write_text(json.dumps(rates, indent=1))
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    argv = sys.argv[1:]
    chapter = argv[argv.index("--overhead") + 1] if "--overhead" in argv[:-1] else None
    words = [w for w in argv if w not in ("--throughput", "--overhead", chapter)]
    where = words[0] if words else os.environ.get("OUT", "gpu-proof")
    if chapter:
        sys.exit(overhead_only(where, chapter))
    sys.exit(throughput(where) if "--throughput" in argv else main(where))

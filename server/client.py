#!/usr/bin/env python3
"""The student's command line: talks HTTP to the course server (docs/server.md).

    client.py submit LAB FOLDER          grade a lab folder (packed as a .tar.gz here); waits, prints the report
    client.py run PROGRAM [--edit FILE] [--trace [--picture PNG]] [-- ARGS...]
                                         run a program (with your edit of its lab regions); --trace:
                                         and draw its kernel's accesses, saved to PNG (default
                                         trace-JOB.png)
    client.py exercise NAME [--edit FILE]               run an exercise (with your edit of the lines
                                         it changes); which of its claims held, with the values measured
    client.py status JOB                 one job (state, queue position, result)
    client.py history                    your jobs
    client.py programs                   the programs and their flags, the exercises, the open labs

The server and token come from --server/--token or COURSE_SERVER/COURSE_TOKEN.
Exit codes: the job's (0 ok or full marks, 1 failed or points lost, 77 cannot run there), 2 usage
or refused by the server, 3 the server could not be reached.
"""
import argparse
import base64
import io
import json
import os
import sys
import tarfile
import time
import urllib.error
import urllib.request
from pathlib import Path


def call(args, method, path, body=None):
    req = urllib.request.Request(args.server.rstrip("/") + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {args.token.strip()}",
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            msg = json.loads(e.read()).get("error")
        except ValueError:
            msg = e.reason
        print(f"client.py: the server said {e.code}: {msg}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        print(f"client.py: cannot reach {args.server}: {e}", file=sys.stderr)
        sys.exit(3)


def download(args, path, to):
    """A job's picture (GET with the token) written to TO; False when the server has none."""
    req = urllib.request.Request(args.server.rstrip("/") + path,
                                 headers={"Authorization": f"Bearer {args.token.strip()}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            if r.headers.get("Content-Type") != "image/png":
                return False
            Path(to).write_bytes(r.read())
            return True
    except OSError:
        return False


def pack(folder):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in sorted(Path(folder).rglob("*")):
            if p.is_file() and not p.is_symlink() and p.suffix in (".cu", ".h", ".cuh") \
                    and "build" not in p.relative_to(folder).parts[:1]:
                tar.add(p, arcname=str(p.relative_to(folder)))
    return buf.getvalue()


def wait(args, job_id):
    last = None
    while True:
        j = call(args, "GET", f"/api/jobs/{job_id}")
        if j["state"] in ("done", "failed"):
            print(f"\rjob {job_id}: {j['state']}, exit {j['exit']}: {j['summary']}" + " " * 20)
            detail = j.get("detail") or {}
            for c in detail.get("claims") or []:
                value = "no value" if c.get("value") is None else c["value"]
                print(f"  {'held' if c['holds'] else 'DID NOT HOLD'}: {c['says']} (measured: {value}; "
                      f"claim: {c['claim']})")
            for r in detail.get("runs") or []:
                print(f"  run {r['run']} ({r['build']}{', ' + r['args'] if r.get('args') else ''}): {r['outcome']}")
            if detail.get("trace"):
                print(detail["trace"])
            if detail.get("picture"):
                to = getattr(args, "picture", None) or f"trace-{job_id}.png"
                print(f"the picture: {to}" if download(args, f"/api/jobs/{job_id}/trace.png", to)
                      else "the picture could not be fetched")
            if j.get("report"):
                print(j["report"])
            if j.get("output"):
                print(j["output"])
            return j["exit"] if j["exit"] is not None else 1
        if j["progress"] != last:
            print(f"\rjob {job_id}: {j['progress']}" + " " * 10, end="", flush=True)
            last = j["progress"]
        time.sleep(1)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.environ.get("COURSE_SERVER", "http://127.0.0.1:8045"))
    p.add_argument("--token", default=os.environ.get("COURSE_TOKEN"))
    p.add_argument("--no-wait", action="store_true", help="print the job's id and return")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("submit")
    s.add_argument("lab")
    s.add_argument("folder")
    r = sub.add_parser("run")
    r.add_argument("program")
    r.add_argument("--edit", help="your copy of the program's file (its LAB regions are taken)")
    r.add_argument("--trace", action="store_true", help="draw its kernel's accesses (the programs "
                   "with a traced picture: client.py programs)")
    r.add_argument("--picture", help="where to save the picture (default trace-JOB.png)")

    e = sub.add_parser("exercise")
    e.add_argument("name")
    e.add_argument("--edit", help="your edited copy of the exercise's program (only the lines the "
                   "exercise changes may differ from the course's)")
    sub.add_parser("status").add_argument("job", type=int)
    sub.add_parser("history")
    sub.add_parser("programs")
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if not a.token:
        print("client.py: no token: --token or COURSE_TOKEN (your instructor gave you one)", file=sys.stderr)
        return 2
    if a.cmd == "history":
        for j in call(a, "GET", "/api/jobs")["jobs"]:
            where = f" (number {j['position']} in the queue)" if j["state"] == "queued" else ""
            print(f"#{j['id']}\t{j['kind']}\t{j['state']}{where}\t{j['summary'] or ''}")
        return 0
    if a.cmd == "programs":
        print(json.dumps(call(a, "GET", "/api/programs"), indent=1))
        return 0
    if a.cmd == "status":
        print(json.dumps(call(a, "GET", f"/api/jobs/{a.job}"), indent=1))
        return 0
    if a.cmd == "submit":
        body = {"kind": "grade", "lab": a.lab, "upload_b64": base64.b64encode(pack(a.folder)).decode()}
    elif a.cmd == "run":
        body = {"kind": "run", "program": a.program, "args": program_args}
        if a.trace:
            body["trace"] = "1"
    else:
        body = {"kind": "exercise", "exercise": a.name}
    if getattr(a, "edit", None):
        body["edit"] = Path(a.edit).read_text()
    job = call(a, "POST", "/api/jobs", body)
    print(f"job {job['id']}: {a.server.rstrip('/')}{job['url']}")
    return 0 if a.no_wait else wait(a, job["id"])


if __name__ == "__main__":
    sys.exit(main())

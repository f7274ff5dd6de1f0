#!/usr/bin/env python3
"""The instructor's command line: works on the server's state folder directly (run it on the
server's machine, as the server's user; the server may be running).

    admin.py --state DIR course create --roster roster.csv   one token per student, printed once
    admin.py --state DIR student add ID [--name NAME]        a new token (replaces the old one)
    admin.py --state DIR revoke ID                           the token and its sessions stop working
    admin.py --state DIR lab open CH [--deadline 2026-12-01T23:59]   (UTC) / lab close CH
    admin.py --state DIR submissions [--lab CH]              every job of every student
    admin.py --state DIR export --lab CH [--csv FILE]        the grade book: lab.py grade-class's CSV,
                                                             each student's latest graded submission
    admin.py --state DIR regrade --lab CH [--student ID]     the latest submissions queued again
    admin.py --state DIR queue hold|release                  workers take no job while held

roster.csv: a header line with `student` (an id: letters, digits, ._-) and optionally `name`.
"""
import argparse
import csv
import datetime
import io
import json
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from server.jobqueue import Store  # noqa: E402

ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def labs_json():
    return {lab["chapter"]: lab for lab in json.loads((HERE.parent / "labs" / "labs.json").read_text())["labs"]}


def course_create(store, roster):
    rows = list(csv.DictReader(open(roster, newline="")))
    if not rows or "student" not in rows[0]:
        raise SystemExit("admin.py: the roster needs a header line with a 'student' column")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["student", "name", "token"])
    for r in rows:
        sid = r["student"].strip()
        if not ID.match(sid):
            raise SystemExit(f"admin.py: student id {sid!r}: letters, digits and ._- only")
        out.writerow([sid, r.get("name", "").strip(), store.add_student(sid, r.get("name", "").strip())])
    print(f"# {len(rows)} tokens: shown this once, kept only hashed. Hand each student theirs.", file=sys.stderr)


def latest_grades(store, chapter):
    rows = store.q("SELECT j.id, j.student, r.detail, r.exit FROM jobs j JOIN results r ON r.job_id=j.id "
                   "WHERE j.kind='grade' AND j.state='done' ORDER BY j.id")
    latest = {}
    for r in rows:
        spec = json.loads(store.q("SELECT spec FROM jobs WHERE id=?", r["id"])[0]["spec"])
        if spec.get("lab") == chapter:
            latest[r["student"]] = r
    return latest


def export(store, chapter):
    """The CSV of lab.py grade-class: student, one column per task, total, max, lost."""
    lab = labs_json()[chapter]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student"] + [t["id"] for t in lab["tasks"]] + ["total", "max", "lost"])
    students = [r["id"] for r in store.q("SELECT id FROM students ORDER BY id")]
    latest = latest_grades(store, chapter)
    for sid in students:
        res = (json.loads(latest[sid]["detail"] or "{}").get("results") if sid in latest else None) or {}
        tests = res.get("tests", [])
        per = [sum(t["score"] for t in tests if t["name"].startswith(task["id"] + " ")) for task in lab["tasks"]]
        maximum = sum(sum(task["points"].values()) for task in lab["tasks"])
        lost = "; ".join(f"{t['name'].split(':')[0]}: {t['output'][:120]}" for t in tests if t["score"] < t["max_score"])
        if sid not in latest:
            lost = "no graded submission"
        w.writerow([sid] + per + [sum(per), maximum, lost])
    return buf.getvalue()


def regrade(store, chapter, student=None):
    """Each latest submission queued again as a new job (its folder copied): the old result stays."""
    ids = []
    for sid, r in latest_grades(store, chapter).items():
        if student and sid != student:
            continue
        old = store.state / "jobs" / str(r["id"])
        spec = json.loads((old / "spec.json").read_text())
        job_id = store.reserve(sid, "grade", spec, 10 ** 6)
        new = store.state / "jobs" / str(job_id)
        shutil.copytree(old, new, ignore=lambda d, names: [n for n in names if re.fullmatch(r"a\d+", n)])
        spec.update(job=job_id, regrade_of=r["id"])
        (new / "spec.json").write_text(json.dumps(spec))
        store.release(job_id)
        ids.append(job_id)
    return ids


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--state", required=True)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("course").add_subparsers(dest="sub", required=True).add_parser("create")
    c.add_argument("--roster", required=True)
    s = sub.add_parser("student").add_subparsers(dest="sub", required=True).add_parser("add")
    s.add_argument("id")
    s.add_argument("--name", default="")
    sub.add_parser("revoke").add_argument("id")
    lab = sub.add_parser("lab")
    lab.add_argument("action", choices=("open", "close"))
    lab.add_argument("chapter")
    lab.add_argument("--deadline", help="UTC, ISO 8601: 2026-12-01T23:59")
    sm = sub.add_parser("submissions")
    sm.add_argument("--lab")
    ex = sub.add_parser("export")
    ex.add_argument("--lab", required=True)
    ex.add_argument("--csv")
    rg = sub.add_parser("regrade")
    rg.add_argument("--lab", required=True)
    rg.add_argument("--student")
    sub.add_parser("queue").add_argument("action", choices=("hold", "release"))
    a = p.parse_args(argv)
    store = Store(a.state)
    if getattr(a, "lab", None) and a.lab not in labs_json() or getattr(a, "chapter", None) and a.chapter not in labs_json():
        print(f"admin.py: no lab {a.lab or a.chapter!r} (the labs: {', '.join(labs_json())})")
        return 2
    if a.cmd == "course":
        course_create(store, a.roster)
    elif a.cmd == "student":
        if not ID.match(a.id):
            print("admin.py: a student id: letters, digits and ._- only")
            return 2
        print(f"{a.id},{a.name},{store.add_student(a.id, a.name)}")
    elif a.cmd == "revoke":
        if not store.revoke(a.id):
            print(f"admin.py: no student {a.id!r}")
            return 2
        print(f"revoked {a.id}: the token and its sessions no longer work")
    elif a.cmd == "lab":
        deadline = None
        if a.deadline:
            deadline = datetime.datetime.fromisoformat(a.deadline).replace(
                tzinfo=datetime.timezone.utc).timestamp()
        store.set_lab(a.chapter, a.action == "open", deadline)
        print(f"lab {a.chapter} {'open' if a.action == 'open' else 'closed'}"
              + (f" until {a.deadline} UTC" if deadline else ""))
    elif a.cmd == "submissions":
        for r in store.q("SELECT id, student, kind, spec, state, attempt, exit, summary FROM jobs ORDER BY id"):
            spec = json.loads(r["spec"])
            if a.lab and spec.get("lab") != a.lab:
                continue
            print(f"#{r['id']}\t{r['student']}\t{r['kind']}\t{spec.get('lab') or spec.get('program') or spec.get('exercise')}"
                  f"\t{r['state']}\tattempt {r['attempt']}\texit {r['exit']}\t{r['summary'] or ''}")
    elif a.cmd == "export":
        text = export(store, a.lab)
        if a.csv:
            Path(a.csv).write_text(text)
            print(f"grade book of {a.lab}: {a.csv}")
        else:
            sys.stdout.write(text)
    elif a.cmd == "regrade":
        ids = regrade(store, a.lab, a.student)
        print(f"queued again: {len(ids)} submissions (jobs {', '.join(map(str, ids)) or 'none'})")
    elif a.cmd == "queue":
        store.set_setting("hold", "1" if a.action == "hold" else "0")
        print(f"queue {'held' if a.action == 'hold' else 'released'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

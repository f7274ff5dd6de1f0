"""The grader's report: a table on the terminal, results.json (Gradescope's format, also read by
the GitHub Classroom workflow) and junit.xml. Only the grader writes them: outside the
submission, into a folder that is not a symbolic link, each file through a new temporary file
(O_EXCL | O_NOFOLLOW) renamed over the old one, after every fenced process is gone."""
import json
import os
import stat
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from .labs import LabError


def table(lab, results, who="", fence=None):
    """The terminal's table; fence: the fence that ran, on its first line."""
    out = ([fence_line(fence)] if fence else []) + [
        f"Lab {lab['chapter']} ({lab['title']}){': ' + who if who else ''}",
        f"{'task':8} {'score':>7}  what"]
    total = maximum = 0
    for task, rows in results:
        got, most = sum(r[1] for r in rows), sum(r[2] for r in rows)
        total, maximum = total + got, maximum + most
        out.append(f"{task['id']:8} {got:>3}/{most:<3}  {task['title']}")
        for check, p, m, reason in rows:
            if p < m:
                out.append(f"{'':10}-{m - p} {check}: " + reason.replace("\n", "\n" + " " * 14))
    out.append(f"{'total':8} {total:>3}/{maximum:<3}")
    return "\n".join(out), total, maximum


def wrapped(text, width=100):
    """A message of lab.py within width columns, its later lines indented."""
    import textwrap
    return textwrap.fill(text, width, subsequent_indent="    ", break_long_words=False,
                         break_on_hyphens=False)


def fence_line(detail, width=100):
    """'fence: <what the fence is>', wrapped to width columns."""
    import textwrap
    return textwrap.fill(f"fence: {detail}", width, subsequent_indent="       ",
                         break_long_words=False, break_on_hyphens=False)


def cannot_grade_line(why):
    """The one line of a grade that could not run here (exit 77): no table of zeros."""
    import textwrap
    return textwrap.fill(f"lab.py grade: NOT GRADED here, no points lost or won: {why}",
                         100, subsequent_indent="    ",
                         break_long_words=False, break_on_hyphens=False)


def safe_dir(out_dir, submission=None):
    """The report folder, made if needed; refused when it (or a folder on the way) is a symbolic
    link, or lies inside the submission."""
    out_dir = Path(os.path.abspath(out_dir))
    if submission is not None:
        sub = Path(os.path.abspath(submission))
        if out_dir == sub or sub in out_dir.parents:
            raise LabError(f"the report may not go inside the submission ({out_dir})")
    p = Path(out_dir.anchor)
    for part in out_dir.parts[1:]:
        p = p / part
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            os.mkdir(p, 0o755)
            continue
        if stat.S_ISLNK(st.st_mode) and p == out_dir:
            raise LabError(f"{p} is a symbolic link: the report is not written there")
        if not stat.S_ISDIR(os.stat(p).st_mode):
            raise LabError(f"{p} is not a folder")
    return out_dir


def write_atomic(folder, name, text):
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.")  # O_EXCL, a fresh name
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, Path(folder) / name)  # replaces a symlink itself, never its target
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_reports(lab, results, out_dir, meta, submission=None):
    out_dir = safe_dir(out_dir, submission)
    tests, cases, failures = [], [], 0
    for task, rows in results:
        for check, p, m, reason in rows:
            name = f"{task['id']} {check}: {task['title']}"
            tests.append({"name": name, "score": p, "max_score": m, "output": reason})
            fail = "" if p == m else f'<failure message={quoteattr(reason[:300])}>{escape(reason)}</failure>'
            failures += p < m
            cases.append(f'  <testcase classname="lab.{task["id"]}" name={quoteattr(check)}>{fail}'
                         f'</testcase>')
    total = sum(t["score"] for t in tests)
    maximum = sum(t["max_score"] for t in tests)
    doc = {"fence": meta.get("fence"), "fence_detail": meta.get("fence_detail"), "score": total,
           "max_score": maximum, "stdout_visibility": "visible", "lab": lab["chapter"],
           "graded_by": "scripts/lab.py", **meta, "tests": tests}
    write_atomic(out_dir, "results.json", json.dumps(doc, indent=1) + "\n")
    write_atomic(out_dir, "junit.xml",
                 '<?xml version="1.0" encoding="UTF-8"?>\n'
                 f'<testsuite name="lab.{lab["chapter"]}" tests="{len(cases)}" failures="{failures}">\n'
                 f'  <properties><property name="fence" value={quoteattr(str(meta.get("fence_detail")))}/>'
                 '</properties>\n' + "\n".join(cases) + "\n</testsuite>\n")
    return out_dir


def cannot_grade_results(lab, why):
    """Every check of every task at 0, with the reason: the report of a grade that could not run."""
    return [(t, [(c, 0, t["points"][c], f"CANNOT GRADE: {why}")
                 for c in ["tests"] + t.get("sanitize", {}).get("tools", []) +
                 (["perf"] if "perf" in t else [])]) for t in lab["tasks"]]

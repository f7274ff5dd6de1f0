"""The pages: plain HTML, every value escaped (html.escape) where it is put in, one stylesheet
and one small script (static/), no inline script or style, so the Content-Security-Policy can
say default-src 'self'. Element ids are stable: server/README.md lists them."""
import json
import time
from html import escape

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def e(x):
    return escape("" if x is None else str(x), quote=True)


def page(title, body, who=None, csrf=None):
    top = ""
    if who:
        top = (f'<form method="post" action="/logout" class="logout"><input type="hidden" name="csrf" '
               f'value="{e(csrf)}"><span>{e(who)}</span> <button>log out</button></form>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>{e(title)}</title>'
            f'<link rel="stylesheet" href="/static/style.css"><script src="/static/app.js" defer></script>'
            f'</head><body><header><a href="/">course GPU server</a>{top}</header><main>'
            f'<h1>{e(title)}</h1>{body}</main></body></html>')


def login(csrf, message=None):
    msg = f'<p class="error" id="error">{e(message)}</p>' if message else ""
    return page("Log in", msg + f'<form id="login" method="post" action="/login">'
                f'<input type="hidden" name="csrf" value="{e(csrf)}">'
                f'<label>Your token <input name="token" type="password" autocomplete="off" required></label> '
                f'<button type="submit">Log in</button></form>'
                f'<p>Your instructor gave you a token. From a terminal: <code>server/client.py</code>.</p>')


def options(names, selected=None):
    return "".join(f'<option{" selected" if n == selected else ""}>{e(n)}</option>' for n in names)


def home(student, csrf, programs, exercises, labs, jobs, traced=()):
    hidden = f'<input type="hidden" name="csrf" value="{e(csrf)}">'
    rows = "".join(
        f'<tr><td><a href="/jobs/{j["id"]}">#{j["id"]}</a></td><td>{e(j["kind"])}</td>'
        f'<td>{e(what(j))}</td><td class="state-{e(j["state"])}">{e(j["state"])}</td>'
        f'<td>{e(j["summary"] or "")}</td></tr>' for j in jobs)
    body = (
        '<section><h2>Run a program</h2>'
        f'<form id="run-form" method="post" action="/jobs">{hidden}<input type="hidden" name="kind" value="run">'
        f'<label>Program <select name="program">{options(programs)}</select></label> '
        '<label>Arguments <input name="args" placeholder="--n 2^20 --blocks 64" maxlength="512"></label>'
        '<label>Your edit of its file (optional: the whole file; only its LAB regions are taken, '
        'linted as a lab\'s)<textarea name="edit" rows="6" maxlength="65536"></textarea></label>'
        '<label><input type="checkbox" name="trace" value="1"> and draw which thread touches which '
        f'element (the traced picture of its kernel; programs: {e(", ".join(traced))})</label>'
        '<button type="submit">Run</button></form></section>'
        '<section><h2>Run an exercise</h2>'
        f'<form id="exercise-form" method="post" action="/jobs">{hidden}<input type="hidden" name="kind" value="exercise">'
        f'<label>Exercise <select name="exercise">{options(exercises)}</select></label>'
        '<label>Your edit (the whole file of the exercise\'s program, changed as the exercise asks: '
        'only the lines the exercise changes may differ, linted as a lab region is)'
        '<textarea name="edit" rows="6" maxlength="65536"></textarea></label>'
        '<button type="submit">Run</button></form></section>'
        '<section><h2>Submit a lab</h2>'
        f'<form id="grade-form" method="post" action="/jobs" enctype="multipart/form-data">{hidden}'
        f'<input type="hidden" name="kind" value="grade">'
        f'<label>Lab <select name="lab">{options([l["chapter"] for l in labs if l["open"]])}</select></label> '
        '<label>Your lab folder (a .tar.gz or .zip) <input type="file" name="upload" required></label> '
        '<button type="submit">Submit for grading</button></form></section>'
        f'<section><h2>Your jobs</h2><table id="history"><tr><th>job</th><th>kind</th><th>what</th>'
        f'<th>state</th><th>result</th></tr>{rows}</table></section>')
    return page("Your jobs", body, student, csrf)


def what(j):
    s = json.loads(j["spec"]) if isinstance(j.get("spec"), str) else (j.get("spec") or {})
    if j["kind"] == "run":
        return " ".join([s.get("program", "")] + s.get("args", [])) + (" (edited)" if s.get("edit") else "") \
            + (" (traced)" if s.get("trace") else "")
    if j["kind"] == "exercise":
        return s.get("exercise", "") + (" (edited)" if s.get("edit") else "")
    return f"lab {s.get('lab', '')}"


def progress(job):
    if job["state"] == "new":
        return "being queued"
    if job["state"] == "queued":
        return f"waiting: number {job['position']} in the queue"
    if job["state"] == "running":
        return f"running for {int(time.time() - (job['started'] or time.time()))} s (attempt {job['attempt']})"
    return f"finished in {job['finished'] - job['started']:.1f} s" if job["started"] and job["finished"] else "finished"


def job_page(job, student, csrf):
    detail = json.loads(job["detail"]) if job.get("detail") else {}
    claims = "".join(f'<li class="{"held" if c["holds"] else "false"}">{"held" if c["holds"] else "DID NOT HOLD"}: '
                     f'{e(c["says"])} (measured: <span class="value">{e(measured(c.get("value")))}</span>) '
                     f'<code>{e(c["claim"])}</code></li>' for c in detail.get("claims") or [])
    runs = "".join(f'<li><code>{e(r["run"])}</code> ({e(r["build"])}{", " + e(r["args"]) if r.get("args") else ""}): '
                   f'{e(r["outcome"])}</li>' for r in detail.get("runs") or [])
    trace = ""
    if detail.get("picture"):
        trace += (f'<h2>Which thread touches which element</h2><img id="job-picture" src="/jobs/{job["id"]}/trace.png" '
                  f'alt="the traced accesses of job {job["id"]}">')
    if detail.get("trace"):
        trace += f'<pre id="job-trace">{e(detail["trace"])}</pre>'
    exit_text = "" if job["exit"] is None else (f"exit {job['exit']}" + (" (cannot run here: not a failure of your code)"
                                                                        if job["exit"] == 77 else ""))
    body = (f'<p>Job <span id="job-id">{job["id"]}</span>, {e(job["kind"])} {e(what(job))}: '
            f'<strong id="job-status" data-job="{job["id"]}" data-state="{e(job["state"])}">{e(job["state"])}</strong> '
            f'<span id="job-exit">{e(exit_text)}</span></p>'
            f'<p id="job-progress">{e(progress(job))}</p>'
            f'<p id="job-summary">{e(job["summary"] or "")}</p>'
            f'<ul id="job-claims">{claims}</ul><ul id="job-runs">{runs}</ul>{trace}'
            f'<h2>Report</h2><pre id="job-report">{e(job.get("report") or "")}</pre>'
            f'<h2>Output</h2><pre id="job-output">{e(job.get("output") or "")}</pre>')
    return page(f"Job {job['id']}", body, student, csrf)


def measured(value):
    """A claim's measured value as the answer key reads it: None says the run gave none."""
    if value is None:
        return "no value (the run did not print it)"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def error_page(code, message):
    return page(f"{code}", f'<p class="error" id="error">{e(message)}</p><p><a href="/">back</a></p>')


STYLE = """body{font:16px/1.45 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:0 1rem}
header{display:flex;justify-content:space-between;align-items:center;border-bottom:1px solid #ccc;padding:.5rem 0}
label{display:block;margin:.4rem 0}input,select,textarea{font:inherit;max-width:100%}textarea{width:100%;font-family:monospace}
pre{background:#f4f4f4;padding:.6rem;overflow-x:auto;white-space:pre-wrap}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.25rem;text-align:left}.error{color:#a00}.false{color:#a00}.held{color:#060}
.logout{display:inline}section{margin:1.5rem 0}img{max-width:100%;height:auto}
"""

# The progress line: polls the job's JSON while it waits or runs, then reloads the page once.
SCRIPT = """document.addEventListener('DOMContentLoaded', function () {
  var s = document.getElementById('job-status');
  if (!s) return;
  var id = s.getAttribute('data-job');
  function tick() {
    fetch('/api/jobs/' + id, {credentials: 'same-origin'}).then(function (r) { return r.json(); })
      .then(function (j) {
        if (j.state === 'done' || j.state === 'failed') {
          if (s.getAttribute('data-state') !== j.state) location.reload();
          return;
        }
        s.textContent = j.state;
        s.setAttribute('data-state', j.state);
        document.getElementById('job-progress').textContent = j.progress;
        setTimeout(tick, 1000);
      }).catch(function () { setTimeout(tick, 3000); });
  }
  if (s.getAttribute('data-state') === 'queued' || s.getAttribute('data-state') === 'running') tick();
});
"""

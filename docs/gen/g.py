"""What the handouts' generated blocks print: imported by cog as `g` (scripts/docs.py runs cog).

A marked block in a Markdown file looks like

    <!-- [[[cog g.output("VA-GPU-NN", "--blocks", "auto") ]]] -->
    ...written by cog, never by hand...
    <!-- [[[end]]] -->

and everything between the two markers is rewritten from the committed results run (the tour's
results.json and logs, docs/runs/h200/ by default, with its repeats/) and from the programs
themselves (their `--help`, from the build folder). scripts/docs.py sets the two folders in the
environment (DOCS_RESULTS, DOCS_BUILD) before it runs cog. Nothing here knows a program by name:
tables are made from programs.json and results.json, and a program that the results run does
not hold is shown as "not in this results run".

The functions live in docs/gen/: core.py (shared by every handout) and one module per
handout that has functions of its own (ch03, ch04, ch05, ch06, ch07, instructors, readme) and
ladders.py (the progress tables at the top of chapters 3, 4 and 6, from ladders.json); the
blocks of chapter 2 use the core alone. This module gathers them under one name, `g`, and holds the CI times
(README.md, docs/ci.md) itself.
"""
import glob
import gzip
import json
import os
import re
import sys

import cog  # provided by cogapp while it runs a generator

from gen.core import *  # noqa: F401,F403
from gen.core import _median, _row_key, _tour, _tour_folder  # noqa: F401
from gen.ch03 import *  # noqa: F401,F403
from gen.ch04 import *  # noqa: F401,F403
from gen.ch04 import _wgmma_log  # noqa: F401
from gen.ch05 import *  # noqa: F401,F403
from gen.ch06 import *  # noqa: F401,F403
from gen.ch07 import *  # noqa: F401,F403
from gen.instructors import *  # noqa: F401,F403
from gen.labs import *  # noqa: F401,F403
from gen.ladders import *  # noqa: F401,F403
from gen.readme import *  # noqa: F401,F403


# ---- how long the commands take: docs/runs/ci/*.json (tools/ci_record.py) ------------------

def ci_records(history=False):
    """The committed records of timed runs, by mode (gpu, cpu): docs/runs/ci/*.json, the
    current ones; with history, those they replaced (docs/runs/ci/history/), as a list."""
    folder = os.path.join(ROOT, "docs", "runs", "ci", *(["history"] if history else []))
    out = {} if not history else []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                data = json.load(f)
            rel = os.path.relpath(os.path.join(folder, name), os.path.join(ROOT, "docs"))
            data = dict(data, file=f"docs/{rel}", link=rel)
            if history:
                out.append(data)
            else:
                out[data["mode"]] = data
    if history:
        out.sort(key=lambda r: r["date"])
    return out


def duration(seconds):
    """'48 s', '3 min 12 s'."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def machine_words(record):
    m = record["machine"]
    gpu = f"{m['gpu']}" if m.get("gpu") else "no GPU"
    return f"{gpu}, {m['cores']} cores"


def _step(record, name):
    return next((s for s in record["steps"] if s["name"] == name), None)


def _breakdown(step):
    """'configure 8 s, build 2 min 20 s, tests 44 s' from a step's times.json."""
    if not step or "breakdown" not in step:
        return ""
    phases = step["breakdown"].get("phases_s", {})
    text = ", ".join(f"{k} {duration(v)}" for k, v in phases.items() if k != "setup" or v >= 1)
    passes = step.get("passes_s")  # tools/ci_record.py --pass: command 2 in two calls
    if passes and len(passes) == 2:
        text += (f"; in two calls, as a runner limited to 10 min a command runs it: build and "
                 f"side-by-side pass {duration(passes['side'])}, second pass (lessons, lab self-tests) "
                 f"{duration(passes['lesson'])}")
    return text


def _labels(step):
    labels = (step or {}).get("breakdown", {}).get("label_test_seconds", {})
    return ", ".join(f"{k} {duration(v)}" for k, v in sorted(labels.items(), key=lambda kv: -kv[1]))


def _counts(step):
    c = (step or {}).get("breakdown", {}).get("counts")
    if not c:
        return ""
    return f"{c['tests']} tests: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped"


def _about(record):
    commit = record.get("commit") or "unknown"
    commit = commit if commit == "unknown" else commit[:10] + (" (local changes)" if record.get("dirty") else "")
    return (f"{machine_words(record)}, {record['date'][:10]}, commit {commit}"
            f"{', from a fresh clone' if record.get('fresh_clone') else ''}")


def _tier_words(step, record=None):
    """'from a fresh clone' or 'after command 2, in its build folder': where a step started;
    and the commit, where the step ran at another commit than its record's."""
    where = ("after command 2, in its build folder" if step.get("build_folder_found")
             else "from a fresh clone, build included")
    if record and step.get("commit") and step["commit"] != record.get("commit"):
        where += f", at commit {step['commit'][:10]}"
    return where


def _later_gpu_log(record):
    """A README line for the newest command 2 on an H200 kept only as a log (docs/runs/h200/side/
    command2-COMMIT.json names it, its commit and date), where it is newer than the record: its
    times and counts, as the log says them. None where there is none."""
    logs = []
    for path in glob.glob(os.path.join(ROOT, "docs", "runs", "h200", "side", "command2-*.json")):
        with open(path) as f:
            about = json.load(f)
        if about["date"] > record["date"]:  # (ISO times in UTC: a log of the record's day after it too)
            logs.append((about["date"], about, os.path.join(os.path.dirname(path), about["log"])))
    if not logs:
        return None
    when, about, path = max(logs, key=lambda l: l[0])  # a date, or a date and time (one day's logs)
    day = when[:10]
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:  # (a log may be gzipped)
        text = f.read()
    times = re.search(r"^Times: setup (\d+) s, configure (\d+) s, build (\d+) s, tests (\d+) s", text, re.M)
    summary = re.search(r"^Summary: (\d+) tests, (\d+) passed, (\d+) failed, (\d+) skipped", text, re.M)
    if not times or not summary:
        return None
    setup, configure, build, tests = (int(x) for x in times.groups())
    rel = os.path.relpath(path, ROOT)
    return (f"- NVIDIA H200, {day}, commit {about['commit'][:10]}, newer than the record above, kept only "
            f"as a log (not a fresh-clone record: [{os.path.basename(path)}]({rel})): command 2 "
            f"**{duration(setup + configure + build + tests)}** (build {duration(build)}, tests "
            f"{duration(tests)}), {summary.group(1)} tests, {summary.group(3)} failed.")


def ci_times_summary():
    """README's Quick start: one line per machine, how long each command took there (the
    records of docs/runs/ci/; docs/ci.md has each step, the breakdowns and the history)."""
    records = ci_records()
    gpu, cpu = records.get("gpu"), records.get("cpu")
    if gpu:
        m = gpu["machine"]
        c2, planted = _step(gpu, "command 2"), _step(gpu, "planted bugs")
        parts = []
        if c2:
            failed = (f" (**exit {c2['exit']}**: [why](docs/ci.md#how-long-each-step-takes))"
                      if c2["exit"] else "")
            parts.append(f"command 2 **{duration(c2['seconds'])}**{failed} from a fresh clone, build included")
        if planted:
            failed = (f" (**exit {planted['exit']}**: [why](docs/ci.md#how-long-each-step-takes))"
                      if planted["exit"] else "")
            parts.append(f"the planted bugs **{duration(planted['seconds'])}**{failed} "
                         f"{_tier_words(planted, gpu)}")
        cog.outl(f"- {m['gpu']} ({m['cores']} cores), {gpu['date'][:10]}: " + "; ".join(parts) + ".")
        later = _later_gpu_log(gpu)
        if later:
            cog.outl(later)
    newcomer = records.get("newcomer")
    if newcomer:
        # The two commands as README writes them (tools/ci_record.py newcomer), and how.
        m = newcomer["machine"]
        c1, c2 = _step(newcomer, "command 1"), _step(newcomer, "command 2")
        loads = [s.get("load_start") for s in (c1, c2) if s and s.get("load_start")]
        load = (f"; load average {max(l[0] for l in loads):.1f} or less at each command's start"
                if loads else "")
        name = os.path.basename(newcomer["file"])
        cog.outl(f"- {m['gpu'] or 'No GPU'}, {m['cores']} cores, {newcomer['date'][:10]}: command 1 "
                 f"**{duration(c1 and c1['seconds'])}**, then command 2 "
                 f"**{duration(c2 and c2['seconds'])}**, as written above, one after the other "
                 f"from a fresh clone (`tools/ci_record.py newcomer`{load}: "
                 f"[{name}](docs/runs/ci/{name})).")
    if cpu:
        m = cpu["machine"]
        run = _step(cpu, ".ci/run")
        inner = run.get("ci_steps", {})
        c2 = next((v for k, v in inner.items() if k.startswith("command 2")), None)
        cog.outl(f"- No GPU, {m['cores']} cores, {cpu['date'][:10]}, as CI runs them (`.ci/run`: "
                 f"the tour with --quick, the preset ci, for sm_90 alone): command 2 "
                 f"**{duration(c2)}** after command 1; all of `.ci/run` "
                 f"{duration(run['seconds'])} from a fresh clone."
                 + ("" if newcomer else " The two commands as written above, without a GPU, are "
                    "not recorded yet (`tools/ci_record.py newcomer`)."))
    if not records:
        cog.outl("- (no timed run recorded yet: tools/ci_record.py)")


def _table_rows(record):
    rows = []
    for step in record["steps"]:
        detail = _breakdown(step)
        if step.get("ci_steps"):
            detail = ", ".join(f"{k} {duration(v)}" for k, v in step["ci_steps"].items())
        labels = _labels(step)
        counts = _counts(step)
        extra = "; ".join(x for x in (counts, f"summed test time by label: {labels}" if labels else "") if x)
        where = _tier_words(step, record) if step["name"] in ("command 2", "planted bugs") else ""
        rows.append(f"| `{step['command']}` | {machine_words(record)} | {duration(step['seconds'])}"
                    f"{'' if step['exit'] == 0 else ' (exit ' + str(step['exit']) + ')'} | "
                    f"{where + '; ' if where else ''}{detail}{'; ' + extra if extra else ''} | "
                    f"[{os.path.basename(record['file'])}]({record['link']}) |")
    return rows


def ci_times_table():
    """docs/ci.md's table: every step of the current records, its machine, time and breakdown."""
    cog.outl("| command | machine | took | breakdown | record |")
    cog.outl("| --- | --- | --- | --- | --- |")
    for mode, record in sorted(ci_records().items()):
        for row in _table_rows(record):
            cog.outl(row)
    for mode, record in sorted(ci_records().items()):
        note = f" {record['note']}" if record.get("note") else ""
        cog.outl(f"\n`{os.path.basename(record['file'])}`: {_about(record)}.{note}")


def ci_times_history():
    """docs/ci.md's history: the records the current ones replaced, oldest first, as they were
    (before the planted bugs had a tier of their own, command 2 ran them too)."""
    history = ci_records(history=True)
    if not history:
        cog.outl("(none yet)")
        return
    cog.outl("| command | machine | took | breakdown | record |")
    cog.outl("| --- | --- | --- | --- | --- |")
    for record in history:
        for row in _table_rows(record):
            cog.outl(row)
    for record in history:
        note = f" {record['note']}" if record.get("note") else ""
        cog.outl(f"\n`{os.path.basename(record['file'])}`: {_about(record)}.{note}")


# ---- where a GPU runner's time goes: docs/runs/h200/side/ (cuda-start-h100.log, side-pass-h100.tsv) --

def _side(name):
    return os.path.join(ROOT, "docs", "runs", "h200", "side", name)


def _context_times(path):
    """From cuda-start-h100.log: the warm context times one process at a time, and each
    'N CUDA processes, P at a time' block's wall time: (alone, [(N, P, wall)])."""
    alone, batches, pending = [], [], None
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f if not line.startswith("#")]
    for line in lines:
        hit = re.match(r"^[\d.]+ s: context ([\d.]+) s", line)
        if hit:
            alone.append(float(hit.group(1)))
        hit = re.match(r"^== (\d+) CUDA processes, (\d+) at a time", line)
        if hit:
            pending = (int(hit.group(1)), int(hit.group(2)))
        elif pending and re.match(r"^[\d.]+ s$", line):
            batches.append(pending + (float(line.split()[0]),))
            pending = None
    return alone[1:], batches  # the first process of a fresh machine also wakes the driver


def _side_pass(path):
    """From side-pass-h100.tsv: (wall seconds from its header, [(seconds, labels, name, status)])."""
    wall, rows = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                hit = re.search(r"tests (\d+) s of wall", line)
                wall = int(hit.group(1)) if hit else wall
                continue
            seconds, status, labels, name = line.rstrip("\n").split("\t")
            rows.append((float(seconds), labels.split(";"), name, status))
    return wall, rows


def _side_pass_check_runs():
    """How many check runs (one process each) the side-by-side pass's planted bugs and their
    controls start: every check of the planted bugs that do not run in the second pass, and
    each distinct one of them once more for the control."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "mutants"))
    import mutant  # the planted bugs' own reader: which checks each one runs
    caught, control = 0, {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "mutants", "*", "*.mutant"))):
        m = mutant.parse(path)
        if "lesson" in m["expect"] or m["alone"]:
            continue
        runs = mutant.configs(m)
        caught += len(runs)
        for c in runs:
            control.setdefault((m["program"], mutant.key(c)), c)
    return caught + len(control)


def gpu_runner_time():
    """docs/ci.md: why the GPU runner's tests take minutes, from the H100 measurements."""
    alone, batches = _context_times(_side("cuda-start-h100.log"))
    wall, rows = _side_pass(_side("side-pass-h100.tsv"))
    one = _median(alone)
    summed = sum(r[0] for r in rows)
    mutant = sum(r[0] for r in rows if "mutant" in r[1])
    gpu_tests = sum(1 for r in rows if "gpu" in r[1] and "mutant" not in r[1])
    check_runs = _side_pass_check_runs()
    processes = gpu_tests + check_runs
    side_by_side = "; ".join(f"{n} processes {p} at a time took {w:.2f} s, {w / n:.2f} s a process"
                             for n, p, w in batches)
    cog.outl(f"- **A process opens the GPU one at a time.** A process's first CUDA call creates its "
             f"context: {one:.2f} s alone (the median of {len(alone)} one after another). Side by side "
             f"it is no faster: {side_by_side}. The driver creates contexts one after another, so more "
             f"ctest jobs do not shorten this part.")
    cog.outl(f"- **The side-by-side pass** ran {len(rows)} tests in {wall} s (the window test failed "
             f"there, with ray's planted bugs behind it: the folder's README says why), their own "
             f"times adding up to "
             f"{summed:.0f} s ({summed / wall:.1f} at once on average, with `-j 16`). Its GPU tests start "
             f"about {processes} such processes: one for each of its {gpu_tests} GPU tests, and "
             f"{check_runs} check runs of the planted bugs and their controls (counted from the "
             f"planted bugs' files as they are now; that pass ran them, their own tier runs them now). "
             f"At {one:.2f} s each that is about "
             f"{processes * one:.0f} s of context creation, which no parallelism shortens.")
    cog.outl(f"- **The planted bugs** took {mutant:.0f} s of the {summed:.0f} s "
             f"({100 * mutant / summed:.0f}%).")
    cog.outl("- So a shorter GPU run needs fewer processes (a GoogleTest binary run in one process "
             "rather than one per case, fewer check runs per planted bug) or fewer planted bugs in "
             "command 2, not more jobs. Since b266dea a GPU program's GoogleTest binary is one "
             f"process (docs/install.md); command 2 on an H200 went from {_command2_seconds('9e55a72')} s "
             f"at 9e55a72 to {_command2_seconds('be5da94')} s at be5da94, and to "
             f"{_command2_seconds('7b7b631')} s at 7b7b631 with shorter speed gates for slow code "
             "(docs/runs/h200/side/README.md).")


def _command2_seconds(commit):
    """Command 2's seconds (setup, configure, build and tests) in side/command2-COMMIT.log.gz."""
    with gzip.open(_side(f"command2-{commit}.log.gz"), "rt") as f:
        times = re.search(r"^Times: setup (\d+) s, configure (\d+) s, build (\d+) s, tests (\d+) s",
                          f.read(), re.M)
    return sum(int(x) for x in times.groups())

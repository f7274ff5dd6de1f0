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

The functions live in scripts/docsgen/: core.py (shared by every handout) and one module per
handout that has functions of its own (ch04, ch05, ch06, ch07, instructors, readme); the
blocks of chapters 2 and 3 use the core alone. This module gathers them under one name, `g`, and holds the CI times
(README.md, docs/ci.md) itself.
"""
import json
import os

import cog  # provided by cogapp while it runs a generator

from docsgen.core import *  # noqa: F401,F403
from docsgen.core import _median, _row_key, _tour, _tour_folder  # noqa: F401
from docsgen.ch04 import *  # noqa: F401,F403
from docsgen.ch04 import _wgmma_log  # noqa: F401
from docsgen.ch05 import *  # noqa: F401,F403
from docsgen.ch06 import *  # noqa: F401,F403
from docsgen.ch07 import *  # noqa: F401,F403
from docsgen.instructors import *  # noqa: F401,F403
from docsgen.readme import *  # noqa: F401,F403


# ---- how long the commands take: docs/runs/ci/*.json (scripts/ci_record.py) ------------------

def ci_records():
    """The committed records of timed runs, by mode: gpu, cpu, cpu-no-mutants."""
    folder = os.path.join(ROOT, "docs", "runs", "ci")
    out = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                data = json.load(f)
            out[data["mode"]] = dict(data, file=f"docs/runs/ci/{name}")
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
    passes = step.get("passes_s")  # scripts/ci_record.py --pass: command 2 in two calls
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


def ci_times_summary():
    """README's paragraph: how long command 2 took on each machine, from the records."""
    records = ci_records()
    gpu, cpu, quick = records.get("gpu"), records.get("cpu"), records.get("cpu-no-mutants")
    if gpu:
        step = _step(gpu, "command 2")
        failed = f", **exit {step['exit']}**" if step["exit"] else ""
        cog.outl(f"- GPU runner ({_about(gpu)}): command 2 took **{duration(step['seconds'])}**{failed} "
                 f"({_breakdown(step)}; {_counts(step)})." + (f" {gpu['note']}" if step["exit"] else ""))
    if cpu:
        run = _step(cpu, ".ci/run")
        inner = run.get("ci_steps", {})
        c2 = next((v for k, v in inner.items() if k.startswith("command 2")), None)
        cog.outl(f"- Without a GPU ({_about(cpu)}): command 2 took **{duration(c2)}** "
                 f"({_breakdown(run)}); its build compiles the planted bugs, which only a GPU can run "
                 f"(`CUDA_EXAMPLES_MUTANTS=off` leaves them out); all of `.ci/run` took {duration(run['seconds'])}. {cpu.get('note', '')}")
    if quick:
        step = _step(quick, "command 2, no planted bugs")
        cog.outl(f"- Command 2 without the planted bugs (`CUDA_EXAMPLES_MUTANTS=off scripts/test.sh`; "
                 f"{_about(quick)}): **{duration(step['seconds'])}** ({_breakdown(step)}). {quick.get('note', '')}")
    if not records:
        cog.outl("- (no timed run recorded yet: scripts/ci_record.py)")


def ci_times_table():
    """docs/ci.md's table: every recorded step, its machine, its time and its breakdown."""
    rows = []
    for mode, record in sorted(ci_records().items()):
        for step in record["steps"]:
            detail = _breakdown(step)
            if step.get("ci_steps"):
                detail = ", ".join(f"{k} {duration(v)}" for k, v in step["ci_steps"].items())
            labels = _labels(step)
            counts = _counts(step)
            extra = "; ".join(x for x in (counts, f"summed test time by label: {labels}" if labels else "") if x)
            if step.get("commit"):
                detail = (detail + "; " if detail else "") + f"commit {step['commit'][:10]}: {step.get('note', '')}"
            rows.append(f"| `{step['command']}` | {machine_words(record)} | {duration(step['seconds'])}"
                        f"{'' if step['exit'] == 0 else ' (exit ' + str(step['exit']) + ')'} | "
                        f"{detail}{'; ' + extra if extra else ''} | [{os.path.basename(record['file'])}]"
                        f"(runs/ci/{os.path.basename(record['file'])}) |")
    cog.outl("| command | machine | took | breakdown | record |")
    cog.outl("| --- | --- | --- | --- | --- |")
    for r in rows:
        cog.outl(r)
    for mode, record in sorted(ci_records().items()):
        note = f" {record['note']}" if record.get("note") else ""
        cog.outl(f"\n`{os.path.basename(record['file'])}`: {_about(record)}.{note}")


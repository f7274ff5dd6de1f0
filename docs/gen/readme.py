"""README.md's blocks: an excerpt of the tour and the table of chapters."""
import os

import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403


def _tour_module():
    """scripts/tour.py itself: the excerpt prints its table with the tour's own columns."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("tour", os.path.join(ROOT, "scripts", "tour.py"))
    tour = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tour)
    return tour


def tour_excerpt(every=6):
    """An excerpt of the tour's printed progress and summary table, from the results run: the
    progress lines as the tour prints them, and a few rows of its table (every column it shows
    on screen; summary.md and results.csv have the rest)."""
    tour = _tour_module()
    data = results()
    runs = data["runs"]
    lines = []
    for i, e in enumerate(runs, 1):
        if i % every == 4 or i == len(runs):
            name = f"ch{e['chapter']:02d} {e['program']} {' '.join(shown_args(e))}".strip()
            shown = e["status"] if e["status"] != "skipped" else "skipped: " + e.get("detail", "")
            lines += tour.progress_line(i, len(runs), name, e["seconds"], shown).split("\n")
    lines.append("...")
    last = {}
    for r in data.get("summary", []):
        last[r["chapter"]] = r
    table = tour.table([last[ch] for ch in sorted(last)], tour.SCREEN_COLUMNS).split("\n")
    lines += table
    code(lines)


def skip_summary_example():
    """The end of command 2 on a machine without a GPU, as scripts/test.sh printed it in a
    committed record's run (docs/runs/ci/, tools/ci_record.py keeps it): a newcomer's run of the
    two commands as README writes them where there is one (tools/ci_record.py newcomer), else
    CI's, said to be CI's."""
    import gen.g as g  # noqa: F811  (the records live with the CI times)
    records = g.ci_records()
    record = records.get("newcomer") or records.get("cpu")
    step = record and next((s for s in record["steps"] if s.get("summary")), None)
    if not step:
        cog.outl("(no recorded run without a GPU: tools/ci_record.py newcomer)")
        return
    code([line for line in step["summary"] if line.strip()])
    name = os.path.basename(record["file"])
    ci = ("; CI installs the plotting tools, so docs.plots and docs.check ran there, where a "
          "newcomer's command 2 skips them and says how to get them"
          if record["mode"] == "cpu" else "")
    cog.outl(f"\n(from `{step['command']}`, {g._about(record)}{ci}: [{name}](docs/runs/ci/{name}))")


def chapters_table():
    """The README's table of chapters, from programs.json (programs, key ideas, handout)."""
    m = manifest()
    cog.outl("| chapter | programs | what it teaches | handout |")
    cog.outl("| --- | --- | --- | --- |")
    for c in m["chapters"]:
        names = ", ".join(p["name"] for p in m["programs"] if p["chapter"] == c["chapter"])
        cog.outl(f"| {c['chapter']} {c['title']} | {names} | {c['ideas']} | "
                 f"[{c['handout']}]({c['handout']}) |")

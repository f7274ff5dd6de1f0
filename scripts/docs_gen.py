"""What the handouts' generated blocks print: imported by cog as `g` (scripts/docs.py runs cog).

A marked block in a Markdown file looks like

    <!-- [[[cog g.output("VA-GPU-NN", "--blocks", "auto") ]]] -->
    ...written by cog, never by hand...
    <!-- [[[end]]] -->

and everything between the two markers is rewritten from the committed results run (the tour's
results.json and logs, docs/runs/h200/ by default) and from the programs themselves (their
`--help`, from the build folder). scripts/docs.py sets the two folders in the environment
(DOCS_RESULTS, DOCS_BUILD) before it runs cog. Nothing here knows a program by name: tables are
made from programs.json and results.json, and a program that the results run does not hold is
shown as "not in this results run".
"""
import functools
import json
import os
import re
import subprocess

import cog  # provided by cogapp while it runs a generator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_RUN = "not in this results run"


def results_dir():
    return os.environ.get("DOCS_RESULTS", os.path.join(ROOT, "docs", "runs", "h200"))


def build_dir():
    return os.environ.get("DOCS_BUILD", os.path.join(ROOT, "build"))


@functools.lru_cache(maxsize=None)
def results():
    with open(os.path.join(results_dir(), "results.json")) as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def manifest():
    with open(os.path.join(ROOT, "programs.json")) as f:
        return json.load(f)


def folder_of(program):
    chapters = {c["chapter"]: c["folder"] for c in manifest()["chapters"]}
    for p in manifest()["programs"]:
        if p["name"] == program:
            return chapters[p["chapter"]]
    raise SystemExit(f"docs: {program} is not in programs.json")


def fmt(value, spec):
    return "" if value is None else format(value, spec)


def code(lines):
    """A fenced Markdown code block (cog takes the common indentation off a block's output)."""
    cog.outl("```text")
    for line in lines:
        cog.outl(line.rstrip())
    cog.outl("```")


# ---- --help, from the built program ---------------------------------------------------------
def help(program):
    """The program's own --help, run from the build folder (no GPU needed)."""
    binary = os.path.join(build_dir(), folder_of(program), program)
    if not os.path.exists(binary):
        raise SystemExit(f"docs: {binary} is not built (build the programs, or give --build DIR)")
    run = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=60)
    if run.returncode != 0:
        raise SystemExit(f"docs: {binary} --help exited {run.returncode}")
    code([f"$ {program} --help"] + run.stdout.rstrip("\n").splitlines())


# ---- a program's output, from the results run's logs ---------------------------------------
def find_run(program, args=None):
    """The results run's entry for program (with exactly these args when given), or None."""
    for entry in results()["runs"]:
        if entry["program"] != program:
            continue
        shown = [a for a in entry["args"] if not a.startswith("--output")]
        if args is None or list(args) == shown or list(args) == entry["args"]:
            return entry
    return None


def shown_args(entry):
    """The run's arguments as a student types them (the results folder dropped from paths)."""
    return [os.path.basename(a) if os.sep in a else a for a in entry["args"]]


def output(program, *args):
    """What the program printed in the results run (its human lines; --json records left out)."""
    entry = find_run(program, list(args) if args else None)
    if entry is None:
        code([f"$ build/{folder_of(program)}/{program} {' '.join(args)}".rstrip(), f"({NOT_RUN})"])
        return
    with open(os.path.join(results_dir(), entry["log"])) as f:
        text = f.read()
    stdout = text.split("\n--- stderr ---\n")[0].splitlines()[1:]
    lines = [line for line in stdout if not line.startswith('{"schema"')]
    while lines and not lines[-1].strip():
        lines.pop()
    command = f"$ build/{folder_of(program)}/{program} {' '.join(shown_args(entry))}".rstrip()
    code([command] + lines)


# ---- tables from results.json --------------------------------------------------------------
COLUMNS = [
    ("program", lambda r: r["program"] + (f" [{r['variant']}]" if r.get("variant") else "")),
    ("arguments", lambda r: "`" + " ".join(r["args"]) + "`" if r.get("args") else "defaults"),
    ("teaches", lambda r: r["teaches"]),
    ("kernel ms", lambda r: fmt(r.get("kernel_ms"), ".4g")),
    ("end-to-end ms", lambda r: fmt(r.get("end_to_end_ms"), ".4g")),
    ("rate", lambda r: (fmt(r.get("rate"), ".5g") + " " + r.get("unit", "")).strip()),
    ("% peak", lambda r: fmt(r.get("pct_theoretical_peak"), ".1f") +
     (f" ({r['peak']})" if r.get("peak") not in (None, "dram", "fp32") and
      r.get("pct_theoretical_peak") is not None else "")),
    ("% ceiling", lambda r: fmt(r.get("pct_measured_ceiling"), ".1f") +
     (f" ({r['ceiling']})" if r.get("pct_measured_ceiling") is not None else "")),
    ("check", lambda r: r.get("check", "")),
    ("x CPU", lambda r: fmt(r.get("speedup_vs_cpu"), ".4g")),
]


def markdown_table(rows, columns):
    cog.outl("| " + " | ".join(h for h, _ in columns) + " |")
    cog.outl("|" + " --- |" * len(columns))
    for r in rows:
        cog.outl("| " + " | ".join(f(r).replace("|", "/") for _, f in columns) + " |")


def rows_of_chapter(chapter):
    """The summary rows of one chapter, in programs.json's order, each with its run's args; a
    run of programs.json that the results run lacks gets one row saying so."""
    data = results()
    summary = data.get("summary", [])
    rows = []
    for p in manifest()["programs"]:
        if chapter is not None and p["chapter"] != chapter:
            continue
        entries = [e for e in data["runs"] if e["program"] == p["name"]]
        if not entries:
            rows.append({"chapter": p["chapter"], "program": p["name"], "teaches": p["teaches"],
                         "args": [], "check": NOT_RUN})
            continue
        mine = [r for r in summary if r["program"] == p["name"]]
        # The tour writes one summary row per record, run after run, in the runs' order: share
        # them out to the runs by teaches (which the tour copies from the run).
        for e in entries:
            own = [r for r in mine if r["teaches"] == e["teaches"] and not r.get("_taken")]
            for r in own:
                r["_taken"] = True
                rows.append(dict(r, args=shown_args(e) if e["args"] else []))
            if not own:
                rows.append({"chapter": p["chapter"], "program": p["name"],
                             "teaches": e["teaches"], "args": shown_args(e),
                             "check": e["status"]})
    for r in summary:
        r.pop("_taken", None)
    return rows


def table(chapter=None):
    """The results run's table of one chapter (or all), one row per measurement."""
    columns = COLUMNS if chapter is not None else [("ch", lambda r: str(r["chapter"]))] + COLUMNS
    markdown_table(rows_of_chapter(chapter), columns)


def about_run():
    """One sentence: which device, driver, CUDA and date the results run is from."""
    data = results()
    record, device = data.get("record", {}), data.get("device") or {}
    env = data.get("environment", {})
    sms = device.get("sm_count")
    cc = device.get("cc")
    extra = ", ".join(x for x in [f"{sms} SMs" if sms else "",
                                  f"compute capability {cc}" if cc else ""] if x)
    cog.outl(f"Results run: {record.get('gpu') or 'no GPU'}" + (f" ({extra})" if extra else "") +
             f", driver {record.get('driver')}, CUDA {record.get('cuda_toolkit')}, "
             f"{(record.get('date') or '')[:10]}, commit {(record.get('git_commit') or '?')[:10]}"
             f"{' (with local changes)' if record.get('git_dirty') else ''}; "
             f"{len(data['runs'])} runs of the tour in {data.get('run_seconds', 0):.1f} s.")


def ceilings():
    """The measured ceilings of the results run, one sentence."""
    c = results().get("ceilings") or {}
    if not c.get("dram"):
        cog.outl(f"Measured ceilings: {NOT_RUN}.")
        return
    cog.outl(f"Measured ceilings: device-to-device copy {c['dram']:.0f} GB/s (read + write), "
             f"cuBLAS SGEMM strict FP32 {c.get('fp32', 0):.0f} GFLOP/s, pinned host to device "
             f"{c.get('h2d', 0):.1f} GB/s, device to host {c.get('d2h', 0):.1f} GB/s.")


def documents_table(chapter=None):
    """The documents' published figures beside ours (the tour's "documents" rows), all or those
    of one chapter's programs."""
    rows = results().get("documents") or []
    if chapter is not None:
        with open(os.path.join(ROOT, "docs", "published_figures.json")) as f:
            figures = {g["label"]: g["program"] for g in json.load(f)["figures"]}
        mine = {p["name"] for p in manifest()["programs"] if p["chapter"] == chapter}
        rows = [r for r in rows if figures.get(r["what"]) in mine]
    markdown_table(rows, [
        ("the documents (Tesla C2075)", lambda r: r["what"]),
        ("their ms", lambda r: fmt(r["document_ms"], ".6g")),
        ("ours ms (end to end)", lambda r: fmt(r["ours_ms"], ".4g") or NOT_RUN),
        ("ours measures", lambda r: r["measure"]),
        ("our kernel-only ms", lambda r: fmt(r["kernel_ms"], ".4g")),
        ("their x CPU", lambda r: fmt(r["their_speedup"], "g")),
        ("our x CPU (end to end)", lambda r: fmt(r["our_speedup"], ".4g")),
    ])


def record(program, variant=None, args=None, **size):
    """The first record of program (variant, run args, size) in the results run, or None."""
    for entry in results()["runs"]:
        if entry["program"] != program:
            continue
        if args is not None and shown_args(entry) != list(args):
            continue
        for r in entry["records"]:
            if variant and r.get("variant") != variant:
                continue
            if all((r.get("size") or {}).get(k) == v for k, v in size.items()):
                return r
    return None


def measured(program, what, variant=None, args=None, spec=".4g", unit="", **size):
    """One measured value as text (e.g. the median of a record): 'what' is a record field,
    with dots for nested ones (time_ms.median)."""
    r = record(program, variant, args, **size)
    value = r
    for key in what.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return NOT_RUN if value is None else format(value, spec) + unit


def ratio_line(text, a, b, spec=".2g"):
    """Writes text with {ratio} replaced by a / b, or says the run lacks one of them."""
    if a is None or b is None or b == 0:
        cog.outl(text.replace("{ratio}", f"({NOT_RUN})"))
    else:
        cog.outl(text.replace("{ratio}", format(a / b, spec)))


def image(name, alt):
    """A plot of the results run, drawn by scripts/plot_results.py into the results folder."""
    rel = os.path.relpath(os.path.join(results_dir(), name), os.path.join(ROOT, "docs"))
    if os.path.exists(os.path.join(results_dir(), name)):
        cog.outl(f"![{alt}]({rel})")
    else:
        cog.outl(f"({name}: {NOT_RUN})")


def number_words(text):
    """Numbers in a line, for the prose check's own tests."""
    return re.findall(r"\d+(?:\.\d+)?", text)


# ---- one measured value, for a sentence of prose written by a block -------------------------
def value(program, field="time_ms.median", *args, variant=None):
    """A field of the first matching record (program, its run's args, its variant), or None:
    e.g. value("VA-GPU-NN", "gbps", "--blocks", "auto")."""
    entry = find_run(program, list(args) if args else None)
    if entry is None:
        return None
    for r in entry["records"]:
        if variant and r.get("variant") != variant:
            continue
        v = r
        for key in field.split("."):
            v = v.get(key) if isinstance(v, dict) else None
        if v is not None:
            return v
    return None


def ms(program, *args, variant=None):
    """The kernel-only median (ms) of a run, or None."""
    return value(program, "time_ms.median", *args, variant=variant)


def line(template, **values):
    """Writes template.format(**values): one sentence whose measured numbers come from the run;
    when a value is missing, the sentence says the results run lacks it."""
    if any(v is None for v in values.values()):
        bullet = "- " if template.startswith("- ") else ""
        text = re.sub(r"\{[^}]*\}", "…", template[len(bullet):])
        cog.outl(f"{bullet}({NOT_RUN}: {text})")
    else:
        cog.outl(template.format(**values))


def ratio(a, b):
    """a / b, or None when either is missing."""
    return None if a is None or not b else a / b


def percent(a, b):
    return None if a is None or not b else 100.0 * a / b


def helps(chapter):
    """Every program of a chapter (programs.json), its --help folded under its name."""
    for p in manifest()["programs"]:
        if p["chapter"] == chapter:
            cog.outl(f"<details><summary><code>{p['name']} --help</code></summary>")
            cog.outl("")
            help(p["name"])
            cog.outl("")
            cog.outl("</details>")


# ---- a side measurement the refresh command makes besides the tour -------------------------
def side_file(name):
    path = os.path.join(results_dir(), name)
    return path if os.path.exists(path) else None


def include(name, how):
    """A side measurement's printed Markdown (e.g. ch05_raytrace/compare.py's table), written
    into the results folder by scripts/refresh_docs.sh; its '# title' line becomes a sentence."""
    path = side_file(name)
    if path is None:
        cog.outl(f"({name}: {NOT_RUN}; `scripts/refresh_docs.sh` makes it with {how}.)")
        return
    with open(path) as f:
        for row in f.read().rstrip("\n").splitlines():
            cog.outl(f"*{row[2:]}*" if row.startswith("# ") else row)


def compare_row(name, spheres, reads):
    """The cells (as text) of one row of compare.py's table, or None."""
    path = side_file(name)
    if path is None:
        return None
    with open(path) as f:
        for row in f:
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if len(cells) >= 7 and cells[0] == str(spheres) and cells[1] == reads:
                return cells
    return None


def compare_value(name, spheres, reads, column):
    """One number of compare.py's table: column 2 kernel global, 3 kernel constant, 4 the
    constant/global ratio, 5 and 6 end to end; the median, before its (min-max)."""
    cells = compare_row(name, spheres, reads)
    return None if cells is None else float(cells[column].split()[0].strip("*"))


def tour_excerpt(every=6):
    """An excerpt of the tour's printed progress and summary, from the results run."""
    data = results()
    runs = data["runs"]
    lines = []
    for i, e in enumerate(runs, 1):
        if i % every == 4 or i == len(runs):
            name = f"ch{e['chapter']:02d} {e['program']} {' '.join(shown_args(e))}".strip()
            lines.append(f"[{i:2d}/{len(runs)}] {name:<52} {e['seconds']:6.1f} s  {e['status']}")
    lines.append("...")
    c = data.get("ceilings") or {}
    if c.get("dram"):
        lines.append(f"measured ceilings: device-to-device copy {c['dram']:.0f} GB/s, cuBLAS FP32 "
                     f"{c.get('fp32', 0):.0f} GFLOP/s, pinned host->device {c.get('h2d', 0):.1f} "
                     f"GB/s, device->host {c.get('d2h', 0):.1f} GB/s")
    last = {}
    for r in data.get("summary", []):
        last[r["chapter"]] = r
    for ch in sorted(last):
        r = last[ch]
        name = r["program"] + (f" [{r['variant']}]" if r.get("variant") else "")
        lines.append(f"{ch:<3} {name:<30} kernel {fmt(r.get('kernel_ms'), '.4g'):>8} ms  "
                     f"{(fmt(r.get('rate'), '.5g') + ' ' + r.get('unit', '')).strip():>16}  "
                     f"{r.get('check', '')}")
    code(lines)


def counts():
    """How many programs programs.json lists, and how many runs the tour makes of them."""
    m = manifest()["programs"]
    cog.outl(f"{len(m)} programs, {sum(len(p['runs']) for p in m)} runs")

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
def repeats():
    """The tours of the same commit kept beside the results run (repeats/NAME/results.json,
    `docs.py repeat`), in name order."""
    folder = os.path.join(results_dir(), "repeats")
    out = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name, "results.json")
        if os.path.exists(path):
            with open(path) as f:
                out.append(json.load(f))
    return out


def all_runs():
    """The results run and its repeats: every tour of the committed programs."""
    return [results()] + repeats()


# ---- figures timed on the host: the median and range over the runs --------------------------
# A time taken with the host's clock (end to end, the CPU baseline, a copy from pageable memory,
# the tour's length) moves by tens of percent from one run to the next on the same GPU: it
# depends on the host's CPU, its memory and what else runs there. Such a figure is never given
# from one run: it is the median over the runs, with their range.
HOST_FIELDS = ("end_to_end_ms", "cpu_ms", "speedup_vs_cpu")
SPREAD = 0.05        # a kernel-only figure that moves more than this across the runs gets its range


def _median(values):
    v = sorted(values)
    n = len(v)
    return None if not n else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def spread(values):
    """(median, min, max, n) of the values that are there, or None when none is."""
    v = [x for x in values if x is not None]
    return (_median(v), min(v), max(v), len(v)) if v else None


def spread_text(values, spec=".4g", unit=""):
    """'1840 [1819–1862]': the median and [range] over the runs; one run: its value alone."""
    s = spread(values)
    if s is None:
        return ""
    med, lo, hi, n = s
    if n == 1 or format(lo, spec) == format(hi, spec):
        return format(med, spec) + unit
    return f"{format(med, spec)}{unit} [{format(lo, spec)}–{format(hi, spec)}]"


def runs_words():
    """'2 runs' / '3 runs': how many tours the host-timed figures are taken over, and, with
    fewer than 3, that they vary with the host."""
    n = len(all_runs())
    return f"{n} run{'s' if n > 1 else ''} of the tour" + ("" if n >= 3 else
                                                           ", and they vary with the host")


def _row_key(r):
    return (r["program"], r.get("variant"), r["teaches"])


def row_values(row, name, data_runs=None):
    """The field name of the summary row matching row (program, variant, teaches, and its
    place among rows with that key) in each run."""
    out = []
    for data in data_runs or all_runs():
        summary = data.get("summary", [])
        same = [r for r in results().get("summary", []) if _row_key(r) == _row_key(row)]
        index = next((i for i, r in enumerate(same)
                      if all(row.get(k) == v for k, v in r.items() if k != "_taken")), 0)
        theirs = [r for r in summary if _row_key(r) == _row_key(row)]
        out.append(theirs[index].get(name) if index < len(theirs) else None)
    return out


def host_cell(row, name, spec=".4g"):
    return spread_text(row_values(row, name), spec)


def rate_cell(row):
    """The rate, with its range when it moves more than SPREAD across the runs (a pageable
    copy runs at the host's pace)."""
    values = [v for v in row_values(row, "rate") if v]
    own = row.get("rate")
    if own is None:
        return ""
    if len(values) > 1 and max(values) / min(values) - 1 > SPREAD:
        return spread_text(values, ".3g") + " " + row.get("unit", "") + " (host-bound)"
    return (fmt(own, ".5g") + " " + row.get("unit", "")).strip()


def tour_seconds():
    """The tour's length over the runs: '57.1 s' or '56.9 s [56.7–57.1]'."""
    return spread_text([d.get("run_seconds") for d in all_runs()], ".1f", " s")


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
def find_run(program, args=None, data=None):
    """The entry for program in the results run (or in data, another run's results.json), with
    exactly these args when given, or None. The args match as recorded, as a student types
    them (`--output ray.png` for the tour's `--output RESULTS/ray.png`), or with the --output
    option left out."""
    for entry in (data or results())["runs"]:
        if entry["program"] != program:
            continue
        recorded = entry["args"]
        no_output = [a for i, a in enumerate(recorded) if a != "--output" and
                     (i == 0 or recorded[i - 1] != "--output")]
        if args is None or list(args) in (recorded, shown_args(entry), no_output):
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
    ("end-to-end ms*", lambda r: host_cell(r, "end_to_end_ms")),
    ("rate", rate_cell),
    ("% peak", lambda r: fmt(r.get("pct_theoretical_peak"), ".1f") +
     (f" ({r['peak']})" if r.get("peak") not in (None, "dram", "fp32") and
      r.get("pct_theoretical_peak") is not None else "")),
    ("% ceiling", lambda r: fmt(r.get("pct_measured_ceiling"), ".1f") +
     (f" ({r['ceiling']})" if r.get("pct_measured_ceiling") is not None else "")),
    ("check", lambda r: r.get("check", "")),
    ("x CPU*", lambda r: host_cell(r, "speedup_vs_cpu", ".3g")),
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
    """The results run's table of one chapter (or all), one row per measurement; the columns
    timed on the host (marked *) give the median and range over the runs."""
    columns = COLUMNS if chapter is not None else [("ch", lambda r: str(r["chapter"]))] + COLUMNS
    markdown_table(rows_of_chapter(chapter), columns)
    cog.outl("")
    cog.outl(f"\\* Timed with the host's clock: the median [and range] over {runs_words()}. "
             "Kernel-only times and rates are from the results run; they repeat within a few "
             "percent, and a rate marked host-bound gives its range.")


def about_run(run=None):
    """One sentence: which device, driver, CUDA and date the results run (or the tour kept as
    docs/runs/RUN/) is from."""
    data = results() if run is None else _tour(run)
    if data is None:
        cog.outl(f"Results run {run}: {NOT_RUN}.")
        return
    record, device = data.get("record", {}), data.get("device") or {}
    env = data.get("environment", {})
    sms = device.get("sm_count")
    cc = device.get("cc")
    extra = ", ".join(x for x in [f"{sms} SMs" if sms else "",
                                  f"compute capability {cc}" if cc else ""] if x)
    what = "Results run" if run is None else f"The tour kept as `docs/runs/{run}/`"
    cog.outl(f"{what}: {record.get('gpu') or 'no GPU'}" + (f" ({extra})" if extra else "") +
             f", driver {record.get('driver')}, CUDA {record.get('cuda_toolkit')}, "
             f"{(record.get('date') or '')[:10]}, commit {(record.get('git_commit') or '?')[:10]}"
             f"{' (with local changes)' if record.get('git_dirty') else ''}"
             + (f"; {len(data['runs'])} program runs in {data.get('run_seconds', 0):.1f} s, "
                f"{gpus_seen(run)} GPUs visible." if run else
                f"; {len(data['runs'])} program runs. The tour took {tour_seconds()} over "
                f"{runs_words()}."))


def gpus_seen(run):
    """How many GPUs the tour kept as docs/runs/RUN/ could see (its programs' 'GPUs: using K of
    V visible' lines), or '?'."""
    for e in (_tour(run) or {}).get("runs", []):
        text = source_text(f"{run}:{e['program']}") or ""
        m = re.search(r"GPUs: using \d+ of (\d+) visible", text)
        if m:
            return m.group(1)
    return "?"


def ceilings():
    """The measured ceilings of the results run, one sentence."""
    c = results().get("ceilings") or {}
    if not c.get("dram"):
        cog.outl(f"Measured ceilings: {NOT_RUN}.")
        return
    tensor = "".join(f", cuBLAS {p.upper()} on Tensor Cores {c[p]:.0f} GFLOP/s"
                     for p in ("tf32", "bf16") if c.get(p))
    cog.outl(f"Measured ceilings: device-to-device copy {c['dram']:.0f} GB/s (read + write), "
             f"cuBLAS SGEMM strict FP32 {c.get('fp32', 0):.0f} GFLOP/s{tensor}, pinned host to "
             f"device {c.get('h2d', 0):.1f} GB/s, device to host {c.get('d2h', 0):.1f} GB/s.")


def documents_table(chapter=None):
    """The documents' published figures beside ours (the tour's "documents" rows), all or those
    of one chapter's programs."""
    rows = results().get("documents") or []
    if chapter is not None:
        with open(os.path.join(ROOT, "docs", "published_figures.json")) as f:
            figures = {g["label"]: g["program"] for g in json.load(f)["figures"]}
        mine = {p["name"] for p in manifest()["programs"] if p["chapter"] == chapter}
        rows = [r for r in rows if figures.get(r["what"]) in mine]
    def over_runs(r, name, spec):
        values = [next((d.get(name) for d in data.get("documents") or []
                        if d["what"] == r["what"]), None) for data in all_runs()]
        return spread_text(values, spec)
    markdown_table(rows, [
        ("the documents (Tesla C2075)", lambda r: r["what"]),
        ("their ms", lambda r: fmt(r["document_ms"], ".6g")),
        ("ours ms (end to end)*", lambda r: over_runs(r, "ours_ms", ".4g") or NOT_RUN),
        ("ours measures", lambda r: r["measure"]),
        ("our kernel-only ms", lambda r: fmt(r["kernel_ms"], ".4g")),
        ("their x CPU", lambda r: fmt(r["their_speedup"], "g")),
        ("our x CPU (end to end)*", lambda r: over_runs(r, "our_speedup", ".3g")),
    ])
    cog.outl("")
    cog.outl(f"\\* Timed with the host's clock: the median [and range] over {runs_words()}.")


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
def values(program, field, *args, variant=None):
    """value() in each of the runs (the results run and its repeats), for a figure timed on the
    host: give it as spread_text(values(...))."""
    return [value(program, field, *args, variant=variant, data=d) for d in all_runs()]


def over_runs(program, field, *args, variant=None, spec=".4g", unit=""):
    """'1840 ms [1819–1862]': a host-timed field's median and range over the runs, or None."""
    return spread_text(values(program, field, *args, variant=variant), spec, unit) or None


def summary_values(program, variant, name):
    """A field of the summary row (program, variant) in each run: e.g. the pageable copies'
    rate, summary_values("pinned_vs_pageable", "pageable-h2d", "rate")."""
    return [next((r.get(name) for r in d.get("summary", []) if r["program"] == program
                  and r.get("variant") == variant), None) for d in all_runs()]


def median_of(program, field, *args, variant=None):
    s = spread(values(program, field, *args, variant=variant))
    return None if s is None else s[0]


def value(program, field="time_ms.median", *args, variant=None, data=None):
    """A field of the first matching record (program, its run's args, its variant), or None:
    e.g. value("VA-GPU-NN", "gbps", "--blocks", "auto")."""
    entry = find_run(program, list(args) if args else None, data)
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


# ---- runs beside the results run: chapter 7 on several GPUs ---------------------------------
# Chapter 7 needs more GPUs than the tour's machine has. Its multi-GPU measurements are kept
# beside the results run, in docs/runs/: h200x2/ (the tour's chapter 7 on two H200s: a tour
# folder, results.json and logs) and h200x4/ (the programs run by hand with --json on four
# H200s: one file per run, README.md names the commands). A block names a measurement by its
# source:
#   "h200x4/dot_multi_2p30.txt"  a program's whole output kept in docs/runs/h200x4/
#   "h200x2:dot_multi"           that program's run in the tour docs/runs/h200x2/results.json
#   "h200:zero_copy"             that program's run in the results run itself (DOCS_RESULTS)
# and reads the programs' own --json records (Report prints one JSON object per line), never
# their text, except for the lines a block shows as they were printed.
def runs_dir():
    return os.environ.get("DOCS_RUNS", os.path.join(ROOT, "docs", "runs"))


@functools.lru_cache(maxsize=None)
def _tour(run):
    if run == "h200":
        return results()
    path = os.path.join(runs_dir(), run, "results.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def _tour_folder(run):
    return results_dir() if run == "h200" else os.path.join(runs_dir(), run)


def json_records(text):
    """The --json records in a program's output: the lines that are one JSON object each."""
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"schema"')]


@functools.lru_cache(maxsize=None)
def source_text(source):
    """What the program printed (stdout) for a source, or None when it is not there."""
    if ":" in source:
        run, program = source.split(":", 1)
        data = _tour(run)
        entry = next((e for e in (data or {}).get("runs", []) if e["program"] == program), None)
        if entry is None or not entry.get("log"):
            return None
        path = os.path.join(_tour_folder(run), entry["log"])
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return f.read().split("\n--- stderr ---\n")[0]
    path = os.path.join(runs_dir(), source)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def source_records(source):
    """The --json records of a source ([] when it is not there)."""
    if ":" in source:
        run, program = source.split(":", 1)
        entry = next((e for e in (_tour(run) or {}).get("runs", []) if e["program"] == program),
                     None)
        return list(entry["records"]) if entry else []
    text = source_text(source)
    return json_records(text) if text else []


def pick(source, variant=None, **size):
    """The first record of a source with this variant and these size fields, or None."""
    for r in source_records(source):
        if variant is not None and r.get("variant") != variant:
            continue
        if all((r.get("size") or {}).get(k) == v for k, v in size.items()):
            return r
    return None


def field(record, name):
    """A field of a record, with dots for nested ones (time_ms.median); None when missing."""
    value = record
    for key in name.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def get(source, name, variant=None, **size):
    """One field of the first matching record of a source, or None."""
    r = pick(source, variant, **size)
    return None if r is None else field(r, name)


def gpus_of(source):
    """How many GPUs a source's program used (its 'GPUs: using K of V visible' line)."""
    text = source_text(source) or ""
    m = re.search(r"GPUs: using (\d+) of (\d+) visible", text)
    return int(m.group(1)) if m else None


def printed(source, command):
    """A source's output as it was printed (the --json records left out), under the command."""
    text = source_text(source)
    if text is None:
        code([f"$ {command}", f"({NOT_RUN}: {source})"])
        return
    lines = text.splitlines()
    if lines and lines[0].startswith("$ "):
        lines = lines[1:]
    lines = [line for line in lines if not line.startswith('{"schema"')]
    while lines and not lines[-1].strip():
        lines.pop()
    code([f"$ {command}"] + lines)


def cell(value, spec, unit=""):
    return NOT_RUN if value is None else format(value, spec) + unit


def size_name(size):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def scaling_table(*sources):
    """dot_multi's strong scaling: one row per GPU count, for each (label, source) the kernel
    median, the speed-up T(1)/T(k) and the efficiency T(1)/(k T(k)), from its gpus-k records."""
    ks = sorted({r["gpus"] for _, s in sources for r in source_records(s) if r.get("gpus")})
    columns = [("GPUs", lambda k: str(k))]
    for label, s in sources:
        def at(k, name, spec, unit="", s=s):
            if source_records(s) and pick(s, f"gpus-{k}") is None:
                return "—"          # the run had fewer GPUs
            return cell(get(s, name, f"gpus-{k}"), spec, unit)
        columns += [(f"{label}: ms", lambda k, at=at: at(k, "time_ms.median", ".4f")),
                    ("speed-up", lambda k, at=at: at(k, "speedup", ".2f", "×")),
                    ("efficiency", lambda k, at=at: at(k, "pct_peak", ".1f", "%")),
                    ("GB/s", lambda k, at=at: at(k, "gbps", ".0f"))]
    cog.outl("| " + " | ".join(h for h, _ in columns) + " |")
    cog.outl("|" + " --- |" * len(columns))
    for k in ks:
        cog.outl("| " + " | ".join(f(k) for _, f in columns) + " |")


ZERO_COPY = [("zero-copy", "the kernel reads mapped host memory"),
             ("copy-then-compute", "copy a and b to the GPU, then the kernel"),
             ("on-device", "the data already on the GPU"),
             ("portable", "portable mapped memory, every GPU reading its slice")]


def zero_copy_table(*sources):
    """zero_copy's variants (rows) for each (label, source): the median and the rate."""
    columns = [("variant", lambda v: f"`{v[0]}`: {v[1]}")]
    for label, s in sources:
        columns += [(f"{label}: ms", lambda v, s=s: cell(get(s, "time_ms.median", v[0]), ".4g")
                     if pick(s, v[0]) or v[0] != "portable" else "(one GPU: not run)"),
                    ("GB/s", lambda v, s=s: cell(get(s, "gbps", v[0]), ".1f")
                     if pick(s, v[0]) or v[0] != "portable" else "")]
    cog.outl("| " + " | ".join(h for h, _ in columns) + " |")
    cog.outl("|" + " --- |" * len(columns))
    for v in ZERO_COPY:
        cog.outl("| " + " | ".join(f(v) for _, f in columns) + " |")


def p2p_matrix(source, variant="peer"):
    """p2p_bandwidth's GB/s matrix of one mode (its record's matrix_gbs): from row, to column."""
    m = get(source, "matrix_gbs", variant)
    if m is None:
        cog.outl(f"({variant} matrix of {source}: {NOT_RUN})")
        return
    cog.outl("| from \\ to | " + " | ".join(f"GPU {j}" for j in range(len(m))) + " |")
    cog.outl("|" + " --- |" * (len(m) + 1))
    for i, row in enumerate(m):
        values = ("—" if v is None else f"{v:.1f}" for v in row)
        cog.outl(f"| GPU {i} | " + " | ".join(values) + " |")


def p2p_table(*sources):
    """p2p_bandwidth per (label, source): the mean GB/s of staged, peer and peer-both copies,
    NCCL's all-reduce bus bandwidth in the same run, and one-way peer over NCCL's bus."""
    cog.outl("| run | GPUs | staged GB/s | peer GB/s (one way) | peer-both GB/s | NCCL all-reduce "
             "bus GB/s | peer / NCCL bus |")
    cog.outl("|" + " --- |" * 7)
    for label, s in sources:
        cog.outl(f"| {label} | {cell(gpus_of(s), 'd')} | {cell(get(s, 'gbps', 'staged'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'peer'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'peer-both'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'nccl-allreduce'), '.1f')} | "
                 f"{cell(get(s, 'p2p_over_nccl_bus', 'nccl-allreduce'), '.2f')} |")


def ring_goal(source):
    """The goal ring_allreduce prints ('goal: at least N%'), as a number, or None."""
    m = re.search(r"goal: at least (\d+(?:\.\d+)?)%", source_text(source) or "")
    return float(m.group(1)) if m else None


def ring_table(*sources):
    """ring_allreduce per (label, source): NCCL's and the ring's bus bandwidth (same buffers, same
    run), the ring's percentage of NCCL's, and whether it reaches the goal the program prints."""
    cog.outl("| run | GPUs | MiB per GPU | NCCL bus GB/s | ring bus GB/s | ring / NCCL | goal |")
    cog.outl("|" + " --- |" * 7)
    for label, s in sources:
        pct, goal = get(s, "pct_peak", "ring"), ring_goal(s)
        size = get(s, "size.bytes", "ring")
        verdict = NOT_RUN if pct is None or goal is None else \
            f"≥ {goal:.0f}%: {'met' if pct >= goal else 'missed'}"
        cog.outl(f"| {label} | {cell(get(s, 'size.gpus', 'ring'), 'd')} | "
                 f"{cell(size and size / 2**20, '.0f')} | {cell(get(s, 'gbps', 'nccl'), '.1f')} | "
                 f"{cell(get(s, 'gbps', 'ring'), '.1f')} | {cell(pct, '.1f', '%')} | {verdict} |")


def nccl_sweep(*sources):
    """allreduce_nccl's sweep: one row per size, for each (label, source) the algorithm and bus
    bandwidth (GB/s) and the median time."""
    sizes = sorted({field(r, "size.bytes") for _, s in sources for r in source_records(s)
                    if r.get("variant") == "allreduce"})
    columns = [("size", lambda b: size_name(b))]
    for label, s in sources:
        def at(b, name, scale=1, s=s):
            if source_records(s) and pick(s, "allreduce", bytes=b) is None:
                return "—"          # the run's sweep stopped earlier
            v = get(s, name, "allreduce", bytes=b)
            return cell(None if v is None else v * scale, ".1f")
        columns += [(f"{label} ({gpus_of(s)} GPUs): µs",
                     lambda b, at=at: at(b, "time_ms.median", 1000)),
                    ("algbw", lambda b, at=at: at(b, "algbw_gbs")),
                    ("busbw", lambda b, at=at: at(b, "busbw_gbs"))]
    cog.outl("| " + " | ".join(h for h, _ in columns) + " |")
    cog.outl("|" + " --- |" * len(columns))
    for b in sizes:
        cog.outl("| " + " | ".join(f(b) for _, f in columns) + " |")


def device_pairs(source):
    """devices' pair lines: (from, to, peer, rank, atomic, link, read across) each."""
    pairs = []
    for line in (source_text(source) or "").splitlines():
        m = re.match(r"\s+(\d+) -> (\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if m:
            pairs.append(m.groups())
    return pairs


def topo_links(name):
    """The link names between distinct GPUs in an `nvidia-smi topo -m` matrix kept as NAME."""
    text = source_text(name) or ""
    links = []
    for line in text.splitlines():
        cells = line.split("\t")
        if re.match(r"GPU\d+$", cells[0].strip()):
            links += [c.strip() for c in cells[1:]
                      if re.match(r"\s*(NV\d+|PIX|PXB|PHB|NODE|SYS)\s*$", c)]
    return links


def sanitizer_quote(name):
    """What compute-sanitizer reported in a kept log (RESULTS/side/...): the first report of each
    kind as printed, how many there were (the excerpt's '... N more' lines count the cut ones),
    which libraries the host frames name, the test's result and the error summary."""
    path = side_file(name)
    if path is None:
        cog.outl(f"({name}: {NOT_RUN})")
        return
    with open(path) as f:
        lines = f.read().splitlines()
    kinds, frames, shown = {}, set(), []
    for line in lines:
        m = re.search(r"Program hit (\w+)", line)
        if m:
            if m.group(1) not in kinds:
                shown.append(line)
            kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
        m = re.match(r"# \.\.\. (\d+) more reports of (\w+) omitted", line)
        if m:
            kinds[m.group(2)] = kinds.get(m.group(2), 0) + int(m.group(1))
        m = re.search(r"Host Frame:.* in (\S+)$", line)
        if m:
            frames.add(m.group(1))
    ends = [line for line in lines if "ERROR SUMMARY" in line or "[  PASSED  ]" in line
            or "[  FAILED  ]" in line]
    code(shown + ["..."] + ends)
    cog.outl(", ".join(f"{n} reports of `{k}`" for k, n in kinds.items()) +
             "; the host frames name " + ", ".join(f"`{f}`" for f in sorted(frames)) + " only.")


# ---- chapter 4's Tensor Core step --------------------------------------------------------
# The issue's targets for MM-GPU-TC, as a share of cuBLAS at the same precision (goals, not
# measurements; the blocks say whether the results run meets them).
TC_TARGETS = {"tf32": 50.0, "bf16": 40.0}
U = {"fp32": 2.0 ** -24, "tf32": 2.0 ** -11, "bf16": 2.0 ** -8}   # unit roundoff of the inputs


def mm_record(program, precision, width=4096):
    """The results run's record of a matrix program at this Width and input precision."""
    for e in results()["runs"]:
        if e["program"] != program:
            continue
        for r in e["records"]:
            size = r.get("size") or {}
            if size.get("width") == width and (size.get("precision") or "fp32") == precision:
                return r
    return None


def tc_pair(precision, width=4096):
    """(ours, cuBLAS) records at one precision: MM-GPU-TC on Tensor Cores, MM-GPU-RT in FP32."""
    ours = "MM-GPU-RT" if precision == "fp32" else "MM-GPU-TC"
    return mm_record(ours, precision, width), mm_record("MM-cuBLAS", precision, width)


def tc_share(precision, width=4096):
    """Our kernel's GFLOP/s as a percentage of cuBLAS's at the same precision and Width."""
    ours, lib = tc_pair(precision, width)
    return percent(ours and ours.get("gflops"), lib and lib.get("gflops"))


def tc_speed_table(width=4096):
    """MM-GPU-TC against cuBLAS at each precision (and MM-GPU-RT against SGEMM in FP32), kernel-
    only medians at one Width, with the share of cuBLAS and the issue's target."""
    cog.outl("| inputs | ours | data | ours ms | ours TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | "
             "ours / cuBLAS | target |")
    cog.outl("|" + " --- |" * 9)
    for precision in ("tf32", "bf16", "fp32"):
        ours, lib = tc_pair(precision, width)
        name = "MM-GPU-TC" if precision != "fp32" else "MM-GPU-RT (FP32 lanes)"
        share = tc_share(precision, width)
        target = TC_TARGETS.get(precision)
        verdict = "—" if target is None else NOT_RUN if share is None else \
            f"≥ {target:.0f}%: {'met' if share >= target else 'missed'}"
        data = (ours or lib or {}).get("size", {}).get("data", "")
        cog.outl(f"| {precision.upper()} | {name} | {data} | "
                 f"{cell(ours and field(ours, 'time_ms.median'), '.4g')} | "
                 f"{cell(ours and ours.get('gflops') and ours['gflops'] / 1e3, '.1f')} | "
                 f"{cell(lib and field(lib, 'time_ms.median'), '.4g')} | "
                 f"{cell(lib and lib.get('gflops') and lib['gflops'] / 1e3, '.1f')} | "
                 f"{cell(share, '.1f', '%')} | {verdict} |")


@functools.lru_cache(maxsize=None)
def tc_tune():
    """The lines of side/tc-tune.log: one run each (variant, its arguments, GFLOP/s, cuBLAS's
    GFLOP/s on the same inputs and the ratio when it was compared, the relative error)."""
    path = side_file(os.path.join("side", "tc-tune.log"))
    rows = []
    for line in open(path).read().splitlines() if path else []:
        m = re.match(r"(\S+) (.*?)\s+kernel (\d+)\s+GFLOP/s\s+cuBLAS\s*(\d*)(?:\s+GFLOP/s)?\s*=\s*"
                     r"([\d.]*)%?\s+err\s*(\S*)\s+rc=(\d+)", line)
        if not m:
            continue
        args = m.group(2).split()
        opt = lambda k, d=None: args[args.index(k) + 1] if k in args else d
        rows.append({"variant": m.group(1), "args": m.group(2).strip(),
                     "width": int(opt("--width")),
                     "precision": opt("--precision", "fp32"), "data": opt("--data", "random"),
                     "gflops": float(m.group(3)),
                     "cublas": float(m.group(4)) if m.group(4) else None,
                     "pct": float(m.group(5)) if m.group(5) else None,
                     "err": float(m.group(6)) if m.group(6) else None,
                     "rc": int(m.group(7))})
    return rows


def tune(variant, precision="fp32", width=4096, data=None):
    """The first line of the sweep for this variant, precision, Width (and data), or None."""
    for r in tc_tune():
        if r["variant"] == variant and r["precision"] == precision and r["width"] == width and \
                (data is None or r["data"] == data):
            return r
    return None


def tc_error_table(width=4096):
    """The relative Frobenius error of P against the double product of the unrounded inputs, at
    each precision: MM-GPU-TC and cuBLAS on the same data (uniform, every bit used), and the
    inputs' unit roundoff u."""
    cog.outl("| inputs | unit roundoff u | MM-GPU-TC | cuBLAS | cuBLAS / u |")
    cog.outl("| --- | --- | --- | --- | --- |")
    for precision in ("tf32", "bf16"):
        ours = mm_record("MM-GPU-TC", precision, width)
        lib = mm_record("MM-cuBLAS", precision, width)
        e_ours = ours and ours.get("relative_error")
        e_lib = lib and lib.get("relative_error")
        data = (ours or lib or {}).get("size", {}).get("data", "")
        cog.outl(f"| {precision.upper()} ({data} data) "
                 f"| {U[precision]:.2e} | {cell(e_ours, '.2e')} | {cell(e_lib, '.2e')} | "
                 f"{cell(e_lib and e_lib / U[precision], '.2f')} |")
    lib = mm_record("MM-cuBLAS", "fp32", width)
    sweep = tune("cuBLAS", "fp32", width, "uniform")
    if sweep and sweep.get("err") is not None:
        cog.outl(f"| FP32 (uniform data, `side/tc-tune.log`) | {U['fp32']:.2e} | — | "
                 f"{sweep['err']:.2e} | (the sums' rounding, not the inputs') |")
    if lib is not None and lib.get("relative_error") is not None:
        cog.outl(f"| FP32 ({lib['size'].get('data')} data, the tour) | {U['fp32']:.2e} | — | "
                 f"{lib['relative_error']:.2e} | (data on the 1/8 grid: exact) |")


def tune_table(variants, precisions, width=4096, base="TC-base"):
    """The tile sweep: each variant's GFLOP/s at each precision, its share of cuBLAS on the same
    run, and its change against the committed kernel (base)."""
    head = "| variant |" + "".join(f" {p.upper()} GFLOP/s | % of cuBLAS | vs {base} |"
                                   for p in precisions)
    cog.outl(head)
    cog.outl("|" + " --- |" * (1 + 3 * len(precisions)))
    for v in variants:
        cells = []
        for p in precisions:
            r, b = tune(v, p, width, "uniform"), tune(base, p, width, "uniform")
            cells += [cell(r and r["gflops"], ".0f"), cell(r and r["pct"], ".1f", "%"),
                      cell(r and b and 100 * (r["gflops"] / b["gflops"] - 1), "+.1f", "%")]
        cog.outl(f"| {v} | " + " | ".join(cells) + " |")


def tune_best(precision, width=4096, base="TC-base"):
    """(variant, GFLOP/s, gain in % over base) of the fastest TC variant of the sweep."""
    rows = [r for r in tc_tune() if r["variant"].startswith("TC-") and r["precision"] == precision
            and r["width"] == width and r["data"] == "uniform"]
    b = tune(base, precision, width, "uniform")
    if not rows or b is None:
        return None, None, None
    best = max(rows, key=lambda r: r["gflops"])
    return best["variant"], best["gflops"], 100 * (best["gflops"] / b["gflops"] - 1)


@functools.lru_cache(maxsize=None)
def mma_peak(precision):
    """TFLOP/s of wmma::mma_sync alone at this input precision (side/mma-peak.log, written by
    scripts/mma_peak.cu), or None."""
    path = side_file(os.path.join("side", "mma-peak.log"))
    text = open(path).read() if path else ""
    if "Verdict: PASS" not in text:
        return None
    m = re.search(r"mma_sync %s .*?([\d.]+) TFLOP/s" % precision.upper(), text)
    return float(m.group(1)) if m else None


@functools.lru_cache(maxsize=None)
def ncu(name):
    """An Nsight Compute text report kept in side/: its metrics ('Metric Name' -> number) and
    its rule texts joined, for the figures ncu states in words."""
    path = side_file(os.path.join("side", name))
    if path is None:
        return {}, ""
    text = open(path).read()
    metrics = {}
    for line in text.splitlines():
        m = re.match(r"\s{4}(\S.*?\S)\s{2,}(\S.*?)?\s{2,}([\d,.]+)\s*$", line)
        if m and not line.strip().startswith(("OPT", "INF", "WRN")):
            metrics.setdefault(m.group(1), float(m.group(3).replace(",", "")))
    return metrics, re.sub(r"\s+", " ", text)


def ncu_metric(name, metric):
    return ncu(name)[0].get(metric)


def ncu_said(name, pattern, group=1, cast=float):
    """A figure from ncu's own words (a regular expression over its rule texts), or None."""
    m = re.search(pattern, ncu(name)[1])
    return cast(m.group(group)) if m else None


def ncu_busiest_pipe(name):
    """(pipeline, percent) that ncu names the highest-utilized, or (None, None)."""
    m = re.search(r"(\w+) is the highest-utilized pipeline \(([\d.]+)%\)", ncu(name)[1])
    return (m.group(1), float(m.group(2))) if m else (None, None)


# ---- the labs' self-test (docs/instructors.md) ----------------------------------------------
@functools.lru_cache(maxsize=None)
def lab_selftest(name="side/lab-selftest.log"):
    """`ctest -L lab -V` output kept in the results run: {lab: (table lines, verdict, seconds)},
    from the '### Lab chNN' table that `lab.py selftest` prints for each lab (ctest's 'N: '
    prefix of each line taken off), its 'lab.py selftest: PASS|FAIL' and ctest's time."""
    path = side_file(name)
    labs = {}
    if path is None:
        return labs
    lines = open(path, errors="replace").read().splitlines()
    prefix = {}
    for line in lines:
        m = re.match(r"(\d+): ### Lab (\S+)", line)
        if m:
            prefix[m.group(1)] = m.group(2)
            labs[m.group(2)] = {"table": [], "verdict": None, "seconds": None}
    for line in lines:
        m = re.match(r"(\d+): (.*)$", line)
        if m and m.group(1) in prefix:
            lab = labs[prefix[m.group(1)]]
            if m.group(2).startswith("|"):
                lab["table"].append(m.group(2))
            v = re.match(r"lab\.py selftest: (\w+)", m.group(2))
            if v:
                lab["verdict"] = v.group(1)
        m = re.search(r"Test #(\d+): lab\.selftest\.(\S+) \.+\s+(\w+)\s+([\d.]+) sec", line)
        if m and m.group(2) in labs:
            labs[m.group(2)]["seconds"] = float(m.group(4))
            labs[m.group(2)]["ctest"] = m.group(3)
    return labs


def lab_tables(name="side/lab-selftest.log"):
    """One score table per lab, as `lab.py selftest` printed it in the kept ctest run."""
    labs = lab_selftest(name)
    if not labs:
        cog.outl(f"({name}: {NOT_RUN}; `ctest -L lab -V` makes it on a GPU.)")
        return
    for lab in sorted(labs):
        t = labs[lab]
        cog.outl(f"**Lab {lab}** (`lab.selftest.{lab}`: {t.get('ctest') or NOT_RUN}"
                 + (f", {t['seconds']:.0f} s" if t.get("seconds") else "") + ")")
        cog.outl("")
        for row in t["table"]:
            cog.outl(row)
        cog.outl("")


def chapters_table():
    """The README's table of chapters, from programs.json (programs, key ideas, handout)."""
    m = manifest()
    cog.outl("| chapter | programs | what it teaches | handout |")
    cog.outl("| --- | --- | --- | --- |")
    for c in m["chapters"]:
        names = ", ".join(p["name"] for p in m["programs"] if p["chapter"] == c["chapter"])
        cog.outl(f"| {c['chapter']} {c['title']} | {names} | {c['ideas']} | "
                 f"[{c['handout']}]({c['handout']}) |")


# ---- MM-GPU-WGMMA's steps (docs/ch04_tensor_cores.md, part 2), from side/wgmma-steps.log ------------------
@functools.lru_cache(maxsize=None)
def wgmma_runs(name="wgmma-steps.log"):
    """The runs of side/<name> (MM-GPU-WGMMA --step all --compare-cublas, each after a line
    '$ MM-GPU-WGMMA ARGS'): {(precision, width): {"cublas": {...}, 1: {...}, ...}}, each
    {"ms", "gflops", "pct"} as printed (pct: the step's share of cuBLAS in the same run)."""
    def header(text):
        if not text.startswith("$ MM-GPU-WGMMA"):
            return None
        args = text.split()
        opt = lambda k, d: args[args.index(k) + 1] if k in args else d
        return opt("--precision", "bf16"), int(opt("--width", "1024"))
    return _wgmma_log(name, header)


def _wgmma_log(name, header):
    """side/<name> read as runs of MM-GPU-WGMMA: header(line) gives a run's key (None: not a
    header), and each run gets its steps' and cuBLAS's {"ms", "gflops", "pct"}."""
    path = side_file(os.path.join("side", name))
    runs, current, last = {}, None, None
    for text in open(path).read().splitlines() if path else []:
        key = header(text)
        if key is not None:
            current = runs.setdefault(key, {})
            continue
        m = re.match(r"\s+(cuBLAS \(yardstick\)|step (\d), kernel only)\s+median\s+([\d.]+) ms.*?"
                     r"([\d.]+) GFLOP/s", text)
        if m and current is not None:
            last = current.setdefault(int(m.group(2)) if m.group(2) else "cublas", {})
            last.update(ms=float(m.group(3)), gflops=float(m.group(4)))
            continue
        m = re.match(r"\s+([\d.]+)% of cuBLAS", text)
        if m and last is not None:
            last["pct"] = float(m.group(1))
    return runs


def wgmma_record(precision, width, step):
    return wgmma_runs().get((precision, width), {}).get(step)


WGMMA_TARGETS = {("bf16", 4096): 85, ("bf16", 8192): 85, ("tf32", 4096): 75}


def wgmma_table(name="wgmma-steps.log"):
    """Each step's TFLOP/s and share of cuBLAS in the same run, per precision and Width."""
    runs = wgmma_runs(name)
    keys = [("bf16", 4096), ("bf16", 8192), ("tf32", 4096)]
    cog.outl("| step | " + " | ".join(f"{p.upper()}, W = {w}" for p, w in keys) + " |")
    cog.outl("|" + " --- |" * (len(keys) + 1))
    what = {1: "1: wgmma + TMA, one stage", 2: "2: 4-stage mbarrier pipeline",
            3: "3: warp specialisation", 4: "4: clusters of 2, multicast, tile order"}
    for step in (1, 2, 3, 4):
        cells = []
        for k in keys:
            r = runs.get(k, {}).get(step)
            cells.append(NOT_RUN if not r else
                         f"{r['gflops'] / 1e3:.1f} TFLOP/s ({r.get('pct', float('nan')):.1f}%)")
        cog.outl(f"| {what[step]} | " + " | ".join(cells) + " |")
    cells = []
    for k in keys:
        r = runs.get(k, {}).get("cublas")
        cells.append(NOT_RUN if not r else f"{r['gflops'] / 1e3:.1f} TFLOP/s ({r['ms']:.4g} ms)")
    cog.outl("| cuBLAS, same run | " + " | ".join(cells) + " |")
    cells = []
    for k in keys:
        r = runs.get(k, {}).get(4)
        t = WGMMA_TARGETS[k]
        cells.append(f"≥ {t}%: " + (NOT_RUN if not r or "pct" not in r else
                                     "met" if r["pct"] >= t else "missed"))
    cog.outl("| target (step 4) | " + " | ".join(cells) + " |")


@functools.lru_cache(maxsize=None)
def wgmma_variants(name="wgmma-variants.log"):
    """side/<name>: MM-GPU-WGMMA built with other -DWGMMA_* settings, each run like
    scripts/wgmma_steps.sh ('=== VARIANT PRECISION WIDTH', then its lines):
    {(variant, precision, width): {step: {"gflops", "pct"}, "cublas": {...}}}."""
    def header(text):
        m = re.match(r"=== (\S+) (\S+) (\d+)", text)
        return (m.group(1), m.group(2), int(m.group(3))) if m else None
    return _wgmma_log(name, header)


def wgmma_variants_table(variants):
    """Step 4 built each way (variants: [(name, what)]), as a share of cuBLAS in the same run,
    beside step 3 of the same binary."""
    runs = wgmma_variants()
    keys = [("bf16", 4096), ("bf16", 8192), ("tf32", 4096)]
    cog.outl("| step 4 built with | " + " | ".join(f"{p.upper()}, W = {w}: step 3 → step 4"
                                                  for p, w in keys) + " |")
    cog.outl("|" + " --- |" * (len(keys) + 1))
    for variant, what in variants:
        cells = []
        for p, w in keys:
            r = runs.get((variant, p, w), {})
            s3, s4 = r.get(3, {}).get("pct"), r.get(4, {}).get("pct")
            cells.append(NOT_RUN if s3 is None or s4 is None else f"{s3:.1f}% → {s4:.1f}%")
        cog.outl(f"| {what} (`{variant}`) | " + " | ".join(cells) + " |")


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
    return ", ".join(f"{k} {duration(v)}" for k, v in phases.items() if k != "setup" or v >= 1)


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

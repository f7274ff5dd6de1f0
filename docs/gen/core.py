"""The shared core of the handouts' generated blocks (docs/gen/g.py re-exports it as `g`):
the folders, the results run and its repeats, the median and range of host-timed figures,
programs' --help and outputs, the tables of results.json, one measured value for a sentence
(`g.line`), and the runs kept beside the results run (docs/runs/)."""
import functools
import json
import os
import re
import subprocess

import cog  # provided by cogapp while it runs a generator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


def number(value, spec):
    """format(value, spec), but a 'g' spec never turns a whole number into 1e+03."""
    m = re.fullmatch(r"\.(\d+)g", spec)
    if m and abs(value) >= 10 ** int(m.group(1)):
        return f"{value:.0f}"
    return format(value, spec)


def spread_text(values, spec=".4g", unit=""):
    """'1840 [1819–1862]': the median and [range] over the runs; one run: its value alone."""
    s = spread(values)
    if s is None:
        return ""
    med, lo, hi, n = s
    if n == 1 or number(lo, spec) == number(hi, spec):
        return number(med, spec) + unit
    return f"{number(med, spec)}{unit} [{number(lo, spec)}–{number(hi, spec)}]"


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


def on_cpu(row):
    """Whether the row's program runs on the CPU alone (programs.json: "gpu": false): its
    'kernel' time is the host's."""
    return any(p["name"] == row["program"] and not p.get("gpu", True)
               for p in manifest()["programs"])


def kernel_cell(row):
    """The kernel-only median from the results run; a CPU program's time is the host's: its
    median [range] over the runs."""
    if on_cpu(row):
        return host_cell(row, "kernel_ms") + "*"
    return sig4(row.get("kernel_ms"))


def rate_cell(row):
    """The rate, with its range when it moves more than SPREAD across the runs (a pageable
    copy runs at the host's pace) or comes from the host's clock (a CPU program)."""
    values = [v for v in row_values(row, "rate") if v]
    own = row.get("rate")
    if own is None:
        return ""
    if on_cpu(row):
        return spread_text(values, ".3g") + " " + row.get("unit", "") + "*"
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


def sig4(value):
    """Four significant digits, trailing zeros kept (1.00046 ms is '1.000', not '1')."""
    if value is None:
        return ""
    text = format(value, "#.4g")
    return text[:-1] if text.endswith(".") else text


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
    # the tour wrote into its results folder; the student's command writes where it runs
    for recorded, shown in zip(entry["args"], shown_args(entry)):
        if recorded != shown:
            lines = [line.replace(recorded, shown) for line in lines]
    code([command] + lines)


# ---- tables from results.json --------------------------------------------------------------
COLUMNS = [
    ("program", lambda r: r["program"] + (f" [{r['variant']}]" if r.get("variant") else "")),
    ("arguments", lambda r: "`" + " ".join(r["args"]) + "`" if r.get("args") else "defaults"),
    ("teaches", lambda r: r["teaches"]),
    ("kernel ms", kernel_cell),
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


def rows_of_chapter(chapter, programs=None):
    """The summary rows of one chapter (of those programs only, when given), in programs.json's
    order, each with its run's args; a run of programs.json that the results run lacks gets one
    row saying so."""
    data = results()
    summary = data.get("summary", [])
    rows = []
    for p in manifest()["programs"]:
        if chapter is not None and p["chapter"] != chapter:
            continue
        if programs is not None and p["name"] not in programs:
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


def event_timed_end_to_end(programs):
    """Those of the programs whose end to end is timed with CUDA events rather than the host's
    clock: their log prints it as a median of several runs ("end to end ... median")."""
    out = []
    for program in programs:
        entry = find_run(program)
        path = entry and entry.get("log") and os.path.join(results_dir(), entry["log"])
        if path and os.path.exists(path):
            with open(path) as f:
                if re.search(r"^\s+end to end\s+median", f.read(), re.M):
                    out.append(program)
    return out


def host_footnote(programs, what="The columns and cells marked so, and a CPU program's time and "
                  "rate, are"):
    """The footnote of a table with host-dependent columns: what is timed how."""
    events = event_timed_end_to_end(programs)
    how = "" if not events else (
        "; the end to end of " + " and " .join(events) + " with CUDA events around the same "
        "allocations and copies, which run at the host's pace")
    return f"\\* {what} timed with the host's clock{how}: the median [and range] over {runs_words()}."


TABLE_NOTE = (" The GPU's kernel-only times and rates are from the results run; they repeat "
              "within a few percent, and a rate marked host-bound gives its range.")


def table(chapter=None, programs=None):
    """The results run's table of one chapter (or all; of those programs only, when given), one
    row per measurement; the columns that depend on the host (marked *) give the median and
    range over the runs."""
    columns = COLUMNS if chapter is not None else [("ch", lambda r: str(r["chapter"]))] + COLUMNS
    rows = rows_of_chapter(chapter, programs)
    markdown_table(rows, columns)
    cog.outl("")
    cog.outl(host_footnote(dict.fromkeys(r["program"] for r in rows)) + TABLE_NOTE)


def tables_by_chapter():
    """The results run's table split by chapter: a heading (with the handout's link) and the
    chapter's rows each, one footnote at the end."""
    programs = []
    for c in manifest()["chapters"]:
        rows = rows_of_chapter(c["chapter"])
        if not rows:
            continue
        programs += [r["program"] for r in rows]
        cog.outl(f"### Chapter {c['chapter']}: {c['title']} ([handout]({c['folder']}.md))")
        cog.outl("")
        markdown_table(rows, COLUMNS)
        cog.outl("")
    cog.outl(host_footnote(dict.fromkeys(programs)) + TABLE_NOTE)


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
        ("our kernel-only ms", lambda r: sig4(r["kernel_ms"])),
        ("their x CPU", lambda r: fmt(r["their_speedup"], "g")),
        ("our x CPU (end to end)*", lambda r: over_runs(r, "our_speedup", ".3g")),
    ])
    cog.outl("")
    with open(os.path.join(ROOT, "docs", "published_figures.json")) as f:
        program_of = {g["label"]: g["program"] for g in json.load(f)["figures"]}
    programs = dict.fromkeys(program_of.get(r["what"]) for r in rows if program_of.get(r["what"]))
    cog.outl(host_footnote(programs, "The columns marked so are"))


def image(name, alt):
    """A plot of the results run, drawn by scripts/plot_results.py into the results folder."""
    rel = os.path.relpath(os.path.join(results_dir(), name), os.path.join(ROOT, "docs"))
    if os.path.exists(os.path.join(results_dir(), name)):
        cog.outl(f"![{alt}]({rel})")
    else:
        cog.outl(f"({name}: {NOT_RUN})")


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


def helps(chapter, programs=None):
    """Every program of a chapter (programs.json; of those programs only, when given), its
    --help folded under its name."""
    for p in manifest()["programs"]:
        if p["chapter"] == chapter and (programs is None or p["name"] in programs):
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
    into the results folder by tools/refresh_docs.sh; its '# title' line becomes a sentence."""
    path = side_file(name)
    if path is None:
        cog.outl(f"({name}: {NOT_RUN}; `tools/refresh_docs.sh` makes it with {how}.)")
        return
    with open(path) as f:
        for row in f.read().rstrip("\n").splitlines():
            cog.outl(f"*{row[2:]}*" if row.startswith("# ") else row)


# ---- a figure of an exercise's run (side/exercises.json, tests/exercises/exercise.py) ------
@functools.lru_cache(maxsize=None)
def _exercises():
    path = side_file(os.path.join("side", "exercises.json"))
    if path is None:
        return {}
    with open(path) as f:
        return json.load(f).get("exercises", {})


def exercise_value(name, run, variant, name_of_field="time_ms.median"):
    """A field of an exercise's run as recorded (its first try's --json record of that variant),
    for a handout that quotes what the exercise measured; None when the record lacks it.
    E.g. exercise_value("ch06_streams.1", "s2", "depth-first", "pct_peak")."""
    r = (_exercises().get(name, {}).get("runs") or {}).get(run)
    for rec in ((r or {}).get("tries") or [{}])[0].get("json") or []:
        if rec.get("variant") == variant:
            return field(rec, name_of_field)
    return None


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

#!/usr/bin/env python3
"""The handouts' generated parts, and the check that they are what the sources say.

    python3 scripts/docs.py update [--build DIR] [--results DIR]   rewrite every marked block
    python3 scripts/docs.py check  [--build DIR] [--results DIR]   fail if a block is stale, or
                                                                   a measured number in prose
                                                                   has no source
    python3 scripts/docs.py numbers [--results DIR]                the prose check alone
    python3 scripts/docs.py import RUN [--results DIR]             take a tour's results folder
                                                                   as the committed run
    python3 scripts/docs.py repeat RUN [--results DIR]             keep another tour of the same
                                                                   commit as repeats/NAME/

A marked block (cog's markers inside HTML comments, so Markdown shows nothing of them):

    <!-- [[[cog g.output("VA-GPU-NN", "--blocks", "auto") ]]] -->
    (written by cog from the results run; never edit it by hand)
    <!-- [[[end]]] -->

The blocks are written by cogapp (pinned in requirements.txt, installed into .venv/ by
scripts/setup.sh) from the committed results run, docs/runs/h200/ (the tour's results.json,
its logs and its plots), and from the programs' own --help, run from the build folder (default
build/; CI: build-ci/). docs/gen/g.py gathers what a block may call (`g.help`, `g.output`,
`g.table`, ...).

The results run may hold side/ (measurements made by hand beside the tour: kept across an
import), and docs/runs/ holds runs beside it (h200x2/, h200x4/: chapter 7 on two and four GPUs).

The prose check: outside the marked blocks and code, every number written with a unit of
measurement (ms, µs, s, GB/s, TB/s, GFLOP/s, TFLOP/s, %, and a ratio written 3×) must be one of
the source documents' figures (docs/published_figures.json, at the number's own rounding) or a
constant on the allow-list docs/numbers_allowlist.json, where each entry gives its source (a
value of the hardware's specification, a setting, a goal, arithmetic on other constants), as
written and, where it says so, only in the sentence it names. The results are never searched:
a measured number is written by a generated block, so one typed by hand fails the check every
time, however close it is to a measured value.

The pictures drawn from traces of the kernels (results/traces/, scripts/trace_kernel.py) are checked
too: each must have been drawn from its traces as they are now.

Refreshing everything on a GPU is one command: tools/refresh_docs.sh (docs/README.md).
The check also holds every exercise of tests/exercises/ against its record (side/exercises.json
of the results run): an observation that the record does not show fails it.
Exit status: 0 up to date, 1 stale or unsourced, 2 bad usage or missing input.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RESULTS = os.path.join(ROOT, "docs", "runs", "h200")
ALLOWLIST = os.path.join(ROOT, "docs", "numbers_allowlist.json")
PUBLISHED = os.path.join(ROOT, "docs", "published_figures.json")
# The files with generated blocks and measured numbers (docs/ci.md: the CI times, from docs/runs/ci/).
FILES = ["README.md", "docs/README.md", "docs/ch02_vector_add.md", "docs/ch03_dot_product.md",
         "docs/ch04_matmul.md", "docs/ch04_tensor_cores.md", "docs/ch04_profiling.md",
         "docs/ch04_hopper.md", "docs/ch05_raytrace.md", "docs/ch05_appendix.md",
         "docs/ch06_streams.md", "docs/ch07_multi_gpu.md", "docs/results-h200.md",
         "docs/instructors.md", "docs/grader.md", "docs/ci.md", "docs/glossary.md",
         "docs/install.md", "labs/ch02.md", "labs/ch03.md", "labs/ch04.md", "labs/ch05.md",
         "labs/ch06.md"]
PLOTS = ["speedup.png", "roofline.png", "transfers.png", "timeline.png"]


def files():
    return [f for f in FILES if os.path.exists(os.path.join(ROOT, f))]


def run_cog(extra, opts):
    """Runs cogapp over the files, in this process, with the folders in the environment."""
    try:
        from cogapp import Cog
    except ImportError:
        print("docs: cogapp is missing: scripts/setup.sh examples installs it into .venv/ "
              "(run this script with .venv/bin/python)", file=sys.stderr)
        return 2
    os.environ["DOCS_RESULTS"] = os.path.abspath(opts.results)
    os.environ["DOCS_BUILD"] = os.path.abspath(opts.build)
    if not os.path.exists(os.path.join(opts.results, "results.json")):
        print(f"docs: no results.json in {opts.results}", file=sys.stderr)
        return 2
    argv = ["cog", "-I", os.path.join(ROOT, "docs"), "-p", "import gen.g as g",
            "--verbosity=1"] + extra + [os.path.join(ROOT, f) for f in files()]
    return Cog().main(argv)


# ---- the prose check ------------------------------------------------------------------------
UNIT = r"(?:ms|µs|us|s|seconds|GB/s|TB/s|GFLOP/s|TFLOP/s|%|[×x](?!\s*\d))"
NUMBER = r"(?<![\w.^/·-])(\d+(?:[ ,]\d{3})*(?:\.\d+)?)"
MEASURE = re.compile(NUMBER + r"(?:\s?[–-]\s?(\d+(?:\.\d+)?))?\s?(" + UNIT + r")(?![\w/])")
SCALE = {"ms": 1.0, "µs": 1e-3, "us": 1e-3, "s": 1e3, "seconds": 1e3,
         "GB/s": 1.0, "TB/s": 1e3, "GFLOP/s": 1.0, "TFLOP/s": 1e3}


class Published:
    """The source documents' own figures (docs/published_figures.json): their times (ms) and
    their speed-ups over the CPU (×). A number in prose may quote one of them, at its own
    rounding and in ms or s; nothing else is a source for prose (the results are quoted by
    generated blocks, never typed)."""

    def __init__(self, path=PUBLISHED):
        with open(path) as f:
            figures = json.load(f)["figures"]
        self.ms = [float(g["ms"]) for g in figures if g.get("ms") is not None]
        self.ratios = [float(g["speedup_over_cpu"]) for g in figures
                       if g.get("speedup_over_cpu") is not None]

    def has(self, text, unit):
        x = float(text.replace(",", "").replace(" ", ""))
        decimals = len(text.split(".")[1]) if "." in text else 0
        tol = 0.5 * 10 ** -decimals + 1e-12
        if unit in ("×", "x"):
            return any(abs(v - x) <= tol for v in self.ratios)
        if unit in ("ms", "s", "seconds"):
            scale = SCALE[unit]
            return any(abs(v / scale - x) <= tol for v in self.ms)
        return False


def prose_lines(path):
    """(line number, text) of the lines outside generated blocks, code and HTML comments, with
    inline code removed."""
    with open(path) as f:
        lines = f.read().split("\n")
    out, generated, fenced, previous_blank, in_code = [], False, False, True, False
    for number, line in enumerate(lines, 1):
        if "[[[cog" in line:          # the generator's code and its output, to the end marker
            generated = True
            continue
        if "[[[end]]]" in line:
            generated = False
            continue
        if generated:
            continue
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        in_code = line.startswith("    ") and (previous_blank or in_code)
        previous_blank = not line.strip()
        if in_code:
            continue
        text = re.sub(r"`[^`]*`", "", line)
        text = re.sub(r"<!--.*?-->", "", text)
        out.append((number, text))
    return out


def load_allowlist(path=ALLOWLIST):
    """The allow-list's entries: text (as written: '4.8 TB/s', '8 ×'), reason (its source: a
    specification, a setting, arithmetic on other constants), and optionally in: a phrase of
    the line it may stand in (for a number that is a constant in one sentence only)."""
    with open(path) as f:
        entries = json.load(f)["numbers"]
    for e in entries:
        if not e.get("reason"):
            raise SystemExit(f"docs: allow-list entry {e.get('text')} has no reason")
        e["text"] = re.sub(r"\s+", " ", e["text"])
    return entries


def allowed(entries, forms, line):
    return any(e["text"] in forms and (not e.get("in") or e["in"] in line) for e in entries)


def unsourced(paths, published=None, entries=None):
    """Every number with a unit in the prose of these files that is neither on the allow-list
    nor a published figure: ["file:line: 'text' (...)"]. The match is exact: the text as
    written, or a published figure at the number's own rounding; the results are not searched,
    so a number typed by hand fails however close it is to a measured one."""
    published = published or Published()
    entries = load_allowlist() if entries is None else entries
    missing = []
    for path in paths:
        name = os.path.relpath(path, ROOT)
        for number, text in prose_lines(path):
            for m in MEASURE.finditer(text):
                low, high, unit = m.group(1), m.group(2), m.group(3)
                whole = re.sub(r"\s+", " ", m.group(0).strip())
                for value in [low] + ([high] if high else []):
                    forms = {f"{value} {unit}".replace(" %", "%"), whole, value + unit}
                    if allowed(entries, forms, text) or published.has(value, unit):
                        continue
                    missing.append(f"{name}:{number}: '{whole}' ({value} {unit}) is neither "
                                   "generated nor an allow-listed constant or published figure")
    return missing


def check_numbers(results=None, paths=None):
    """The prose check over the handouts (or the given files). results is not read: it is
    kept so that `--results` means the same for every command."""
    paths = paths or [os.path.join(ROOT, f) for f in files()]
    missing = unsourced(paths)
    for line in missing:
        print(line)
    if missing:
        print(f"docs: {len(missing)} number(s) in prose typed by hand. A measured number goes in "
              "a generated block (docs/gen/g.py: g.line and friends); a constant (a "
              "specification, a setting, arithmetic) goes on docs/numbers_allowlist.json with "
              "its reason.")
        return 1
    print(f"docs: every number in prose is generated, a published figure or an allow-listed "
          f"constant ({len(paths)} files)")
    return 0


# ---- import a tour's results folder --------------------------------------------------------
def check_trace_pictures(results=DEFAULT_RESULTS):
    """The pictures drawn from traces (results/traces/, tools/trace/pictures.py): each one drawn
    from its traces as they are now (scripts/trace_kernel.py draw redraws them)."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "trace"))
    import pictures
    import tracelib
    folder = os.path.join(results, "traces")
    if not os.path.isdir(folder):
        return 0
    stale = tracelib.stale_pictures(folder, pictures.PICTURES)
    for s in stale:
        print(f"docs: {os.path.relpath(folder, ROOT)}/{s}", file=sys.stderr)
    return 1 if stale else 0


def import_run(run, results):
    """Copies a tour's results.json, logs and plots into the committed results folder, and draws
    the plots again with this checkout's scripts/plot_results.py."""
    if not os.path.exists(os.path.join(run, "results.json")):
        print(f"docs: no results.json in {run}", file=sys.stderr)
        return 2
    with open(os.path.join(run, "results.json")) as f:
        data = json.load(f)
    if not data.get("record", {}).get("passed", False):
        print("docs: that run did not pass (record.passed is false): not imported", file=sys.stderr)
        return 1
    # side/ holds measurements made by hand beside a tour (a tile sweep, Nsight Compute
    # sections, the labs' self-test): they are kept unless the new run brings its own.
    # So are the side tables of tools/refresh_docs.sh (e.g. ch05_compare.md). The repeats/
    # of the old run are not: they repeat a run that is no longer the committed one.
    side = os.path.join(results, "side")
    kept = os.path.join(os.path.dirname(os.path.abspath(results)), ".side-kept")
    shutil.rmtree(kept, ignore_errors=True)
    os.makedirs(kept)
    if os.path.isdir(side) and not os.path.isdir(os.path.join(run, "side")):
        shutil.move(side, os.path.join(kept, "side"))
    # traces/ (scripts/trace_kernel.py record: the kernels' traces and the pictures drawn from them)
    # is not made by the tour: it is kept too.
    traces = os.path.join(results, "traces")
    if os.path.isdir(traces):
        shutil.move(traces, os.path.join(kept, "traces"))
    for table in glob.glob(os.path.join(results, "*.md")):
        name = os.path.basename(table)
        if name != "summary.md" and not os.path.exists(os.path.join(run, name)):
            shutil.move(table, os.path.join(kept, name))
    if os.path.isdir(os.path.join(results, "repeats")):
        print(f"docs: {os.path.relpath(results, ROOT)}/repeats/ dropped (it repeats the old run): "
              "add this run's repeats with `docs.py repeat RUN`")
    if os.path.exists(results):
        shutil.rmtree(results)
    os.makedirs(os.path.join(results, "logs"))
    for name in os.listdir(kept):
        shutil.move(os.path.join(kept, name), os.path.join(results, name))
    os.rmdir(kept)
    if not os.path.isdir(side) and os.path.isdir(os.path.join(run, "side")):
        shutil.copytree(os.path.join(run, "side"), side)
    shutil.copy(os.path.join(run, "results.json"), results)
    for name in ("results.csv", "summary.md"):
        if os.path.exists(os.path.join(run, name)):
            shutil.copy(os.path.join(run, name), results)
    for log in glob.glob(os.path.join(run, "logs", "*.txt")):
        shutil.copy(log, os.path.join(results, "logs"))
    # Side measurements that tools/refresh_docs.sh adds beside the tour (Markdown tables).
    for side in glob.glob(os.path.join(run, "*.md")):
        if os.path.basename(side) != "summary.md":
            shutil.copy(side, results)
    python = sys.executable
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        python = venv
    plot = subprocess.run([python, os.path.join(ROOT, "scripts", "plot_results.py"), results])
    print(f"docs: {run} imported into {os.path.relpath(results, ROOT)}/")
    return plot.returncode


def add_repeat(run, results):
    """Keeps another tour of the same commit beside the results run, as repeats/<NAME>/ (its
    results.json and summary.md): the generator gives host-timed figures (end-to-end times,
    CPU times, pageable copies, the tour's length) as the median and range over all the runs."""
    path = os.path.join(run, "results.json")
    if not os.path.exists(path):
        print(f"docs: no results.json in {run}", file=sys.stderr)
        return 2
    with open(path) as f:
        data = json.load(f)
    with open(os.path.join(results, "results.json")) as f:
        committed = json.load(f)
    if not data.get("record", {}).get("passed", False):
        print("docs: that run did not pass (record.passed is false): not kept", file=sys.stderr)
        return 1
    mine, theirs = (committed.get("record", {}).get("git_commit"),
                    data.get("record", {}).get("git_commit"))
    if mine != theirs:
        print(f"docs: {run} is of commit {str(theirs)[:10]}, the results run of "
              f"{str(mine)[:10]}: a repeat must run the same programs", file=sys.stderr)
        return 1
    name = os.path.basename(os.path.normpath(run))
    target = os.path.join(results, "repeats", name)
    os.makedirs(target, exist_ok=True)
    for file in ("results.json", "summary.md"):
        if os.path.exists(os.path.join(run, file)):
            shutil.copy(os.path.join(run, file), target)
    print(f"docs: {run} kept as {os.path.relpath(target, ROOT)}/")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["update", "check", "numbers", "import", "repeat"])
    parser.add_argument("run", nargs="?", help="import, repeat: the tour's results folder")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="the build folder with the programs, for --help (default build/)")
    parser.add_argument("--results", default=DEFAULT_RESULTS,
                        help="the committed results run (default docs/runs/h200/)")
    opts = parser.parse_args()
    if opts.command == "import":
        if not opts.run:
            parser.error("import needs the tour's results folder")
        return import_run(opts.run, opts.results)
    if opts.command == "repeat":
        if not opts.run:
            parser.error("repeat needs the tour's results folder")
        return add_repeat(opts.run, opts.results)
    if opts.command == "update":
        return run_cog(["-r"], opts)
    if opts.command == "numbers":
        return check_numbers(opts.results)
    code = run_cog(["--check", "--diff",
                    "--check-fail-msg=run: python3 scripts/docs.py update (docs/README.md)"], opts)
    if code == 2:
        return 2
    numbers = check_numbers(opts.results)
    exercises = check_exercises(opts.results)
    traces = check_trace_pictures(opts.results)
    return 1 if code or numbers or exercises or traces else 0


def check_exercises(results):
    """Every exercise of tests/exercises/, answered in docs/instructors.md or not: its claims
    hold on the record side/exercises.json of the results run (tests/exercises/README.md)."""
    record = os.path.join(results, "side", "exercises.json")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "exercises", "exercise.py"),
                          "check", "--record", record])
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())

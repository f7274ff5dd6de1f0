#!/usr/bin/env python3
"""The tour: build the suite, run every example at its default size, and report.

    python3 scripts/tour.py              everything (README command 1)
    python3 scripts/tour.py --chapter 4  one chapter (repeat the flag for more)
    python3 scripts/tour.py --quick      small sizes, for a fast look
    python3 scripts/tour.py --preset gpu on a GPU CI runner (with CUDA_EXAMPLES_REQUIRE_GPU=1)

It first checks what it needs (scripts/setup.sh examples: it says what it installs, and
puts matplotlib in the project's .venv/), then builds only its programs in the preset's
folder (build/ by default: the folder scripts/test.sh uses, so nothing is built twice).
It measures this GPU's ceilings first (device-to-device copy, cuBLAS FP32,
pinned host<->device copies), runs each program with --json, prints a progress
line per program and one summary table, sets the documents' published figures
beside ours, and writes everything to results/<date-time>/ (results.json,
results.csv, summary.md, one log per program). scripts/plot_results.py turns
that folder into pictures. results.json opens with a "record": exit code, failed
programs, GPU, driver, CUDA versions and git commit, one file per run for CI.

Without a GPU it still runs what needs none (MM-CPU), marks every GPU row
"skipped: ..." with the reason, and exits 0. With a GPU, any failed check
(or a crash) makes it exit 1.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def load_programs():
    """Every run of the tour, from programs.json (the one list of the programs): chapter,
    folder, program, what it teaches, default arguments, --quick arguments, needs a GPU,
    and the GPUs the run needs (min_gpus, chapter 7; 1 when not given)."""
    with open(os.path.join(ROOT, "programs.json")) as f:
        manifest = json.load(f)
    folders = {c["chapter"]: c["folder"] for c in manifest["chapters"]}
    runs = []
    for p in manifest["programs"]:
        for r in p["runs"]:
            runs.append((p["chapter"], folders[p["chapter"]], p["name"], r.get("teaches", p["teaches"]),
                         r["args"], r["quick"], p["gpu"], r.get("min_gpus", 1)))
    return runs


def load_published_figures():
    """The figures the source documents published, from docs/published_figures.json: (label,
    their ms, their speedup over the CPU, program, variant, size, which of our times)."""
    with open(os.path.join(ROOT, "docs", "published_figures.json")) as f:
        figures = json.load(f)["figures"]
    return [(g["label"], g["ms"], g["speedup_over_cpu"], g["program"], g["variant"], g["size"],
             g["compare_with"]) for g in figures]


PROGRAMS = load_programs()
DOCUMENT_FIGURES = load_published_figures()

SKIP_VARIANTS = {"timeline", "device", "d2d-copy"}  # d2d-copy: the ceiling, measured once


WIDTH = 100  # every line the tour prints fits in 100 columns (tests/test_output_width.py)
NAME_WIDTH = 52


def log(msg=""):
    print(msg, flush=True)


def wrapped(text, indent="    "):
    """A message of the tour within WIDTH columns, its later lines indented."""
    import textwrap
    return textwrap.fill(text, WIDTH, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def progress_line(i, total, name, seconds, shown):
    """'[ 4/37] ch02 VA-GPU-NN --blocks auto   5.0 s  PASS': where the name is too long for one
    line of WIDTH columns, its time and status go on a line of their own, in the same column."""
    head = f"[{i:2d}/{total}] "
    tail = f" {seconds:5.1f} s  {shown}"
    for width in (NAME_WIDTH, WIDTH - len(head) - len(tail)):  # the column, else what is left
        line = f"{head}{name:<{width}}{tail}"
        if len(line) <= WIDTH:
            return line
    return f"{head}{name}\n{'':{WIDTH - len(tail.lstrip()) - 1}}{tail.lstrip()}"


# What a reader without a GPU can do instead (the end of the tour, of scripts/test.sh, README).
NO_GPU_INSTEAD = [
    "read what an H200 printed and drew: each handout (docs/chNN_*.md) shows the committed",
    "  outputs and pictures, and docs/results-h200.md the whole table;",
    "run MM-CPU, chapter 4's CPU reference and the baseline of every speedup: the tour runs it;",
    "the labs: python3 scripts/lab.py make ch02 lab2 writes a folder, and python3 lab2/lint.py",
    "  checks your code there as the grader does, with no GPU;",
    "a course server, where your course runs one, builds and runs your programs on its GPU",
    "  (docs/server.md).",
]


def no_gpu_advice():
    return "Without a GPU you can:\n" + "\n".join(
        ("  - " if not l.startswith("  ") else "    ") + l.strip() for l in NO_GPU_INSTEAD)


def run(cmd, cwd=ROOT, env=None):
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace")


def preset_binary_dir(preset):
    """The build folder of a configure preset in CMakePresets.json (following "inherits")."""
    with open(os.path.join(ROOT, "CMakePresets.json")) as f:
        presets = {p["name"]: p for p in json.load(f)["configurePresets"]}
    if preset not in presets:
        sys.exit(f"tour: no configure preset '{preset}' (CMakePresets.json has {', '.join(presets)})")
    while preset:
        entry = presets[preset]
        if "binaryDir" in entry:
            return entry["binaryDir"].replace("${sourceDir}", ROOT)
        parents = entry.get("inherits", [])
        preset = parents if isinstance(parents, str) else (parents[0] if parents else None)
    sys.exit("tour: the preset names no binaryDir")


def stream(cmd, prefix):
    """Runs cmd, showing the build's progress every 10% (ninja's [k/N] or make's [ NN%]);
    returns (exit code, the whole output)."""
    process = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, text=True, errors="replace")
    lines, shown, started = [], 0, time.time()
    for line in process.stdout:
        lines.append(line)
        ninja = re.match(r"\[(\d+)/(\d+)\]", line)
        make = re.match(r"\[ *(\d+)%\]", line)
        percent = 100 * int(ninja[1]) // int(ninja[2]) if ninja else int(make[1]) if make else None
        if percent is not None and percent >= shown + 10:
            shown = percent - percent % 10
            log(f"{prefix} {percent:3d}% after {time.time() - started:4.0f} s")
    return process.wait(), "".join(lines)


def build(build_dir, preset):
    """Configures the build folder and builds the programs only (the target "programs"); returns
    False (after saying why) on failure. The folder is the one scripts/test.sh uses with the
    same preset, so the tests later build only what the tour did not."""
    # The setup check speaks for itself, live: what is missing, what it installs and how large.
    setup = subprocess.run(["bash", os.path.join(ROOT, "scripts", "setup.sh"), "examples",
                            "--python", sys.executable], cwd=ROOT, stdin=subprocess.DEVNULL)
    if setup.returncode != 0:
        log("[build] setup failed: see above")
        return False
    jobs = str(os.cpu_count() or 2)
    # A new build folder uses Ninja where it is installed (scripts/test.sh does the same): it
    # skips what a build step left unchanged (the planted bugs' patched copies).
    if shutil.which("ninja"):
        os.environ.setdefault("CMAKE_GENERATOR", "Ninja")
    if build_dir:
        configure = ["cmake", "-S", ROOT, "-B", build_dir]
        compile_ = ["cmake", "--build", build_dir, "-j", jobs]
    else:
        configure = ["cmake", "--preset", preset]
        compile_ = ["cmake", "--build", "--preset", preset, "-j", jobs]
    compile_ += ["--target", "programs"]
    started = time.time()
    log(f"[build] configure: {' '.join(configure)}")
    code, output = stream(configure, "[build]")
    if code != 0 and "GTest" in output:
        # The tests need GoogleTest, the tour does not: build the programs without the tests
        # in the same folder; scripts/test.sh turns them back on (BUILD_TESTING=ON).
        log("[build] GoogleTest is not installed: configuring without the tests "
            "(scripts/test.sh needs it: apt-get install libgtest-dev)")
        configure.append("-DBUILD_TESTING=OFF")
        code, output = stream(configure, "[build]")
    if code != 0:
        sys.stdout.write(output[-6000:])
        log("[build] configure failed")
        return False
    log(f"[build] configure done in {time.time() - started:.1f} s")
    started = time.time()
    log(f"[build] build: {' '.join(compile_)}")
    code, output = stream(compile_, "[build]")
    if code != 0:
        sys.stdout.write(output[-6000:])
        log("[build] build failed")
        return False
    log(f"[build] build done in {time.time() - started:.1f} s")
    return True


def visible_gpus():
    """How many GPUs nvidia-smi lists (CUDA_VISIBLE_DEVICES narrows it): chapter 7's runs
    that need several are skipped, with the reason, on a machine with fewer."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    result = run([smi, "-L"])
    count = sum(1 for line in result.stdout.splitlines() if line.startswith("GPU "))
    chosen = os.environ.get("CUDA_VISIBLE_DEVICES")
    return count if chosen is None else min(count, len([c for c in chosen.split(",") if c.strip()]))


def parse_records(stdout):
    records = []
    for line in stdout.splitlines():
        if line.startswith('{"schema"'):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records


def run_program(binary, args, log_path):
    """Runs one program with --json; returns (status, seconds, records, detail)."""
    started = time.time()
    result = run([binary] + args + ["--json"])
    seconds = time.time() - started
    with open(log_path, "w") as f:
        f.write(f"$ {binary} {' '.join(args)} --json\n{result.stdout}\n--- stderr ---\n{result.stderr}"
                f"\n--- exit code {result.returncode} ---\n")
    records = parse_records(result.stdout)
    last_lines = [l for l in (result.stderr + result.stdout).strip().splitlines() if l.strip()]
    detail = last_lines[-1] if last_lines else ""
    if result.returncode == 77:
        reason = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "no CUDA device"
        return "skipped", seconds, records, reason
    if result.returncode == 0:
        return "PASS", seconds, records, detail
    return "FAIL", seconds, records, f"exit code {result.returncode}: {detail}"


def ceiling_values(records):
    ceilings = {}
    for r in records:
        if r.get("program") == "ceilings":
            if r["variant"] == "d2d-copy":
                ceilings["dram"] = r["gbps"]
            elif r["variant"] == "sgemm-fp32":
                ceilings["fp32"] = r["gflops"]
            elif r["variant"] in ("gemm-tf32", "gemm-bf16"):  # cuBLAS on the Tensor Cores
                ceilings[r["variant"][-4:]] = r["gflops"]
            elif r["variant"] == "h2d-pinned":
                ceilings["h2d"] = r["gbps"]
            elif r["variant"] == "d2h-pinned":
                ceilings["d2h"] = r["gbps"]
            elif r["variant"] == "device":
                ceilings["device"] = r
    if "h2d" in ceilings and "d2h" in ceilings:
        ceilings["pcie"] = max(ceilings["h2d"], ceilings["d2h"])
    return ceilings


def fmt(value, spec):
    return "" if value is None else format(value, spec)


def cpu_baseline(runs, record):
    """The CPU time for the same problem: the record's own cpu_ms, or MM-CPU's at the same Width."""
    if record.get("cpu_ms"):
        return record["cpu_ms"]
    width = (record.get("size") or {}).get("width")
    if width is None or record.get("program") == "MM-CPU":
        return None
    for entry in runs:
        for r in entry["records"]:
            if r.get("program") == "MM-CPU" and (r.get("size") or {}).get("width") == width:
                return (r.get("time_ms") or {}).get("median")
    return None


def summary_rows(runs, ceilings):
    """One row per measurement record (or per program when it produced none)."""
    rows = []
    for entry in runs:
        records = [r for r in entry["records"] if r.get("variant") not in SKIP_VARIANTS]
        # A size sweep shows only its largest size here; the plots show all of it.
        sizes = [(r.get("size") or {}).get("bytes") for r in records if r.get("memory")]
        if len(set(sizes)) > 1:
            records = [r for r in records if not r.get("memory") or (r.get("size") or {}).get("bytes") == max(sizes)]
        if not records:
            rows.append({"chapter": entry["chapter"], "program": entry["program"], "variant": "",
                         "teaches": entry["teaches"], "check": entry["status"] if entry["status"] != "skipped"
                         else "skipped: " + entry["detail"]})
            continue
        for r in records:
            time_ms = r.get("time_ms") or {}
            # Which measured ceiling this rate is compared with: FP32 for GFLOP/s,
            # the pinned link for host<->device copies, else the device-to-device copy.
            # A CPU's rate (no compute capability) is compared with nothing.
            rate, unit, ceiling_kind = None, "", None
            direction = r.get("direction") or r.get("variant", "")[-3:]
            if r.get("gflops") is not None:
                rate, unit, ceiling_kind = r["gflops"], "GFLOP/s", "fp32"
                if r.get("variant", "")[-4:] in ("tf32", "bf16"):  # Tensor Cores: cuBLAS at that precision
                    ceiling_kind = r["variant"][-4:]
            elif r.get("gbps") is not None:
                rate, unit = r["gbps"], "GB/s"
                if direction in ("h2d", "d2h"):
                    ceiling_kind = direction
                elif r.get("peak") in (None, "dram"):
                    ceiling_kind = "dram"
            if r.get("ceiling"):  # the program names its limit (zero_copy: the host link)
                ceiling_kind = r["ceiling"]
            if r.get("cc") is None:
                ceiling_kind = None
            ceiling = ceilings.get(ceiling_kind)
            pct_ceiling = 100.0 * rate / ceiling if rate is not None and ceiling else None
            cpu_ms, median = cpu_baseline(runs, r), time_ms.get("median")
            speedup = cpu_ms / median if cpu_ms and median else None
            verdict = r.get("verdict") or entry["status"]
            if entry["status"] == "FAIL":
                verdict = "FAIL"
            rows.append({
                "chapter": entry["chapter"], "program": r.get("program", entry["program"]),
                "variant": r.get("variant", ""), "teaches": entry["teaches"],
                "kernel_ms": median, "kernel_min_ms": time_ms.get("min"), "kernel_max_ms": time_ms.get("max"),
                "end_to_end_ms": r.get("end_to_end_ms"), "rate": rate, "unit": unit,
                "pct_theoretical_peak": r.get("pct_peak"), "peak": r.get("peak"), "ceiling": ceiling_kind,
                "pct_measured_ceiling": pct_ceiling, "check": verdict, "speedup_vs_cpu": speedup,
                "cpu_ms": cpu_ms, "lesson": lesson_cell(r),
            })
    return rows


def lesson_cell(record):
    """The record's lesson (common/report.h): 'shown', 'MISSED', 'not shown on this GPU' or
    'not checked', with its smallest ratio against its threshold; '' for a program without one."""
    lesson = record.get("lesson") or {}
    status = lesson.get("status", "")
    checks = [c for c in lesson.get("checks") or [] if c.get("ratio") is not None]
    if not checks or status not in ("shown", "MISSED"):
        return status
    worst = min(checks, key=lambda c: (c["shown"], c["ratio"] / c["threshold"] if c["kind"] == ">="
                                       else c["threshold"] / c["ratio"]))
    return f"{status} ({worst['ratio']:.3g} {worst['kind']} {worst['threshold']:g})"


def table(rows, columns):
    """A plain text table: columns = [(header, function(row) -> str)]."""
    cells = [[h for h, _ in columns]] + [[f(r) for _, f in columns] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cells[0], widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells[1:]]
    return "\n".join(lines)


def markdown(rows, columns):
    out = ["| " + " | ".join(h for h, _ in columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(f(r).replace("|", "/") for _, f in columns) + " |" for r in rows]
    return "\n".join(out)


SUMMARY_COLUMNS = [
    ("ch", lambda r: str(r["chapter"])),
    ("program", lambda r: r["program"] + (f" [{r['variant']}]" if r.get("variant") else "")),
    ("teaches", lambda r: r["teaches"]),
    ("kernel ms", lambda r: fmt(r.get("kernel_ms"), ".4g")),
    ("end-to-end ms", lambda r: fmt(r.get("end_to_end_ms"), ".4g")),
    ("rate", lambda r: (fmt(r.get("rate"), ".5g") + " " + r.get("unit", "")).strip()),
    ("% peak", lambda r: fmt(r.get("pct_theoretical_peak"), ".1f") +
                         (f" ({r['peak']})" if r.get("peak") not in (None, "dram", "fp32") else "")),
    ("% ceiling", lambda r: (fmt(r.get("pct_measured_ceiling"), ".1f") +
                             (f" ({r['ceiling']})" if r.get("pct_measured_ceiling") is not None else ""))),
    ("check", lambda r: r.get("check", "")),
    ("lesson", lambda r: r.get("lesson", "")),
    ("x CPU", lambda r: fmt(r.get("speedup_vs_cpu"), ".4g")),
]


def short_check(check):
    """The check cell on screen: a skip's reason shortened (the files keep it whole)."""
    if check.startswith("skipped: no") and "CUDA device" in check:
        return "skip: no GPU"
    hit = re.match(r"skipped: needs (?:at least )?(\d+) GPUs", check)
    return f"skip: needs {hit.group(1)} GPUs" if hit else check[:18]


def short_program(r, width=30):
    """program [variant], cut to 30 characters with a ~ (pinned_vs_pageable [registere~])."""
    name = r["program"] + (f" [{r['variant']}]" if r.get("variant") else "")
    return name if len(name) <= width else name[:width - 1] + "~"


def short_number(value):
    """A speedup in at most 6 characters: 0.0309, 1.46, 74, 13279."""
    if value is None:
        return ""
    return f"{value:.0f}" if value >= 10 else f"{value:.3g}"


# What the terminal shows: the columns that fit in 100 (tests/docs: test_tour_screen). summary.md
# and results.csv keep every column (SUMMARY_COLUMNS, the CSV's fields): what each program
# teaches, end-to-end times, the theoretical peak, the lesson, each skip's whole reason.
SCREEN_COLUMNS = [
    ("ch", lambda r: str(r["chapter"])),
    ("program", lambda r: short_program(r)),
    ("kernel ms", lambda r: fmt(r.get("kernel_ms"), ".4g")),
    ("rate", lambda r: (fmt(r.get("rate"), ".4g") + " " + r.get("unit", "")).strip()),
    ("%ceil", lambda r: fmt(r.get("pct_measured_ceiling"), ".0f")),
    ("check", lambda r: short_check(r.get("check", ""))),
    ("x CPU", lambda r: short_number(r.get("speedup_vs_cpu"))),
]


# The published figures beside ours: every column in summary.md, the ones that fit in 100 on screen.
DOC_COLUMNS = [("the documents (Tesla C2075)", lambda r: r["what"]),
               ("their ms", lambda r: fmt(r["document_ms"], ".6g")),
               ("ours ms", lambda r: fmt(r["ours_ms"], ".4g") or "not run"),
               ("ours measures", lambda r: r["measure"]),
               ("our kernel-only ms", lambda r: fmt(r["kernel_ms"], ".4g")),
               ("their x CPU", lambda r: fmt(r["their_speedup"], "g")),
               ("our x CPU (end to end)", lambda r: fmt(r["our_speedup"], ".4g"))]
DOC_SCREEN_COLUMNS = [("the documents (Tesla C2075)", lambda r: r["what"]),
                      ("their ms", lambda r: fmt(r["document_ms"], ".6g")),
                      ("our ms", lambda r: fmt(r["ours_ms"], ".4g") or "not run"),
                      ("our ms is", lambda r: r["measure"].split(" (")[0].replace(", CPU", "")),
                      ("kernel ms", lambda r: fmt(r["kernel_ms"], ".4g")),
                      ("their xCPU", lambda r: fmt(r["their_speedup"], "g")),
                      ("our xCPU", lambda r: short_number(r["our_speedup"]))]


def find_record(records, program, variant=None, **size):
    for r in records:
        if r.get("program") != program or (variant and r.get("variant") != variant):
            continue
        if all((r.get("size") or {}).get(k) == v for k, v in size.items()):
            return r
    return None


def document_rows(all_records, chapters=None):
    """The published figures beside ours; with chapters, only theirs (tour.py --chapter 2)."""
    rows = []
    cpu = find_record(all_records, "MM-CPU", None, width=1024)
    cpu_ms = (cpu.get("time_ms") or {}).get("median") if cpu else None
    chapter_of = {p[2]: p[0] for p in PROGRAMS}
    for label, published, their_speedup, program, variant, size, measure in DOCUMENT_FIGURES:
        if chapters and chapter_of.get(program) not in chapters:
            continue
        r = find_record(all_records, program, variant, **size)
        ours = None
        if r is not None:
            ours = r.get("end_to_end_ms") if measure == "end_to_end_ms" else (r.get("time_ms") or {}).get("median")
        is_cpu = program == "MM-CPU"
        rows.append({"what": label, "document_ms": published, "ours_ms": ours,
                     "measure": "host clock, CPU" if is_cpu else "end to end (malloc + copies + kernel)",
                     "kernel_ms": None if is_cpu or r is None else (r.get("time_ms") or {}).get("median"),
                     "their_speedup": their_speedup,
                     "our_speedup": cpu_ms / ours if their_speedup and cpu_ms and ours else None})
    return rows


def environment():
    env = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "host": platform.node(),
           "cpu": platform.processor() or platform.machine(), "python": platform.python_version()}
    smi = shutil.which("nvidia-smi")
    if smi:
        q = run([smi, "--query-gpu=name,driver_version,compute_cap,memory.total", "--format=csv,noheader"])
        if q.returncode == 0 and q.stdout.strip():
            env["nvidia_smi"] = q.stdout.strip()
            first = [field.strip() for field in env["nvidia_smi"].splitlines()[0].split(",")]
            env["gpu"], env["driver"] = first[0], first[1] if len(first) > 1 else None
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if os.path.exists(nvcc):
        v = run([nvcc, "--version"])
        env["nvcc"] = v.stdout.strip().splitlines()[-1] if v.stdout.strip() else ""
        release = re.search(r"release ([\d.]+)", v.stdout)
        env["cuda_toolkit"] = release[1] if release else None
    env["git_commit"], env["git_dirty"] = project_commit()
    return env


def commit_words(env):
    """'0123456789 (local changes)', '0123456789' or 'unknown', for people."""
    commit = env.get("git_commit") or "unknown"
    return commit if commit == "unknown" else commit[:10] + (" (local changes)" if env.get("git_dirty") else "")


def project_commit():
    """The project's own commit and whether its tree has local changes, from the git checkout
    whose top is the project root; ("unknown", None) anywhere else. A copy of the project inside
    another repository (or with a .git that leads nowhere) must not record that one's commit."""
    top = run(["git", "-C", ROOT, "rev-parse", "--show-toplevel"])
    if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(ROOT):
        return "unknown", None
    head = run(["git", "-C", ROOT, "rev-parse", "HEAD"])
    if head.returncode != 0:
        return "unknown", None
    status = run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
    return head.stdout.strip(), bool(status.stdout.strip()) if status.returncode == 0 else None


def cuda_version(number):
    """The CUDA API's version number (13000) as text (13.0)."""
    return f"{number // 1000}.{number % 1000 // 10}" if number else None


def benchmark_record(env, device, opts, exit_code, failed, runs):
    """What a CI benchmark record needs at the top of results.json: pass or fail, on what."""
    device = device or {}
    return {"schema": "cuda-examples-tour/1", "exit_code": exit_code, "passed": exit_code == 0,
            "failed": [e["program"] for e in failed],
            "skipped": sum(1 for e in runs if e["status"] == "skipped"),
            "gpu": device.get("device") or env.get("gpu"), "driver": env.get("driver"),
            "cuda_driver": cuda_version(device.get("driver_version")),
            "cuda_runtime": cuda_version(device.get("runtime_version")),
            "cuda_toolkit": env.get("cuda_toolkit"), "git_commit": env.get("git_commit"),
            "git_dirty": env.get("git_dirty"), "date": env["date"], "host": env["host"],
            "preset": None if opts.build_dir else opts.preset, "quick": opts.quick,
            "require_gpu": os.environ.get("CUDA_EXAMPLES_REQUIRE_GPU") == "1"}


def plot_interpreter():
    """The Python that can draw: this one, or the project's .venv/ (scripts/setup.sh makes it)."""
    for python in (sys.executable, os.path.join(ROOT, ".venv", "bin", "python")):
        if os.path.exists(python) and run([python, "-c", "import matplotlib"]).returncode == 0:
            return python
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", type=int, action="append", help="run only this chapter (repeatable)")
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--no-build", action="store_true", help="use what is already built")
    parser.add_argument("--preset", default="default",
                        help="the CMake preset to build with, and so its folder (default: 'default', "
                             "build/, the tests' folder too; 'gpu' on a GPU CI runner)")
    parser.add_argument("--build-dir", help="build in this folder instead of the preset's")
    parser.add_argument("--results", help="results folder (default results/<date-time>)")
    opts = parser.parse_args()
    chapters = sorted(set(opts.chapter)) if opts.chapter else None
    if chapters and any(c not in {p[0] for p in PROGRAMS} for c in chapters):
        parser.error(f"--chapter must be one of {sorted({p[0] for p in PROGRAMS})}")

    tour_started = time.time()
    build_dir = opts.build_dir or preset_binary_dir(opts.preset)
    # matplotlib's configuration and font cache (the plots) in the build folder, not in
    # ~/.config/matplotlib and ~/.cache/matplotlib: the tour leaves nothing outside the clone.
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(build_dir, "cache", "matplotlib"))
    selected = [p for p in PROGRAMS if not chapters or p[0] in chapters]
    if not opts.no_build and not build(opts.build_dir, opts.preset):
        return 1
    results = opts.results or os.path.join(ROOT, "results", datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.join(results, "logs"), exist_ok=True)
    run_started = time.time()

    # The ceilings, once per run, on the same device.
    ceilings_bin = os.path.join(build_dir, "ceilings")
    status, seconds, ceiling_records, detail = run_program(
        ceilings_bin, ["--quick"] if opts.quick else [], os.path.join(results, "logs", "ceilings.txt"))
    gpu = status != "skipped"
    ceilings = ceiling_values(ceiling_records)
    no_gpu_reason = detail.split(": ", 1)[-1] if not gpu else ""
    log(wrapped(f"[ceilings] {seconds:5.1f} s  {status if gpu else 'skipped: ' + no_gpu_reason}"))
    if status == "FAIL":
        log(wrapped(f"           {detail}", " " * 11))

    runs = []
    visible = visible_gpus()
    for i, (chapter, folder, program, teaches, args, quick_args, needs_gpu, min_gpus) in enumerate(
            selected, 1):
        binary = os.path.join(build_dir, folder, program)
        use_args = [a.replace("{results}", results) for a in (quick_args if opts.quick else args)]
        name = f"ch{chapter:02d} {program} {' '.join(use_args)}".strip()
        log_name = f"{len(runs) + 1:02d}-{program}.txt"
        if gpu and min_gpus > visible:
            status, seconds, records, detail = "skipped", 0.0, [], \
                f"needs {min_gpus} GPUs, {visible} visible"
        elif not os.path.exists(binary):
            status, seconds, records, detail = "FAIL", 0.0, [], f"not built: {binary}"
        else:
            status, seconds, records, detail = run_program(binary, use_args, os.path.join(results, "logs", log_name))
        shown = status if status != "skipped" else "skipped: " + detail
        if status == "skipped" and detail.split(": ", 1)[-1] == no_gpu_reason:
            # The files keep the whole reason (results.csv, summary.md); the screen has it once,
            # on the ceilings' line.
            detail = no_gpu_reason
            shown = "skipped: no GPU (above)"
        log(progress_line(i, len(selected), name, seconds, shown))
        if status == "FAIL":
            log(wrapped(f"         {detail}", " " * 9))
        runs.append({"chapter": chapter, "program": program, "teaches": teaches, "args": use_args,
                     "status": status, "seconds": seconds, "detail": detail, "records": records,
                     "needs_gpu": needs_gpu, "log": os.path.join("logs", log_name)})
    run_seconds = time.time() - run_started

    rows = summary_rows(runs, ceilings)
    all_records = ceiling_records + [r for e in runs for r in e["records"]]
    doc_rows = document_rows(all_records, chapters)
    env = environment()

    # Report.
    log("\nSummary" + (f" on {ceilings['device']['device']}" if "device" in ceilings else ""))
    if ceilings.get("dram"):
        log(f"measured ceilings: device-to-device copy {ceilings['dram']:.0f} GB/s, cuBLAS FP32 "
            f"{ceilings.get('fp32', 0):.0f} GFLOP/s,\n  pinned host->device {ceilings.get('h2d', 0):.1f} GB/s, "
            f"device->host {ceilings.get('d2h', 0):.1f} GB/s" +
            (f", cuBLAS TF32 {ceilings['tf32']:.0f} and BF16 {ceilings.get('bf16', 0):.0f} GFLOP/s"
             if ceilings.get("tf32") else ""))
    log(table(rows, SCREEN_COLUMNS))
    if doc_rows:
        log("\n" + table(doc_rows, DOC_SCREEN_COLUMNS))
    log("(every column, what each program teaches and each skip's whole reason: summary.md, "
        "results.csv)")
    failed = [e for e in runs if e["status"] == "FAIL"] + ([{"program": "ceilings"}] if status == "FAIL" else [])
    if not gpu:
        failed = [e for e in failed if not e.get("needs_gpu", True) or e.get("detail", "").startswith("not built")]
    exit_code = 1 if failed else 0
    log()
    log(wrapped(f"Ran {len(runs)} programs in {run_seconds:.1f} s (build excluded; "
                f"{time.time() - tour_started:.1f} s in all). Results: {os.path.relpath(results, ROOT)}/"))

    # Files. results.json is the run's record: "record" says pass or fail and on what GPU,
    # driver and CUDA version, so that CI can keep one per run as a benchmark history.
    with open(os.path.join(results, "results.json"), "w") as f:
        json.dump({"record": benchmark_record(env, ceilings.get("device"), opts, exit_code, failed, runs),
                   "environment": env, "ceilings": {k: v for k, v in ceilings.items() if k != "device"},
                   "device": ceilings.get("device"), "runs": runs, "ceiling_records": ceiling_records,
                   "summary": rows, "documents": doc_rows, "run_seconds": run_seconds, "quick": opts.quick},
                  f, indent=1)
    fields = ["chapter", "program", "variant", "teaches", "kernel_ms", "kernel_min_ms", "kernel_max_ms",
              "end_to_end_ms", "rate", "unit", "pct_theoretical_peak", "peak", "ceiling", "pct_measured_ceiling", "check",
              "speedup_vs_cpu", "cpu_ms", "lesson"]
    with open(os.path.join(results, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(results, "summary.md"), "w") as f:
        f.write(f"# Tour results\n\n{env.get('nvidia_smi', 'no GPU')}; {env.get('nvcc', '')}; {env['date']}; "
                f"commit {commit_words(env)}\n\n")
        if not gpu:
            f.write(f"No GPU ran here: {no_gpu_reason}\n\n")
        f.write(markdown(rows, SUMMARY_COLUMNS) + "\n")
        if doc_rows:
            f.write("\n" + markdown(doc_rows, DOC_COLUMNS) + "\n")

    # Pictures, with whichever Python has matplotlib: this one or the project's .venv/.
    python = plot_interpreter() if gpu else None
    if not gpu:
        log("No plots: they draw GPU measurements (speedups, roofline, transfers, timeline),\n"
            "  and no GPU ran here; what was measured is in the files")
    elif python is None:
        log(wrapped(f"No plots: matplotlib is installed neither for {sys.executable} nor in .venv/ "
                    "(scripts/setup.sh examples installs it into .venv/ unless "
                    "CUDA_EXAMPLES_NO_INSTALL=1)"))
    else:
        plot = run([python, os.path.join(ROOT, "scripts", "plot_results.py"), results])
        if plot.returncode == 0:
            drawn = [os.path.basename(l) for l in plot.stdout.split() if l.endswith(".png")]
            log("Plots: " + (", ".join(drawn) if drawn else "none (nothing measured to draw)"))
        else:
            log(wrapped("No plots: " + (plot.stderr.strip() or plot.stdout.strip())))

    log(wrapped(f"Recorded: commit {commit_words(env)}, {results}/results.json"))
    if not gpu:
        log(wrapped(f"GPU rows are skipped, which is not a failure: {no_gpu_reason}"))
        log(no_gpu_advice())
    if failed:
        log("FAILED: " + ", ".join(e["program"] for e in failed))
    return exit_code


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Which thread touches which element: a trace of a program's own kernel, and its picture.

    scripts/trace_kernel.py PROGRAM [--out DIR] [--plant BUG] [-- ARGS...]
        records every memory access of PROGRAM's kernel (one launch) at the size ARGS give
        (default: the first `run:` line of its trace patch), on the GPU, prints a summary
        (accesses per array; sectors or bank passes per warp request) and draws it:
        DIR/PROGRAM.csv (one row per access) and DIR/PROGRAM.png (default DIR: trace-out/).
        --plant applies a planted bug first: a file of tests/mutants/, or a .bug file of
        tools/trace/patches/ (a bug only a trace shows). This script's options go before
        `--` (before or after PROGRAM); the program's own after it. Programs with a trace
        patch: VA-GPU-11, VA-GPU-N1, VA-GPU-NN, reduction, Dot-SM-Warp, stencil_1d, MM-GPU-GM,
        MM-GPU-SM, MM-GPU-RT, MM-GPU-WGMMA, ray, ray_noconst, ring_allreduce (2 GPUs or
        more: skipped, exit 77, on fewer). Example:
            scripts/trace_kernel.py VA-GPU-NN --out trace-out -- --n 24 --blocks 3 --threads 4

    scripts/trace_kernel.py list                       the traces, their checks and the pictures
    scripts/trace_kernel.py record DIR [NAME...]       (GPU) the handouts' traces, DIR/NAME.csv.gz
    scripts/trace_kernel.py draw [--traces DIR]        the handouts' pictures, from the committed traces
    scripts/trace_kernel.py check [--traces DIR]       the lessons the committed traces prove, and every
                                                picture drawn from the traces as they are now
    scripts/trace_kernel.py test                       (GPU) record every trace afresh and check it

How it works, and why this way: the program a student reads is never changed. A trace patch
(tools/trace/patches/CHAPTER/PROGRAM.trace, in the planted-bug format of tests/mutants/README.md,
read by the same code) adds tools/trace/trace.cuh and one recording call before each access to
a copy of the program, and brackets the kernel's first launch with trace_begin()/trace_end().
The copy is built with the program's own standalone nvcc line and run; the recorder writes one
row per access (block, thread, warp, lane, source line, step, array, index, byte address).
A patch in the planted-bug format applies to the program's text exactly once or fails, naming
the block, so a trace can never silently describe an older kernel; and a planted bug from
tests/mutants/ can be applied first, to show the pattern the checks catch.

The handouts' traces live in docs/runs/h200/traces/ with the pictures drawn from them; each
picture keeps its traces' sha256 (a PNG text field), and `check` (run by scripts/docs.py
check) fails when a trace changed without its picture. Exit status: 0 done, 1 a build, run or
check failed, 2 bad usage, 77 no GPU (record, test, PROGRAM).
"""
import argparse
import gzip
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "mutants"))
sys.path.insert(0, str(REPO / "tools" / "trace"))
import mutant  # noqa: E402
import pictures  # noqa: E402
import tracelib  # noqa: E402

PATCHES = REPO / "tools" / "trace" / "patches"
TRACES = REPO / "docs" / "runs" / "h200" / "traces"
TRACE_KEYS = ("program", "source", "what", "bug")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_DEVICE = 0, 1, 2, 77

# What `scripts/trace_kernel.py PROGRAM` draws: (drawing, its arguments)
STUDENT_PICTURE = {
    "VA-GPU-11": ("index_map", {"array": "c", "columns": 8}),
    "VA-GPU-N1": ("index_map", {"array": "c", "columns": 10}),
    "VA-GPU-NN": ("index_map", {"array": "c", "columns": 10}),
    "reduction": ("tree_steps", {"array": "cache"}),
    "stencil_1d": ("halo", {"shared": "temp", "source": "in", "block": -1}),
    "MM-GPU-GM": ("warp_sectors", {"panels": [["MM-GPU-GM", "M"], ["MM-GPU-GM", "N"]]}),
    "MM-GPU-SM": ("tile_phases", {"block": (0, 0)}),
    "MM-GPU-RT": ("owner_map", {"array": "P", "block": (0, 0), "threads": [0, 1]}),
    "MM-GPU-WGMMA": ("swizzle", {"array": "A"}),
    "Dot-SM-Warp": ("shuffle_rounds", {"array": "v", "block": 0, "warp": 0}),
    "ray": ("lane_steps", {"array": "s"}),
    "ray_noconst": ("lane_steps", {"array": "s"}),
    "ring_allreduce": ("ring_steps", {}),
}


def parse_patch(path):
    """A trace patch, read by the planted bugs' own reader (tests/mutants/mutant.py)."""
    fields, i, lines = mutant.read_fields(path, TRACE_KEYS, repeated=("run",))
    for key in ("program", "what"):
        if key not in fields:
            raise mutant.MutantError(f"{path}: missing '{key}:'")
    m = dict(fields, path=Path(path), runs=fields.pop("run"), chapter=Path(path).parent.name)
    m.setdefault("source", f"{m['chapter']}/{m['program']}.cu")
    m["patches"] = mutant.read_patch(path, lines, i)
    if not m["patches"]:
        raise mutant.MutantError(f"{path}: no '@@ find' / '@@ replace' pair")
    return m


def patch_of(program):
    found = sorted(PATCHES.glob(f"*/{program}.trace"))
    if not found:
        known = sorted(p.name[:-len(".trace")] for p in PATCHES.glob("*/*.trace") if
                       p.name.count(".") == 1)
        raise SystemExit(f"trace: no trace patch for {program!r} (known: {', '.join(known)})")
    return found[0]


def build(patch, plant, workdir, arch):
    """The traced copy: common/, the chapter and tools/trace/ under WORKDIR/tree, the source
    with the planted bug (when named) and then the trace patch; built with the program's own
    standalone nvcc line. Returns the executable's path; raises RuntimeError on failure."""
    m = parse_patch(patch)
    text = None
    if plant:  # a .bug file of tools/trace/patches/ (a trace patch's format) or a .mutant
        text = mutant.patched_text(parse_patch(PATCHES / plant) if plant.endswith(".bug")
                                   else mutant.parse(REPO / "tests" / "mutants" / plant))
    text = mutant.patched_text(m, text)
    tree = Path(workdir) / "tree"
    for part in ("common", m["chapter"], "tools/trace"):
        shutil.copytree(REPO / part, tree / part, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.png", "*.csv*"))
    (tree / m["source"]).write_text(text)
    line = mutant.standalone_line(REPO / m["source"])
    exe = Path(workdir) / (m["program"] + ".traced")
    out = line.index("-o")
    line[out + 1] = str(exe)
    number = mutant.arch_flags(arch)
    if not any(w.startswith("-arch") for w in line):  # a line naming its target keeps it (sm_90a)
        line += number if number else (["-arch=native"] if arch == "native" else [])
    cwd = (tree / m["source"]).parent
    done = subprocess.run(line, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(line)} (in {cwd}) failed:\n{done.stdout}{done.stderr}")
    return exe


def gpu_or_exit():
    ok, why = mutant.gpu_visible()
    if not ok:
        print(f"skipped: {why}")
        sys.exit(EXIT_NO_DEVICE)


def run_traced(exe, args, csv_path, env=None, bug=False, folder=None):
    """Runs the traced copy in FOLDER (default: its own); returns its output. A program with a
    planted bug may say FAIL (exit 1); the trace must be written either way."""
    written = Path(folder or Path(exe).parent) / "trace.csv"  # the log names no path
    environment = dict(os.environ, TRACE_CSV=written.name, **(env or {}))
    for old in (csv_path, written):
        if os.path.exists(old):
            os.remove(old)
    done = subprocess.run([str(exe)] + shlex.split(args), capture_output=True, text=True,
                          env=environment, timeout=300, cwd=written.parent)
    output = done.stdout + done.stderr
    if done.returncode == EXIT_NO_DEVICE:  # e.g. the ring: "needs 2 GPUs, 1 visible (skipped)"
        raise ProgramSkipped(output.strip().splitlines()[-1] if output.strip() else "exit 77")
    if written.exists():
        shutil.move(written, csv_path)
    if not os.path.exists(csv_path):
        raise RuntimeError(f"{exe.name} {args}: exit {done.returncode}, no trace\n{output}")
    if done.returncode != 0 and not bug:
        raise ProgramFailed(output, done.returncode)
    return output


class ProgramSkipped(Exception):
    """The traced copy exited 77: this machine lacks what it needs (a GPU, or a second one)."""


class ProgramFailed(Exception):
    """The traced copy of an unpatched program wrote its trace but did not exit 0."""


def compressed(csv_path, gz_path):
    """The CSV gzip-compressed without a file name or time in its header (same text, same file)."""
    data = Path(csv_path).read_bytes()
    with open(gz_path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="",
                                                   mtime=0, compresslevel=9) as f:
        f.write(data)


# ---- the handouts' traces ----------------------------------------------------------------------

def cmd_record(out, names, arch, skipped=None):
    """Records NAMES (default: all) into OUT; a trace whose program exits 77 (the ring on a
    machine with one GPU) is skipped with the program's reason, added to SKIPPED."""
    gpu_or_exit()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = names or list(pictures.TRACES)
    unknown = [n for n in names if n not in pictures.TRACES]
    if unknown:
        print(f"trace: unknown trace(s) {', '.join(unknown)}", file=sys.stderr)
        return EXIT_USAGE
    work = Path(tempfile.mkdtemp(prefix="trace-"))
    of_build = {}  # (patch, plant) -> the traces recorded with that traced copy, in order
    for n in names:
        spec = pictures.TRACES[n]
        of_build.setdefault((spec["patch"], spec.get("plant")), []).append(n)

    def build_and_run(k, key):
        """One traced copy built, then each of its traces run, each in a folder of its own: a
        traced run is not timed, so the copies' builds and runs overlap (trace.gpu in command
        2 ran its 25 traces one after another, after all 20 builds)."""
        try:
            exe = build(PATCHES / key[0], key[1], work / f"build{k}", arch)
        except (RuntimeError, mutant.MutantError) as e:
            return {"build": e}
        ran = {}
        for n in of_build[key]:
            spec, folder = pictures.TRACES[n], work / f"run-{n}"
            folder.mkdir()
            try:
                ran[n] = ("ok", run_traced(exe, spec["args"], work / f"{n}.csv", spec.get("env"),
                                           bug=bool(spec.get("plant") or spec.get("bug")),
                                           folder=folder), exe)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                ran[n] = ("error", e, exe)
            except ProgramSkipped as e:
                ran[n] = ("skipped", e, exe)
            except ProgramFailed as e:  # kept, to see why, but the record fails
                ran[n] = ("failed", e, exe)
        return ran

    failed = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = [pool.submit(build_and_run, k, key) for k, key in enumerate(of_build)]
        done = {key: f.result() for key, f in zip(of_build, futures)}
    for key, ran in done.items():
        if "build" in ran:
            print(f"trace: build of {key[0]} {key[1] or ''} failed: {ran['build']}", file=sys.stderr)
            failed += 1
    for n in names:
        spec = pictures.TRACES[n]
        ran = done[(spec["patch"], spec.get("plant"))]
        if n not in ran:
            continue
        how, output, exe = ran[n]
        if how == "error":
            print(f"trace: {n}: {output}", file=sys.stderr)
            failed += 1
            continue
        if how == "skipped":
            print(f"trace: {n}: skipped: {output}")
            if skipped is not None:
                skipped.add(n)
            continue
        if how == "failed":
            output, rc = output.args
            print(f"trace: {n}: the traced program exited {rc}:\n{output}", file=sys.stderr)
            failed += 1
        compressed(work / f"{n}.csv", out / f"{n}.csv.gz")
        (out / f"{n}.log").write_text(f"$ {exe.name} {spec['args']}\n{output}")
        print(f"trace: {n}: {out / (n + '.csv.gz')}")
    shutil.rmtree(work, ignore_errors=True)
    return EXIT_FAILED if failed else EXIT_OK


def lesson_results(folder, skip=()):
    """[(trace, check, expected, passed, what)] for every check of pictures.CHECKS (but the
    traces SKIP names: not recorded on this machine)."""
    results = []
    for name, checks in pictures.CHECKS.items():
        if name in skip:
            continue
        path = Path(folder) / f"{name}.csv.gz"
        if not path.exists():
            results.append((name, "-", True, False, f"no trace {path}"))
            continue
        rows = tracelib.load(path)
        for check, args, expected in checks:
            passed, what = tracelib.CHECKS[check](rows, *args)
            results.append((name, check, expected, passed, what))
    return results


def report_lessons(results):
    bad = 0
    for name, check, expected, passed, what in results:
        ok = passed == expected
        bad += not ok
        verdict = ("holds" if passed else "caught") if ok else (
            "FAILED" if expected else "NOT CAUGHT")
        print(f"  {verdict:10} {name:34} {check:18} {what}")
    return bad


# ---- the pictures ------------------------------------------------------------------------------

def draw_one(kind, traces, kwargs, titles, png, source=None):
    import draw
    fig = draw.KINDS[kind](traces, titles=titles, **kwargs)
    metadata = {"Software": None}
    if source:
        metadata["Description"] = f"drawn by scripts/trace_kernel.py from traces: {source}"
    fig.savefig(png, dpi=110, metadata=metadata)
    import matplotlib.pyplot as plt
    plt.close(fig)


def cmd_draw(folder):
    folder = Path(folder)
    for p in pictures.PICTURES:
        traces = [(n, tracelib.load(folder / f"{n}.csv.gz")) for n in p["traces"]]
        draw_one(p["kind"], traces, p.get("args", {}), p["titles"], folder / p["png"],
                 tracelib.stamp(p["traces"], folder))
        print(f"trace: drew {folder / p['png']}")
    return EXIT_OK


def cmd_check(folder):
    print("trace: the lessons the committed traces prove")
    bad = report_lessons(lesson_results(folder))
    stale = tracelib.stale_pictures(folder, pictures.PICTURES)
    for s in stale:
        print(f"  STALE      {s}")
    print(f"trace: {bad} lesson(s) wrong, {len(stale)} picture(s) stale")
    return EXIT_FAILED if bad or stale else EXIT_OK


def cmd_test(arch):
    gpu_or_exit()
    with tempfile.TemporaryDirectory(prefix="trace-test-") as folder:
        skipped = set()
        if cmd_record(folder, [], arch, skipped) != EXIT_OK:
            return EXIT_FAILED
        print("trace: the lessons, on traces recorded now")
        bad = report_lessons(lesson_results(folder, skipped))
        for name in sorted(skipped):
            print(f"  skipped    {name}: not recorded on this machine (above: why)")
        return EXIT_FAILED if bad else EXIT_OK


def cmd_list():
    print("traces (scripts/trace_kernel.py record):")
    for name, spec in pictures.TRACES.items():
        plant = f" + planted bug {spec['plant']}" if spec.get("plant") else ""
        print(f"  {name:34} {spec['patch']}{plant} -- {spec['args']}")
    print("pictures (scripts/trace_kernel.py draw):")
    for p in pictures.PICTURES:
        print(f"  {p['png']:30} {p['kind']:13} {', '.join(p['traces'])}")
    return EXIT_OK


def cmd_program(program, args, out, arch, plant=None):
    patch = patch_of(program)
    m = parse_patch(patch)
    args = " ".join(shlex.quote(a) for a in args) if args else (m["runs"] or [""])[0]
    gpu_or_exit()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="trace-") as work:
        try:
            exe = build(patch, plant, work, arch)
            csv_path = out / f"{program}.csv"
            output = run_traced(exe, args, csv_path, bug=bool(plant))
        except ProgramSkipped as e:
            print(f"skipped: {e}")
            return EXIT_NO_DEVICE
        except ProgramFailed as e:
            print(f"trace: the traced program exited {e.args[1]}:\n{e.args[0]}", file=sys.stderr)
            return EXIT_FAILED
        except (RuntimeError, mutant.MutantError, subprocess.TimeoutExpired) as e:
            print(f"trace: {e}", file=sys.stderr)
            return EXIT_FAILED
    print(output.rstrip())
    png = out / f"{program}.png"
    for line in student_picture(program, args, tracelib.load(csv_path), png):
        print(line)
    print(f"trace: {png}")
    return EXIT_OK


def student_picture(program, args, rows, png):
    """PROGRAM's picture of its trace ROWS (run with ARGS, a command line) drawn into PNG (None:
    not drawn), and the summary lines printed beside it (the course server draws a student's
    trace with it)."""
    kind, kwargs = STUDENT_PICTURE[program]
    lines = []
    if kind == "swizzle":  # the trace's reads are the read-back, not the kernel's: the layout
        lines.append("  " + tracelib.check_swizzle(rows, kwargs["array"])[1])
    elif kind == "ring_steps":  # N: the vector's length, from its last element touched
        kwargs = dict(kwargs, n=max(r["index"] for r in rows if r["array"] == "data") + 1)
        lines.append("  " + tracelib.check_ring(rows, kwargs["n"])[1])
    else:
        lines += summary(rows)
    if kind == "index_map" and "--n" in shlex.split(args):  # the length, unwritten ones too
        words = shlex.split(args)
        if words.index("--n") + 1 < len(words) and words[words.index("--n") + 1].isdigit():
            kwargs = dict(kwargs, count=int(words[words.index("--n") + 1]))
            lines.append("  " + tracelib.check_written_once(rows, kwargs["array"], kwargs["count"])[1])
    if kind in ("tile_phases", "owner_map"):  # the matrices' width, from P's last element
        kwargs = dict(kwargs, width=int(max(r["index"] for r in rows if r["array"] == "P") ** 0.5) + 1)
    if png is not None:
        draw_one(kind, [(program, rows)], kwargs, [f"{program} {args}"] * 2, png)
    return lines


def summary(rows):
    """What the trace holds, per array: accesses, and per warp request sectors or bank passes
    (the lines)."""
    lines = []
    arrays = sorted({(r["array"], r["space"], r["rw"]) for r in rows})
    for array, space, rw in arrays:
        mine = [r for r in rows if (r["array"], r["space"], r["rw"]) == (array, space, rw)]
        reqs = [q for q in tracelib.requests(mine).values()]
        if space == "shared":
            counts = sorted({tracelib.bank_ways(q) for q in reqs})
            detail = f"bank passes per warp request: {', '.join(map(str, counts))}"
        elif space == "register":
            counts = sorted({len({r["index"] for r in q}) for q in reqs})
            detail = f"lanes read from per shuffle: {', '.join(map(str, counts))}"
        else:  # global, constant: the 32-byte sectors, and the different addresses
            counts = sorted({len(tracelib.sectors(q)) for q in reqs})
            detail = f"sectors per warp request: {', '.join(map(str, counts))}"
            if space == "constant":
                counts = sorted({len({r["byte"] for r in q}) for q in reqs})
                detail += f"; different addresses: {', '.join(map(str, counts))}"
        lines.append(f"  {array:8} {space:6} {'read' if rw == 'R' else 'write':5} {len(mine):7} "
                     f"accesses, {len(reqs)} warp requests; {detail}")
    return lines


OWN_OPTIONS = ("--out", "--arch", "--plant")


def student_command(argv):
    """`trace_kernel.py [OPTIONS] PROGRAM [OPTIONS] [-- ARGS]`: this script's options go before
    `--` (before or after PROGRAM), the program's own after it. One of ours after `--` is a
    mistake the program would only reject as an unknown option: say where it goes."""
    ours, theirs = argv, []
    if "--" in argv:  # what follows "--" is the program's own command line
        ours, theirs = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    misplaced = [a for a in theirs if a.split("=")[0] in OWN_OPTIONS]
    if misplaced:
        print(f"trace: {misplaced[0].split('=')[0]} is an option of trace_kernel.py, not of the "
              "program: put it before `--`, e.g. scripts/trace_kernel.py PROGRAM "
              f"{misplaced[0].split('=')[0]} ... -- ARGS", file=sys.stderr)
        return EXIT_USAGE
    parser = argparse.ArgumentParser(prog="trace_kernel.py", usage="%(prog)s [--out DIR] "
                                     "[--arch ARCH] [--plant MUTANT] PROGRAM [-- PROGRAM'S "
                                     "OPTIONS]")
    parser.add_argument("program")
    parser.add_argument("--out", default="trace-out")
    parser.add_argument("--arch", default=os.environ.get("CUDAARCHS", "native"))
    parser.add_argument("--plant", help="a planted bug to apply first: a file of tests/mutants/ "
                        "(e.g. ch02_vector_add/VA-GPU-NN.document_block_index.mutant) or a "
                        ".bug file of tools/trace/patches/")
    opts = parser.parse_args(ours)
    return cmd_program(opts.program, theirs, opts.out, opts.arch, opts.plant)


def main():
    commands = ("list", "record", "draw", "check", "test")
    words = [a for a in sys.argv[1:sys.argv.index("--") if "--" in sys.argv else None]
             if not a.startswith("-")]
    # the student's command: its first word that is not an option (nor an option's value)
    values = {sys.argv[k + 1] for k, a in enumerate(sys.argv[:-1])
              if a in OWN_OPTIONS + ("--traces",)}
    first = next((w for w in words if w not in values), None)
    if first is not None and first not in commands:
        return student_command(sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["list", "record", "draw", "check", "test"])
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--traces", default=str(TRACES))
    parser.add_argument("--arch", default=os.environ.get("CUDAARCHS", "native"))
    opts = parser.parse_args()
    if opts.command == "list":
        return cmd_list()
    if opts.command == "record":
        if not opts.rest:
            parser.error("record needs the folder to write the traces to")
        return cmd_record(opts.rest[0], opts.rest[1:], opts.arch)
    if opts.command == "draw":
        return cmd_draw(opts.traces)
    if opts.command == "check":
        return cmd_check(opts.traces)
    return cmd_test(opts.arch)


if __name__ == "__main__":
    sys.exit(main())

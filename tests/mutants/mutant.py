#!/usr/bin/env python3
"""Planted bugs: plant one in a copy of a program, and show that a check catches it.

The build compiles each planted bug as an ordinary target (tests/mutants/CMakeLists.txt): `tree`
writes the patched copy, CMake builds it with the real program's flags and architectures. ctest
then only runs them:

    mutant.py plan    MUTANT...                       the fields CMake needs, one line per file
    mutant.py tree    MUTANT --out DIR                the patched copy of the sources (a build step)
    mutant.py apply   MUTANT... [--build DIR]         each patch applies (a quick check, no compiling)
    mutant.py control MUTANT... --json FILE [binaries]  the same checks on the unpatched programs
    mutant.py caught  MUTANT --control FILE [binaries]  every check named in `expect:` catches it
    mutant.py table   DIR                             planted bug x who caught it, from the last run

A catch counts only against a control: the same check, built the same way, must pass on the
unpatched program in the same run (ctest runs `control` first, as a fixture). A program built
for architectures this GPU cannot run is refused with the reason, never counted as caught.
The file format and what "caught" means are in tests/mutants/README.md. Exit codes follow
the suite's: 0 done (caught / control passed), 1 the patch failed, the bug survived, the control
failed or cannot run here, 2 a malformed mutant file, 77 no GPU to run it on (ctest: skipped).
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKS = ("verdict", "lesson", "gtest", "window", "racecheck", "synccheck", "memcheck", "counters",
          "clock")
SANITIZERS = ("racecheck", "synccheck", "memcheck")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_DEVICE = 0, 1, 2, 77
JOBS = 4  # check runs side by side within one control or one planted bug
COUNTERS = REPO / "tests" / "counters" / "counters.py"  # the counters checks (its README)
CLOCK = REPO / "tests" / "clock" / "clock.py"  # the independent clock (its README)


class MutantError(Exception):
    """A mutant file that cannot be read, or a patch that no longer applies."""


def read_fields(path, keys, repeated=(), flags=()):
    """The 'key: value' lines before a file's first '@@' (and '#' comments, blank lines), the
    format shared by planted bugs and exercises (tests/exercises/). Returns (fields, index of
    the first '@@' line, lines): a key in `repeated` gives a list of its values in order, one
    in `flags` (a line holding only the word) True. Raises MutantError at the first line at
    fault."""
    fields = {k: [] for k in repeated}
    fields.update({k: False for k in flags})
    lines = Path(path).read_text().split("\n")
    i = 0
    while i < len(lines) and not lines[i].startswith("@@"):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line in flags:
            fields[line] = True
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise MutantError(f"{path}:{i}: expected 'key: value', got {line!r}")
        key, value = key.strip(), value.strip()
        if key in repeated:
            fields[key].append(value)
        elif key in keys:
            fields[key] = value
        else:
            raise MutantError(f"{path}:{i}: unknown key {key!r}")
    return fields, i, lines


def read_patch(path, lines, i):
    """The patch from line i on: '@@ find' / '@@ replace' pairs, closed by '@@ end'. A file
    with no '@@' line at all gives no patch ([]); one that opens a patch must close it."""
    patches = []
    if i >= len(lines):
        return patches
    block, find, text = None, None, []
    for n, line in enumerate(lines[i:], start=i + 1):
        if line.startswith("@@"):
            marker = line[2:].strip()
            if block == "find":
                find = "\n".join(text)
            elif block == "replace":
                patches.append((find, "\n".join(text)))
            if marker not in ("find", "replace", "end"):
                raise MutantError(f"{path}:{n}: unknown marker {line!r}")
            if marker == "replace" and block != "find":
                raise MutantError(f"{path}:{n}: '@@ replace' must follow '@@ find'")
            if marker == "end":
                break
            block, text = marker, []
        else:
            text.append(line)
    else:
        raise MutantError(f"{path}: no '@@ end'")
    if not patches:
        raise MutantError(f"{path}: no '@@ find' / '@@ replace' pair")
    return patches


def parse(path):
    """Reads a .mutant file into a dict; raises MutantError with the line at fault."""
    fields, i, lines = read_fields(
        path, ("program", "source", "bug", "expect", "gtest", "gtest-filter", "sanitize",
               "counters", "clock"),
        repeated=("run",), flags=("no-default-run", "alone"))
    m = {"path": Path(path), "runs": fields.pop("run"), "patches": [],
         "no_default_run": fields.pop("no-default-run"), "alone": fields.pop("alone")}
    m.update(fields)
    m["chapter"] = Path(path).parent.name
    m["name"] = Path(path).name[: -len(".mutant")]
    for key in ("program", "bug", "expect"):
        if key not in m:
            raise MutantError(f"{path}: missing '{key}:'")
    m["expect"] = m["expect"].split()
    for check in m["expect"]:
        if check not in CHECKS:
            raise MutantError(f"{path}: unknown check {check!r} (known: {', '.join(CHECKS)})")
    m.setdefault("source", f"{m['chapter']}/{m['program']}.cu")
    m.setdefault("gtest", f"test_{m['program']}")
    if m["source"].startswith("tests/"):
        raise MutantError(f"{path}: a planted bug goes into a program, never into tests/")
    m["patches"] = read_patch(path, lines, i)
    if not m["patches"]:
        raise MutantError(f"{path}: no '@@ find' / '@@ replace' pair")
    return m


def standalone_line(source):
    """The '//   nvcc ...' line in the first 40 lines of a program, as a list of words
    (scripts/lab.py builds a student's files with it)."""
    with open(source) as f:
        for _, line in zip(range(40), f):
            hit = re.match(r"^//\s+(nvcc .*)$", line.rstrip("\n"))
            if hit:
                return shlex.split(hit.group(1))
    raise MutantError(f"{source}: no '//   nvcc ...' line in its header comment")


def arch_flags(arch):
    """'90-real' or '90' -> -arch=sm_90; anything else (native, all, empty): nvcc's default
    (scripts/lab.py; the planted bugs take the real targets' architectures instead)."""
    first = re.split(r"[;,]", arch or "")[0]
    number = re.match(r"^(\d+)", first)
    return [f"-arch=sm_{number.group(1)}"] if number else []


# ---- the patched tree (a build step) ------------------------------------------------------

SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".c", ".inc")


def patched_text(m, text=None):
    """The patched file's text (of TEXT, when given, in place of the source's: a trace patch
    goes on top of a planted bug, scripts/trace_kernel.py); raises MutantError when a find block does
    not match once."""
    original = REPO / m["source"]
    if text is None and not original.is_file():
        raise MutantError(f"{m['path']}: source {m['source']} does not exist")
    text = original.read_text() if text is None else text
    for find, replace in m["patches"]:
        count = text.count(find)
        if count != 1:
            where = "is not in" if count == 0 else f"occurs {count} times in"
            raise MutantError(f"{m['path']}: the find block {where} {m['source']} "
                              f"(the program changed: update the mutant):\n{find}")
        text = text.replace(find, replace)
    return text


def write_if_different(path, data):
    """Writes only a changed file, so that the build recompiles only what a change touches."""
    path = Path(path)
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def cmd_tree(m, out, also):
    """A copy of common/, the chapter, its tests and the shared test headers, with the bug
    planted, under OUT. Everything a compile includes lies inside the copy, so the patched file
    is the only one of its name that the program and its GoogleTest binary see."""
    out = Path(out)
    files = []
    for part in ("common", m["chapter"], f"tests/{m['chapter']}"):
        files += [f for f in sorted((REPO / part).rglob("*"))
                  if f.is_file() and f.suffix in SOURCE_SUFFIXES]
    files += sorted((REPO / "tests").glob("*.h"))
    files += [REPO / a for a in also + [m["source"]]]
    text = patched_text(m)
    for f in files:
        rel = f.relative_to(REPO).as_posix()
        data = text.encode() if rel == m["source"] else f.read_bytes()
        write_if_different(out / rel, data)
    return EXIT_OK


def cmd_plan(paths):
    """One line per mutant for CMake: name|chapter|program|source|gtest|expect (comma-separated,
    with "alone" added for a planted bug that needs the GPU to itself). The patch itself is
    checked here too, so that a stale one stops the configure step."""
    for path in paths:
        m = parse(path)
        patched_text(m)
        if "counters" in m["expect"]:
            counters_checks(m)  # each name it runs is a check of its program
        if "clock" in m["expect"]:
            clock_runs(m)  # each name it runs is a run of its program in tests/clock/runs.json
        print("|".join([m["name"], m["chapter"], m["program"], m["source"], m["gtest"],
                        ",".join(m["expect"] + (["alone"] if m["alone"] else []))]))
    return EXIT_OK


def cmd_apply(paths):
    failed = 0
    for path in paths:
        try:
            patched_text(parse(path))
        except MutantError as e:
            print(f"mutant.py: {e}")
            failed += 1
    print(f"mutant.py apply: {len(paths) - failed} of {len(paths)} patches apply")
    return EXIT_FAILED if failed else EXIT_OK


# ---- running the checks ------------------------------------------------------------------

def run(words, timeout, env=None):
    """Runs a command; returns (exit code or 'timeout', output)."""
    try:
        r = subprocess.run(words, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout, env=env)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out


def last_lines(text, n=6):
    return "\n".join("    " + line for line in text.strip().split("\n")[-n:])


def configs(m):
    """The check runs of one planted bug: each is one command on one binary, and the control
    runs exactly the same command on the unpatched binary."""
    out = []
    for check in m["expect"]:
        if check in ("verdict", "lesson"):
            for line in ([] if m["no_default_run"] else [""]) + m["runs"]:
                out.append({"check": check, "binary": "program", "args": line})
                if m["alone"] and check == "verdict":  # a rate: run alone, as a lesson is
                    out[-1]["alone"] = True
        elif check == "gtest":
            out.append({"check": "gtest", "binary": m["gtest"], "args": m.get("gtest-filter", "")})
        elif check == "window":
            out.append({"check": "window", "binary": "program", "args": ""})
        elif check == "counters":
            for name in counters_checks(m):
                out.append({"check": "counters", "binary": "program", "args": name})
        elif check == "clock":
            for name in clock_runs(m):
                out.append({"check": "clock", "binary": "program", "args": name})
        else:
            out.append({"check": check, "binary": "program", "args": m.get("sanitize", "")})
    return out


def counters_checks(m):
    """The counters checks (tests/counters/checks.json) a planted bug runs: those `counters:`
    names, or else every check of its program."""
    checks = json.loads((COUNTERS.parent / "checks.json").read_text())["checks"]
    names = [c["name"] for c in checks if c["program"] == m["program"]]
    wanted = m.get("counters", "").split() or names
    for name in wanted:
        if name not in names:
            raise MutantError(f"{m['path']}: no counters check {name!r} of {m['program']} in "
                              f"tests/counters/checks.json (its checks: {', '.join(names) or 'none'})")
    if not wanted:
        raise MutantError(f"{m['path']}: expect: counters, but tests/counters/checks.json has no "
                          f"check of {m['program']}")
    return wanted


def clock_runs(m):
    """The clock's runs (tests/clock/runs.json) a planted bug runs: its `clock:` names."""
    runs = json.loads((CLOCK.parent / "runs.json").read_text())["runs"]
    names = [r["name"] for r in runs if r["program"] == m["program"]]
    wanted = m.get("clock", "").split()
    if not wanted:
        raise MutantError(f"{m['path']}: expect: clock, but no 'clock:' line names its runs "
                          f"(of {m['program']}: {', '.join(names) or 'none'})")
    for name in wanted:
        if name not in names:
            raise MutantError(f"{m['path']}: no clock run {name!r} of {m['program']} in "
                              f"tests/clock/runs.json (its runs: {', '.join(names) or 'none'})")
    return wanted


def execute_all(args, configs, binaries, control=False):
    """Runs checks, results in order: side by side, except the timings (lesson checks, and the
    verdicts of a planted bug marked alone), which run afterwards one at a time with the GPU to
    themselves. A counters check reads device-wide counters (DRAM bytes): it runs alone too."""
    timing = lambda c: c["check"] in ("lesson", "counters", "clock") or c.get("alone", False)  # noqa: E731
    results = [None] * len(configs)
    shared = [i for i, c in enumerate(configs) if not timing(c)]
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        for i, r in zip(shared, pool.map(lambda i: execute(args, configs[i], binaries, control),
                                         shared)):
            results[i] = r
    for i, c in enumerate(configs):
        if timing(c):
            results[i] = execute(args, c, binaries, control)
    return results


def took(result):
    """' (12.3 s)': how long a check ran, so that a slow planted bug or control shows why."""
    return f" ({result['seconds']} s)" if "seconds" in result else ""


def key(config):
    return json.dumps(config, sort_keys=True)


def describe(config):
    what = config["args"] or "(default size)"
    if config["check"] == "gtest":
        what = config["binary"] + (f" --gtest_filter={config['args']}" if config["args"] else "")
    return f"{config['check']} {what}"


def execute(args, config, binaries, control=False):
    """Runs one check; returns a dict: status 'clean' (what the unpatched program must give),
    'caught' (what the planted bug must give), 'other' (neither), 'no-device' (exit 77), with
    the exit code and what the program said."""
    check, binary = config["check"], binaries.get(config["binary"])
    if binary is None or not Path(binary).is_file():
        return {"status": "missing", "said": f"{config['binary']} was not built ({binary})"}
    if check == "gtest":
        words = [binary] + ([f"--gtest_filter={config['args']}"] if config["args"] else [])
        if not control:
            words.append("--gtest_fail_fast")  # one failed test is a catch: no need for the rest
    elif check == "window":
        words = [sys.executable, str(REPO / "tests" / "ch05_raytrace" / "window_ray.py"), binary,
                 str(Path(binary).parent / "window")]
    elif check == "counters":
        words = [sys.executable, str(COUNTERS), "run", config["args"], "--program", binary]
    elif check == "clock":
        words = [sys.executable, str(CLOCK), "run", config["args"], "--program", binary]
    elif check in SANITIZERS:
        if not args.sanitizer:
            return {"status": "missing", "said": "compute-sanitizer was not found"}
        words = [args.sanitizer, "--tool", check, binary] + shlex.split(config["args"])
    else:
        words = [binary] + shlex.split(config["args"])
    timeout = max(args.timeout, 900) if check in SANITIZERS else args.timeout
    # A lesson is a timing: only a lesson check, run alone, may fail on one; every other check
    # shares the GPU with its neighbours, so the program only reports its lessons there.
    # Under CUDA_EXAMPLES_LESSONS=report (scripts/test.sh's side-by-side pass, which may start a
    # control as a fixture) no check enforces a lesson.
    shared = check != "lesson" or os.environ.get("CUDA_EXAMPLES_LESSONS") == "report"
    env = dict(os.environ, CUDA_EXAMPLES_LESSONS="report" if shared else "enforce")
    start = time.monotonic()
    rc, out = run(words, timeout, env)
    result = {"exit": rc, "output": last_lines(out), "seconds": round(time.monotonic() - start, 1)}
    if check == "counters":
        # 0: the claim agrees with the counters; 1 with "COUNTED OTHERWISE": it does not (the
        # catch); any other failure (a crash, no kernel profiled) is neither; 77: skipped (no GPU,
        # no ncu, or profiling not permitted: counters.py says which).
        said = re.findall(r"^(?:COUNTED OTHERWISE|FAILED|skipped|counters|  (?:dram|fp32|tensor-\w+|link)): .*$",
                          out, re.M)
        figures = [line.strip() for line in said if line.startswith("  ")]
        verdicts = [line for line in said if not line.startswith("  ")]
        said = "; ".join(verdicts[-1:] + figures[-1:]) or f"exit {rc}"
        miscounted = re.search(r"^COUNTED OTHERWISE", out, re.M) is not None
        status = ("clean" if rc == 0 else "caught" if rc == EXIT_FAILED and miscounted else
                  "no-device" if rc == EXIT_NO_DEVICE else "other")
        return dict(result, status=status, said=said[:400])
    if check == "clock":
        # 0: every record's clock agrees; 1 with "CLOCKED OTHERWISE": a record's does not (the
        # catch); another failure (the program failed, no trace) is neither; 77: no GPU.
        said = re.findall(r"^(?:CLOCKED OTHERWISE|clock): .*$", out, re.M)
        said = said[-1] if said else f"exit {rc}"
        otherwise = re.search(r"^CLOCKED OTHERWISE", out, re.M) is not None
        status = ("clean" if rc == 0 else "caught" if rc == EXIT_FAILED and otherwise else
                  "no-device" if rc == EXIT_NO_DEVICE else "other")
        return dict(result, status=status, said=said[:400])
    if check == "window":
        said = re.findall(r"^window test: .*$", out, re.M)
        said = said[-1] if said else f"exit {rc}"
        status = {0: "clean", 1: "caught", EXIT_NO_DEVICE: "no-device"}.get(rc, "other")
        return dict(result, status=status, said=said[:300])
    if rc == EXIT_NO_DEVICE:
        said = re.findall(r"^.*(?:CUDA device|GPU).*$", out, re.M)
        return dict(result, status="no-device", said=(said[-1] if said else "exit 77")[:200])
    if rc == "timeout":
        status = "caught" if check in ("verdict", "gtest") else "other"
        return dict(result, status=status, said=f"hang, stopped after {timeout} s")
    if check == "verdict" or check == "lesson":
        # The line that decides, where one fails (an impossible rate comes before the verdict
        # and the lesson, which may both read well); otherwise the last verdict or lesson line.
        lines = re.findall(r"^(?:impossible measurement|Verdict|Lesson): .*$", out, re.M)
        failing = [l for l in lines if l.startswith(("impossible", "Verdict: FAIL", "Lesson: MISSED"))]
        said = failing[0] if failing else lines[-1] if lines else f"exit {rc}, no verdict line"
        missed = re.search(r"^Lesson: MISSED", out, re.M) is not None
        if check == "verdict":
            # Exit 2 is the unpatched program refusing a command line (the planted bug may be
            # the removal of that very guard): the check reports no failure there, as exit 0.
            status = "clean" if rc in (0, EXIT_USAGE) else "caught" if rc == EXIT_FAILED else "other"
            if rc == EXIT_USAGE:
                said = "refused the command line (exit 2), as the unpatched program should"
        else:
            status = ("clean" if rc == 0 and not missed else
                      "caught" if rc == EXIT_FAILED and missed else "other")
        return dict(result, status=status, said=said[:200])
    if check == "gtest":
        failed = sorted(set(re.findall(r"^\[  FAILED  \] (\S+)", out, re.M)))
        ran = re.search(r"\[==========\] (\d+) tests? from .* ran", out)
        skipped = re.search(r"\[  SKIPPED \] (\d+) test", out)
        if rc == 0 and ran and skipped and skipped.group(1) == ran.group(1):
            why = re.search(r": Skipped\n(.+)", out)
            return dict(result, status="no-device",
                        said=f"every test skipped: {why.group(1).strip() if why else 'no GPU'}")
        said = f"{len(failed)} failed: {', '.join(failed[:4])}" if failed else f"exit {rc}"
        if rc == 0:
            said = f"{ran.group(1) if ran else '?'} tests passed"
        return dict(result, status="clean" if rc == 0 else "caught", said=said[:300])
    counts = [int(n) for n in re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)", out)]
    summary = re.findall(r"^=+ (?:ERROR|RACECHECK) SUMMARY: .*$", out, re.M)
    said = summary[-1].lstrip("= ") if summary else f"exit {rc}, no summary"
    if any(n > 0 for n in counts):
        status = "caught"
    elif counts and rc == 0:
        status = "clean"
    else:
        status = "other"
    return dict(result, status=status, said=said[:200])


# ---- where it may run ----------------------------------------------------------------------

def gpu_visible():
    """(True, compute capability 'M.m') when nvidia-smi lists a GPU; (False, why) otherwise."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "no usable CUDA device: nvidia-smi not found (is there an NVIDIA GPU and driver?)"
    rc, out = run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], 60)
    caps = [c.strip() for c in out.split("\n") if re.match(r"^\s*\d+\.\d+\s*$", c)] if rc == 0 else []
    if not caps:
        return False, f"no usable CUDA device: nvidia-smi lists none ({out.strip()[:120]})"
    return True, caps[0]


def runs_on(archs, cap):
    """Can code built for CUDA_ARCHITECTURES `archs` ('90-real,75-virtual', '90a', 'native')
    run on a GPU of compute capability `cap` ('9.0')? Machine code sm_XY runs on X.y for y >= Y
    (sm_XYa only on X.Y exactly); PTX compute_XY on any XY or newer, compiled at start-up."""
    major, minor = (int(x) for x in cap.split("."))
    have = major * 10 + minor
    for entry in filter(None, re.split(r"[,;]", archs or "")):
        if entry in ("native", "all", "all-major"):
            return True
        hit = re.match(r"^(\d+)([af]?)(?:-(real|virtual))?$", entry)
        if not hit:
            return True  # a form we do not know: let the control decide
        n, suffix, kind = int(hit.group(1)), hit.group(2), hit.group(3)
        if suffix == "a":
            if n == have:
                return True
            continue
        if kind != "virtual" and n // 10 == major and n <= have:
            return True
        if kind != "real" and n <= have:
            return True
    return not archs


def may_run(args, what):
    """None when the checks may run here, else the exit code after saying why not."""
    ok, cap = gpu_visible()
    if not ok:
        required = os.environ.get("CUDA_EXAMPLES_REQUIRE_GPU", "0") not in ("", "0")
        print(f"{'FAILED' if required else 'skipped'}: no GPU to run {what} on: {cap}")
        return EXIT_FAILED if required else EXIT_NO_DEVICE
    if not runs_on(args.archs, cap):
        print(f"REFUSED: {what}: built for CUDA architectures {args.archs}, which a GPU of "
              f"compute capability {cap} cannot run, so no check could pass or fail for the bug's "
              f"sake. Build for this GPU: cmake -DCMAKE_CUDA_ARCHITECTURES={cap.replace('.', '')} ...")
        return EXIT_FAILED
    return None


def binaries_of(args):
    binaries = {}
    if args.program:
        binaries["program"] = args.program
    for item in args.gtest:
        name, sep, path = item.partition("=")
        if not sep:
            raise MutantError(f"--gtest takes NAME=PATH, not {item!r}")
        binaries[name] = path
    return binaries


def fingerprint(binaries):
    out = {}
    for name, path in binaries.items():
        st = Path(path).stat() if Path(path).is_file() else None
        out[name] = [str(path), st.st_mtime_ns if st else None, st.st_size if st else None]
    return out


# ---- the control and the catch -------------------------------------------------------------

def cmd_control(args, mutants):
    """Runs every check of these planted bugs on the unpatched program(s) and writes the
    results to --json. Exit 0 when each check passes there; otherwise the planted bugs that
    use a failing check cannot be counted as caught (ctest then fails them too)."""
    what = f"the unpatched {mutants[0]['program']} (the control)"
    Path(args.json).unlink(missing_ok=True)
    refused = may_run(args, what)
    if refused is not None:
        return refused
    binaries = binaries_of(args)
    wanted = {}
    for m in mutants:
        for c in configs(m):
            wanted.setdefault(key(c), c)
    results, bad, no_device = {}, [], []
    # The checks are independent: run them side by side (the planted bugs wait for this).
    done = dict(zip(wanted, execute_all(args, list(wanted.values()), binaries, control=True)))
    for k, c in wanted.items():
        r = done[k]
        results[k] = r
        ok = r["status"] == "clean"
        label = {"clean": "passes", "no-device": "skipped", "missing": "MISSING"}.get(r["status"], "FAILS")
        print(f"  control {label:8} {describe(c)}: {r['said']}{took(r)}")
        if r["status"] == "no-device":
            no_device.append(r["said"])
        elif not ok:
            bad.append(c)
            print(r.get("output", ""))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(
        {"binaries": fingerprint(binaries), "archs": args.archs, "results": results}, indent=1))
    if bad:
        print(f"CONTROL FAILED: {len(bad)} of {len(wanted)} checks fail on the unpatched program, "
              f"so the planted bugs that use them cannot be counted as caught")
        return EXIT_FAILED
    if no_device and len(no_device) == len(wanted):
        print(f"skipped: {no_device[0]}")
        return EXIT_NO_DEVICE
    print(f"control: all {len(wanted)} checks pass on the unpatched program")
    return EXIT_OK


def cmd_caught(args, m):
    what = f"the planted bug {m['name']}"
    if args.compile_only:
        # The build folder was configured where no GPU was visible (CUDA_EXAMPLES_MUTANTS=auto):
        # the patch was compiled, not linked. On a GPU runner that is a failure, not a skip.
        required = os.environ.get("CUDA_EXAMPLES_REQUIRE_GPU", "0") not in ("", "0")
        print(f"{'FAILED' if required else 'skipped'}: {what} was only compiled (no GPU visible "
              f"at configure time); to run it, configure with a GPU visible or "
              f"-DCUDA_EXAMPLES_MUTANTS=all")
        return EXIT_FAILED if required else EXIT_NO_DEVICE
    refused = may_run(args, what)
    if refused is not None:
        return refused
    print(f"{m['chapter']}/{m['name']}: {m['bug']}")
    if not args.control or not Path(args.control).is_file():
        print(f"NOT COUNTED: no control results ({args.control}): run it through ctest, which runs "
              f"the control first (ctest -R '{m['program']}\\.mutant\\.')")
        return EXIT_FAILED
    control = json.loads(Path(args.control).read_text())
    binaries = binaries_of(args)
    mine = configs(m)
    for c in mine:
        r = control["results"].get(key(c))
        if r is None:
            print(f"NOT COUNTED: the control did not run {describe(c)}")
            return EXIT_FAILED
        if r["status"] == "no-device":
            print(f"skipped: {r['said']}")
            return EXIT_NO_DEVICE
        if r["status"] != "clean":
            print(f"NOT COUNTED: the unpatched program fails the same check ({describe(c)}: "
                  f"{r['said']}), so a catch would mean nothing")
            return EXIT_FAILED
    for name, (path, mtime, size) in control["binaries"].items():
        if name in ("program",) or any(c["binary"] == name for c in mine):
            st = Path(path).stat() if Path(path).is_file() else None
            if st is None or st.st_mtime_ns != mtime:
                print(f"NOT COUNTED: {path} changed after its control ran: run the control again")
                return EXIT_FAILED
    result = {"chapter": m["chapter"], "program": m["program"], "mutant": m["name"], "bug": m["bug"],
              "expect": m["expect"], "checks": {}}
    done = execute_all(args, mine, binaries)
    for check in m["expect"]:
        runs = []
        for c, r in ((c, r) for c, r in zip(mine, done) if c["check"] == check):
            if r["status"] == "no-device":
                print(f"skipped: {r['said']}")
                return EXIT_NO_DEVICE
            if r["status"] == "missing":
                print(f"FAILED: {r['said']}")
                return EXIT_FAILED
            caught = r["status"] == "caught"
            print(f"  {check:9} {'CAUGHT  ' if caught else 'SURVIVED'} {describe(c)}: {r['said']}"
                  f"{took(r)}")
            if not caught:
                print(r.get("output", ""))
            runs.append({"args": c["args"] or "(default size)", "exit": r["exit"], "caught": caught,
                         "said": r["said"]})
        result["checks"][check] = {"caught": all(x["caught"] for x in runs), "detail": runs}
    result["caught"] = all(c["caught"] for c in result["checks"].values())
    if args.result:
        Path(args.result).parent.mkdir(parents=True, exist_ok=True)
        Path(args.result).write_text(json.dumps(result, indent=1))
    verdict = "CAUGHT by " + ", ".join(m["expect"]) if result["caught"] else "SURVIVED"
    print(f"{m['chapter']}/{m['name']}: {verdict} (the control passed the same checks)")
    return EXIT_OK if result["caught"] else EXIT_FAILED


def cmd_table(build):
    rows = []
    for path in sorted((Path(build) / "mutants").glob("*/*/result.json")):
        r = json.loads(path.read_text())
        cells = []
        for check in CHECKS:
            c = r["checks"].get(check)
            cells.append("—" if c is None else ("caught" if c["caught"] else "**SURVIVED**"))
        rows.append(f"| {r['program']} | {r['mutant'].split('.', 1)[-1]} | {r['bug']} | " + " | ".join(cells) + " |")
    print("| program | planted bug | what is wrong | " + " | ".join(CHECKS) + " |")
    print("|---|---|---|" + "---|" * len(CHECKS))
    print("\n".join(rows))
    print(f"\n{len(rows)} planted bugs with results under {build}/mutants")
    return EXIT_OK


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("plan", "tree", "apply", "control", "caught", "table"))
    p.add_argument("target", nargs="+",
                   help="a .mutant file (plan, apply, control: one or more), or for 'table' the build directory")
    p.add_argument("--build", default="build", help="(apply, table) the build directory")
    p.add_argument("--out", help="(tree) where the patched copy goes")
    p.add_argument("--also", action="append", default=[],
                   help="(tree) one more file to copy, relative to the repository root")
    p.add_argument("--program", help="the program's binary (the planted bug's, or for control the real one)")
    p.add_argument("--compile-only", action="store_true",
                   help="(caught) the build compiled the planted bug to PTX only (configured without "
                        "a GPU): there is nothing to run")
    p.add_argument("--gtest", action="append", default=[], metavar="NAME=PATH",
                   help="a GoogleTest binary, by the name `gtest:` uses")
    p.add_argument("--archs", default="", help="the binaries' CUDA_ARCHITECTURES, comma-separated")
    p.add_argument("--json", help="(control) where its results go")
    p.add_argument("--control", help="(caught) the control's results")
    p.add_argument("--result", help="(caught) where the result goes (read by 'table')")
    p.add_argument("--sanitizer", default=shutil.which("compute-sanitizer"))
    p.add_argument("--timeout", type=int, default=300, help="seconds before a run counts as a hang")
    args = p.parse_args()
    try:
        if args.command == "table":
            return cmd_table(args.target[0])
        if args.command == "apply":
            return cmd_apply(args.target)
        if args.command == "plan":
            return cmd_plan(args.target)
        mutants = [parse(t) for t in args.target]
        if args.command == "control":
            if not args.json:
                p.error("control needs --json FILE")
            return cmd_control(args, mutants)
        if len(mutants) != 1:
            p.error(f"{args.command} takes one .mutant file")
        if args.command == "tree":
            if not args.out:
                p.error("tree needs --out DIR")
            return cmd_tree(mutants[0], args.out, args.also)
        return cmd_caught(args, mutants[0])
    except MutantError as e:
        print(f"mutant.py: {e}")
        return EXIT_USAGE if args.command == "plan" else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())

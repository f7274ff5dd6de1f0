#!/usr/bin/env python3
"""Exercises that run: the handouts' "change X and observe Y", applied, run and checked.

    exercise.py list                               the exercises, one line each
    exercise.py run   --out FILE [--work DIR] [--jobs J] [EXERCISE...]
                                                   build each one's programs, run its commands,
                                                   write the record (a GPU; FILE: JSON)
    exercise.py check [--record FILE] [EXERCISE...]
                                                   every exercise has a current record, its patch
                                                   still applies, and every claim holds on what
                                                   the record says ran (no GPU)
    exercise.py gpu-check EXERCISE [--work DIR]    run one exercise now and check its claims on
                                                   that run (the GPU test `exercise.<name>`)

An exercise is a file tests/exercises/<handout>.<number>.exercise (the format, README.md here):
the planted-bug format of tests/mutants/ (its reader, mutant.py, parses the fields and the
patch), with the builds, the runs and the claims. A claim is a predicate on what ran, written
as an expression over the run names (`verdict(wide) == "FAIL"`, `errors(sanitized) == 0`); its
`says:` line is the sentence the answer key prints, with the claim's left-hand value put in
for `{}`. docs/instructors.md prints those sentences from the record (scripts/docs.py), so
an answer cannot say what did not happen: a claim that is false on the record fails the docs
check, and so does a record older than its exercise file.
Exit status: 0 every claim holds, 1 a claim is false, the record is stale or missing, a patch
no longer applies, 2 a malformed exercise file or bad usage, 77 no GPU (gpu-check).
"""
import argparse
import ast
import datetime
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "mutants"))
import mutant  # noqa: E402  (the planted-bug format: fields, patch, standalone nvcc line)

RECORD = REPO / "docs" / "runs" / "h200" / "side" / "exercises.json"
SANITIZERS = ("memcheck", "racecheck", "synccheck", "initcheck")
RUNNER = 2  # how runs are made (a program run gets --json): a record of another runner is stale
KEEP_LINES = 80  # a try's output lines kept in the record (besides its JSON records)
# Lines a record always keeps, wherever they are in the output.
KEY_LINE = re.compile(r"^(Verdict:|Lesson:|impossible measurement|=+ \w+ SUMMARY|.*error:|CUDA error|  returned cuda)")


class ExerciseError(mutant.MutantError):
    """A malformed exercise file, or a claim that cannot be evaluated."""


# ---- the file ------------------------------------------------------------------------------

def all_files():
    return sorted(HERE.glob("*.exercise"))


def find(name):
    """An exercise by name (ch02_vector_add.3) or path."""
    p = Path(name)
    if p.suffix == ".exercise" and p.is_file():
        return p.resolve()
    p = HERE / f"{name}.exercise"
    if not p.is_file():
        raise ExerciseError(f"no exercise {name!r} (tests/exercises/*.exercise)")
    return p


def parse(path):
    """Reads an .exercise file. Fields as in a .mutant file, read by mutant.py's reader."""
    path = Path(path)
    fields, i, lines = mutant.read_fields(
        path, ("program", "source", "change"), repeated=("build", "run", "says", "claim"))
    name = path.name[: -len(".exercise")]
    handout, _, number = name.partition(".")
    if not number or not (REPO / "docs" / f"{handout}.md").is_file():
        raise ExerciseError(f"{path}: the name must be <handout>.<number>.exercise, with "
                            f"docs/<handout>.md a handout")
    e = {"path": path, "name": name, "handout": handout, "number": number,
         "chapter": handout if (REPO / handout).is_dir() else None,
         "patches": mutant.read_patch(path, lines, i)}
    for key in ("program", "change"):
        if key not in fields:
            raise ExerciseError(f"{path}: missing '{key}:'")
    e.update(program=fields["program"], change=fields["change"])
    chapter = e["chapter"] or next((d.name for d in sorted(REPO.glob("ch*_*"))
                                    if (d / f"{e['program']}.cu").is_file()), None)
    e["source"] = fields.get("source") or f"{chapter}/{e['program']}.cu"
    if not (REPO / e["source"]).is_file():
        raise ExerciseError(f"{path}: source {e['source']} does not exist")
    # Builds: control (the program as it is) and, with a patch, patched; more by name.
    e["builds"] = {"control": {"patched": False, "flags": []}}
    if e["patches"]:
        e["builds"]["patched"] = {"patched": True, "flags": []}
    for value in fields["build"]:
        words = shlex.split(value)
        if len(words) < 2 or words[1] not in ("control", "patched"):
            raise ExerciseError(f"{path}: 'build: NAME control|patched [NVCC FLAGS]', got {value!r}")
        if words[1] == "patched" and not e["patches"]:
            raise ExerciseError(f"{path}: build {words[0]} is patched, but there is no patch")
        e["builds"][words[0]] = {"patched": words[1] == "patched", "flags": words[2:]}
    e["runs"] = {}
    for value in fields["run"]:
        head, sep, args = value.partition(" -- ")
        if not sep:  # no arguments: 'run: NAME BUILD [options]' (or ending in ' --')
            head, args = re.sub(r"\s+--$", "", value), ""
        words = shlex.split(head)
        if len(words) < 2 or words[1] not in e["builds"]:
            raise ExerciseError(f"{path}: run {value!r}: a name and a build ({', '.join(e['builds'])})")
        run = {"build": words[1], "args": shlex.split(args), "times": 1, "timeout": 60,
               "tool": None, "keep": None}
        for opt in words[2:]:
            key, _, v = opt.partition("=")
            if key == "times":
                run["times"] = int(v)
            elif key == "timeout":
                run["timeout"] = int(v)
            elif key in SANITIZERS and not v:
                run["tool"] = key
            elif key == "sass" and not v:
                run["tool"] = "sass"
            elif key == "keep":
                run["keep"] = v
            else:
                raise ExerciseError(f"{path}: run {words[0]}: unknown option {opt!r}")
        if words[0] in e["runs"] or words[0] in e["builds"]:
            raise ExerciseError(f"{path}: the name {words[0]} is used twice")
        e["runs"][words[0]] = run
    if len(fields["says"]) != len(fields["claim"]):
        raise ExerciseError(f"{path}: each 'claim:' needs its 'says:' line")
    if not fields["claim"]:
        raise ExerciseError(f"{path}: no 'claim:': an exercise says what it shows")
    e["claims"] = list(zip(fields["says"], fields["claim"]))
    for _, claim in e["claims"]:
        check_expression(path, claim, set(e["runs"]) | set(e["builds"]))
    return e


def code_of(text):
    """C++ source without its comments, each run of blank space one space: what a change to
    the program must alter to make a record stale (a comment edited elsewhere in the file does
    not). String and character literals are kept whole (a // inside one is not a comment)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return re.sub(r"\s+", " ", "".join(out)).strip()


def spec_sha(e):
    """What ran: the program, its code as patched (comments aside: code_of), the builds and
    the runs (not the claims or the sentences: those are read against the record, and may
    change without a rerun)."""
    text = code_of(patched(e))
    spec = {"runner": RUNNER, "program": e["program"], "source": e["source"], "builds": e["builds"],
            "runs": e["runs"], "patched_code": hashlib.sha256(text.encode()).hexdigest()}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def patched(e):
    """The patched source's text (mutant.py's patcher: every find block matches once)."""
    if not e["patches"]:
        return (REPO / e["source"]).read_text()
    return mutant.patched_text({"path": e["path"], "source": e["source"], "patches": e["patches"]})


# ---- claims: a small expression language over the record ------------------------------------

FUNCTIONS = {}


def function(f):
    FUNCTIONS[f.__name__.rstrip("_")] = f
    return f


def _try(r, k=0):
    return r["tries"][k] if r["tries"] else {}


@function
def exit_(r):
    """The exit code of the first try ('timeout' when it was stopped)."""
    t = _try(r)
    return "timeout" if t.get("timed_out") else t.get("exit")


@function
def exits(r):
    """The exit codes of every try, as a sorted list of the distinct ones."""
    return sorted({("timeout" if t.get("timed_out") else t.get("exit")) for t in r["tries"]}, key=str)


@function
def verdict(r, k=0):
    """PASS or FAIL from the try's 'Verdict:' line, None without one."""
    for line in _try(r, k).get("lines", []):
        m = re.match(r"Verdict: (\w+)", line)
        if m:
            return m.group(1)
    return None


@function
def fails(r):
    """How many tries printed 'Verdict: FAIL'."""
    return sum(verdict(r, k) == "FAIL" for k in range(len(r["tries"])))


@function
def errors(r):
    """The errors compute-sanitizer reports in the first try: its 'ERROR SUMMARY: N errors',
    or racecheck's 'RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)'; None
    without a summary."""
    for line in _try(r).get("lines", []):
        m = re.search(r"ERROR SUMMARY: (\d+) error", line) or \
            re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error", line)
        if m:
            return int(m.group(1))
    return None


@function
def value(r, variant, field, k=0):
    """A field of the program's --json record of that variant (None: the first record),
    dotted for nested ones (time_ms.median)."""
    for rec in _try(r, k).get("json", []):
        if variant is None or rec.get("variant") == variant:
            v = rec
            for part in field.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            return v
    return None


@function
def number(r, pattern, k=0):
    """The first group of the first output line that matches, as a number."""
    for line in _try(r, k).get("lines", []):
        m = re.search(pattern, line)
        if m:
            return float(m.group(1))
    return None


@function
def distinct(r, pattern):
    """How many different values the first group of the pattern takes over the tries."""
    seen = set()
    for t in r["tries"]:
        for line in t.get("lines", []):
            m = re.search(pattern, line)
            if m:
                seen.add(m.group(1))
                break
    return len(seen)


@function
def count(r, pattern):
    """How many kept output lines of the first try match."""
    return sum(1 for line in _try(r).get("lines", []) if re.search(pattern, line))


@function
def timed_out(r):
    return bool(_try(r).get("timed_out"))


@function
def minimum(*xs):
    return None if None in xs else min(xs)


@function
def maximum(*xs):
    return None if None in xs else max(xs)


ALLOWED = (ast.Expression, ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.Not, ast.UnaryOp,
           ast.USub, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Call, ast.Name,
           ast.Load, ast.Constant, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
           ast.List, ast.In, ast.NotIn)


def check_expression(path, text, names):
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise ExerciseError(f"{path}: claim {text!r}: {err.msg}")
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED):
            raise ExerciseError(f"{path}: claim {text!r}: {type(node).__name__} is not allowed")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                               and node.func.id in FUNCTIONS):
            raise ExerciseError(f"{path}: claim {text!r}: known functions: {', '.join(FUNCTIONS)}")
        if isinstance(node, ast.Name) and node.id not in names | set(FUNCTIONS) | {"None"}:
            raise ExerciseError(f"{path}: claim {text!r}: {node.id!r} is no run or build")
    if not isinstance(tree.body, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Call)):
        raise ExerciseError(f"{path}: claim {text!r}: a claim is a comparison or a test")
    return tree


def _eval(node, env):
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return None if node.id == "None" else env[node.id]
    if isinstance(node, ast.List):
        return [_eval(x, env) for x in node.elts]
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*[_eval(a, env) for a in node.args])
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return (not v) if isinstance(node.op, ast.Not) else -v
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if a is None or b is None or (isinstance(node.op, ast.Div) and b == 0):
            return None
        op = type(node.op)
        return a + b if op is ast.Add else a - b if op is ast.Sub else a * b if op is ast.Mult else a / b
    if isinstance(node, ast.BoolOp):
        vals = [_eval(v, env) for v in node.values]
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env)
            f = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
                 ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
                 ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
                 ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}[type(op)]
            try:
                if isinstance(left, list) and not isinstance(op, (ast.In, ast.NotIn)) \
                        and not isinstance(right, list):  # [a, b, c] > 0: each of them
                    ok = bool(left) and all(f(x, right) for x in left)
                else:
                    ok = f(left, right)
            except TypeError:  # None against a number: the record lacks the value
                return False
            if not ok:
                return False
            left = right
        return True
    raise ExerciseError(f"cannot evaluate {ast.dump(node)}")


def left_value(tree, env):
    """The value the sentence prints: the left side of the (first) comparison."""
    node = tree.body
    while isinstance(node, ast.BoolOp):
        node = node.values[0]
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Compare):  # `1.8 < x < 2.2` prints x
        node = node.comparators[0] if isinstance(node.left, ast.Constant) else node.left
    return _eval(node, env)


def evaluate(e, rec):
    """[(sentence, holds)] for each claim, on the exercise's record."""
    env = dict(rec["builds"])
    env.update(rec["runs"])
    out = []
    for says, claim in e["claims"]:
        tree = check_expression(e["path"], claim, set(env))
        try:
            holds = bool(_eval(tree, env))
            lv = left_value(tree, env)
        except (TypeError, ZeroDivisionError):  # a value the record lacks
            holds, lv = False, None
        try:
            sentence = (says.format(*lv) if isinstance(lv, list) else says.format(lv)) \
                if "{" in says else says
        except (ValueError, TypeError):
            sentence = f"{says} [{lv!r}]"
        out.append((sentence, holds, claim, lv))
    return out


# ---- building and running (a GPU machine) ---------------------------------------------------

def gpu_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        names = [n.strip() for n in out.stdout.splitlines() if n.strip()]
        return names[0] if out.returncode == 0 and names else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def run_words(words, timeout, cwd=None):
    """(exit code, timed out, seconds, output): its own process group, killed whole on time."""
    start = time.monotonic()
    try:
        p = subprocess.Popen(words, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", start_new_session=True)
    except OSError as err:  # compute-sanitizer or cuobjdump not on PATH
        return 127, False, 0.0, f"{words[0]}: {err.strerror}"
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, False, time.monotonic() - start, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, True, time.monotonic() - start, out


def kept(output, keep=None):
    """The lines a record keeps: the JSON records apart, the key lines, the first KEEP_LINES
    others (or, with keep=, every line that matches it)."""
    lines, records, rest = [], [], 0
    for line in output.splitlines():
        if line.startswith("{") and line.rstrip().endswith("}"):
            try:
                records.append(json.loads(line))
                continue
            except ValueError:
                pass
        if keep is not None:
            if re.search(keep, line) or KEY_LINE.match(line):
                lines.append(line)
        elif KEY_LINE.match(line) or rest < KEEP_LINES:
            lines.append(line)
            rest += 0 if KEY_LINE.match(line) else 1
    return lines, records


def nvcc_words(e, build, binary, tree):
    words = mutant.standalone_line(REPO / e["source"])
    src = Path(e["source"]).name
    out = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w == "-o":
            skip = True
            continue
        out.append(str(tree / e["source"]) if w == src else w)
    if not any(w.startswith("-arch") for w in out):
        out.append(f"-arch={os.environ.get('EXERCISE_ARCH', 'native')}")
    return out + build["flags"] + ["-o", str(binary)]


def build_key(e, bname):
    """One folder per program, source text and flags."""
    b = e["builds"][bname]
    text = patched(e) if b["patched"] else (REPO / e["source"]).read_text()
    return f"{e['program']}-" + hashlib.sha256((text + json.dumps(b["flags"])).encode()).hexdigest()[:12]


def build_one(e, bname, work):
    """Copies common/ and the program's folder (patched for a patched build), compiles with
    the program's standalone nvcc line. Returns (record, binary)."""
    b = e["builds"][bname]
    text = patched(e) if b["patched"] else (REPO / e["source"]).read_text()
    tree = work / build_key(e, bname)
    binary = tree / Path(e["source"]).parent / e["program"]
    lock = tree / ".built.json"
    if lock.is_file():  # the same source and flags, built for another exercise
        return json.loads(lock.read_text()), binary
    for part in ("common", str(Path(e["source"]).parent)):
        src = REPO / part
        for f in src.rglob("*"):
            if f.is_file() and f.suffix in mutant.SOURCE_SUFFIXES:
                dest = tree / f.relative_to(REPO)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dest)
    (tree / e["source"]).write_text(text)
    words = nvcc_words(e, b, binary, tree)
    code, timed, secs, out = run_words(words, 600, cwd=tree / Path(e["source"]).parent)
    shown = " ".join(["nvcc"] + [w.replace(str(tree) + "/", "") for w in words[1:]])
    lines, _ = kept(out.replace(str(tree) + "/", ""))
    rec = {"command": shown, "tries": [{"exit": code, "timed_out": timed, "seconds": round(secs, 1),
                                       "lines": lines[:40]}]}
    lock.write_text(json.dumps(rec))
    return rec, binary


def run_one(e, rname, binary):
    r = e["runs"][rname]
    cwd = binary.parent
    shown_prog = f"./{e['program']}"
    if r["tool"] == "sass":
        words, shown = ["cuobjdump", "-sass", str(binary)], f"cuobjdump -sass {e['program']}"
    elif r["tool"]:
        words = ["compute-sanitizer", "--tool", r["tool"], str(binary)] + r["args"]
        shown = " ".join(["compute-sanitizer", "--tool", r["tool"], shown_prog] + r["args"])
    else:
        words, shown = [str(binary)] + r["args"], " ".join([shown_prog] + r["args"])
    if r["tool"] != "sass":  # the program's machine-readable lines too (value() reads them)
        words, shown = words + ["--json"], shown + " --json"
    tries = []
    for _ in range(r["times"]):
        code, timed, secs, out = run_words(words, r["timeout"], cwd=cwd)
        lines, records = kept(out, r["keep"])
        tries.append({"exit": code, "timed_out": timed, "seconds": round(secs, 2),
                      "lines": lines, "json": records})
    return {"command": shown, "build": r["build"], "tries": tries}


def cmd_run(names, out, work, jobs, commit):
    exercises = [parse(find(n)) for n in names] if names else [parse(f) for f in all_files()]
    work = Path(work or tempfile.mkdtemp(prefix="exercises-"))
    work.mkdir(parents=True, exist_ok=True)
    gpu = gpu_name()
    started = time.monotonic()
    builds = [(e, b) for e in exercises for b in e["builds"]]
    # Builds of the same source and flags are one build (a control shared by exercises).
    unique = {}
    for e, b in builds:
        unique.setdefault(build_key(e, b), (e, b))
    with ThreadPoolExecutor(jobs) as pool:
        done = dict(zip(unique, pool.map(lambda eb: build_one(eb[0], eb[1], work), unique.values())))
    built = {(e["name"], b): done[build_key(e, b)] for e, b in builds}
    build_s = time.monotonic() - started
    record = {"schema": 1, "gpu": gpu, "commit": commit,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "build_seconds": round(build_s, 1), "exercises": {}}
    if Path(out).is_file():  # a rerun of some exercises keeps the others
        old = json.loads(Path(out).read_text())
        if names:
            record["exercises"] = old.get("exercises", {})
    for e in exercises:
        rec = {"file": e["path"].relative_to(REPO).as_posix(), "spec": spec_sha(e),
               "gpu": gpu, "builds": {}, "runs": {}}
        for b in e["builds"]:
            rec["builds"][b] = built[(e["name"], b)][0]
        for rname, r in e["runs"].items():
            brec, binary = built[(e["name"], r["build"])]
            if brec["tries"][0]["exit"] != 0:
                rec["runs"][rname] = {"command": "(not built)", "build": r["build"], "tries": []}
                continue
            rec["runs"][rname] = run_one(e, rname, binary)
            t = rec["runs"][rname]["tries"]
            print(f"{e['name']} {rname}: exit {[x['exit'] for x in t]} "
                  f"{sum(x['seconds'] for x in t):.1f} s", flush=True)
        record["exercises"][e["name"]] = rec
        for sentence, holds, claim, _ in evaluate(e, rec):
            print(f"  {'holds' if holds else 'FALSE'}: {claim}  ({sentence})", flush=True)
    record["seconds"] = round(time.monotonic() - started, 1)
    Path(out).write_text(dump(record))
    print(f"exercise.py run: {len(exercises)} exercises in {record['seconds']} s "
          f"(builds {build_s:.0f} s) on {gpu}; record {out}")
    return 0


def dump(record):
    """The record as JSON, one exercise a line (a rerun's diff shows which ones changed)."""
    head = {k: v for k, v in record.items() if k != "exercises"}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    ex = [f"  {json.dumps(n)}: {json.dumps(e, ensure_ascii=False)}"
          for n, e in sorted(record.get("exercises", {}).items())]
    return "{\n" + "\n".join(lines) + '\n "exercises": {\n' + ",\n".join(ex) + "\n }\n}\n"


# ---- the check (no GPU) ---------------------------------------------------------------------

def problems(e, record):
    """What is wrong with an exercise against the record: [] when its claims all hold."""
    rec = record.get("exercises", {}).get(e["name"])
    if rec is None:
        return [f"{e['name']}: not in the record: run it on a GPU (tests/exercises/README.md)"]
    out = []
    try:
        sha = spec_sha(e)  # also: the patch still applies to the program as it is now
    except mutant.MutantError as err:
        return [f"{e['name']}: {err}"]
    if rec.get("spec") != sha:
        out.append(f"{e['name']}: the record ran another version of the exercise (its program, "
                   f"builds, runs or patch changed since): run it again on a GPU")
    for b in e["builds"]:
        if b not in rec.get("builds", {}):
            out.append(f"{e['name']}: build {b} is not in the record")
    for r in e["runs"]:
        if r not in rec.get("runs", {}):
            out.append(f"{e['name']}: run {r} is not in the record")
    if out:
        return out
    for sentence, holds, claim, lv in evaluate(e, rec):
        if not holds:
            out.append(f"{e['name']}: the claim `{claim}` is false on the record ({lv!r}): "
                       f"the answer would say \"{sentence}\", which did not happen")
    return out


def load_record(path=None):
    path = Path(path or RECORD)
    if not path.is_file():
        raise ExerciseError(f"no record {path}: run tests/exercises/exercise.py run on a GPU")
    return json.loads(path.read_text())


def cmd_check(names, record_path):
    record = load_record(record_path)
    exercises = [parse(find(n)) for n in names] if names else [parse(f) for f in all_files()]
    bad = [p for e in exercises for p in problems(e, record)]
    for e in exercises if not names else []:
        pass
    extra = sorted(set(record.get("exercises", {})) - {e["name"] for e in exercises}) if not names else []
    bad += [f"{n}: in the record, but there is no tests/exercises/{n}.exercise" for n in extra]
    for p in bad:
        print(f"exercise.py check: {p}", file=sys.stderr)
    claims = sum(len(e["claims"]) for e in exercises)
    print(f"exercise.py check: {len(exercises)} exercises, {claims} claims: "
          + ("all hold on the record" if not bad else f"{len(bad)} problems"))
    return 1 if bad else 0


def cmd_gpu_check(name, work):
    if not gpu_name():
        print("exercise.py: no GPU visible (nvidia-smi): skipped", file=sys.stderr)
        return 77
    e = parse(find(name))
    with tempfile.TemporaryDirectory(prefix="exercise-") as tmp:
        out = Path(tmp) / "record.json"
        cmd_run([name], out, work or Path(tmp) / "work", 4, None)
        record = json.loads(out.read_text())
    bad = problems(e, record)
    for p in bad:
        print(f"exercise.py gpu-check: {p}", file=sys.stderr)
    return 1 if bad else 0


# ---- what the answer key prints (scripts/docs.py, through the docs generator) ---------------

def short(text, n=120):
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def outcome(r):
    """One run's outcome in words: exit code, the verdict line or the sanitizer's summary."""
    if not r["tries"]:
        return "not built"
    t = r["tries"][0]
    if len(r["tries"]) > 1:
        codes = [("stopped" if x.get("timed_out") else f"{x['exit']}") for x in r["tries"]]
        head = f"{len(codes)} runs, exit {', '.join(codes)}"
        verdicts = [verdict(r, k) for k in range(len(r["tries"]))]
        if any(verdicts):
            head += "; verdicts " + ", ".join(v or "none" for v in verdicts)
        return head
    if t.get("timed_out"):
        return f"stopped after {t['seconds']:.0f} s (no exit)"
    parts = [f"exit {t['exit']}"]
    summary = verdict_line = cuda = None
    for line in t.get("lines", []):
        if summary is None and re.search(r"=+ \w+ SUMMARY: \d+ (errors?|hazards?)", line):
            summary = line.strip("= ").strip()
        elif verdict_line is None and line.startswith("Verdict:"):
            verdict_line = f"`{short(line.strip())}`"
        elif cuda is None and re.match(r"\s+returned (cuda\w+)", line):
            cuda = f"`{line.strip().removeprefix('returned ')}`"
    parts += [x for x in (cuda, verdict_line, summary) if x]
    return ", ".join(parts)


def answer_lines(name, record_path=None):
    """The generated part of an exercise's answer: what ran, and each claim as checked.
    Raises ExerciseError when a claim is false or the record is stale: the docs check fails."""
    record = load_record(record_path)
    e = parse(find(name))
    bad = problems(e, record)
    if bad:
        raise ExerciseError("; ".join(bad))
    rec = record["exercises"][e["name"]]
    gpu = rec.get("gpu") or record.get("gpu") or "a GPU"
    lines = [f"On an {gpu} (`{rec['file']}`: {e['change']}):"]
    for rname, r in rec["runs"].items():
        which = "as it is" if not e["builds"][r["build"]]["patched"] else "changed"
        flags = e["builds"][r["build"]]["flags"]
        if flags:
            which += f", built with `{' '.join(flags)}`"
        command = r["command"].removesuffix(" --json")  # --json: value() reads its lines
        lines.append(f"- `{command}` ({which}): {outcome(r)}.")
    for bname, b in rec["builds"].items():
        if b["tries"][0]["exit"] != 0:
            msg = next((l for l in b["tries"][0]["lines"] if "error" in l), "")
            msg = re.sub(r"^.*?error: ", "", msg).strip()
            spec = e["builds"][bname]
            what = ("the changed program" if spec["patched"] else "the program") + \
                (f" with `{' '.join(spec['flags'])}`" if spec["flags"] else "")
            lines.append(f"- {what} does not build: nvcc exit {b['tries'][0]['exit']}"
                         + (f": `{short(msg)}`." if msg else "."))
    sentences = [s for s, _, _, _ in evaluate(e, rec)]
    lines += ["", "Measured: " + "; ".join(sentences) + "."]
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    p = sub.add_parser("run")
    p.add_argument("exercises", nargs="*")
    p.add_argument("--out", required=True)
    p.add_argument("--work")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    p.add_argument("--commit")
    p = sub.add_parser("check")
    p.add_argument("exercises", nargs="*")
    p.add_argument("--record")
    p = sub.add_parser("gpu-check")
    p.add_argument("exercise")
    p.add_argument("--work")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "list":
            for f in all_files():
                e = parse(f)
                print(f"{e['name']:32} {e['program']:14} {e['change']}")
            return 0
        if a.cmd == "run":
            return cmd_run(a.exercises, a.out, a.work, a.jobs, a.commit)
        if a.cmd == "check":
            return cmd_check(a.exercises, a.record)
        return cmd_gpu_check(a.exercise, a.work)
    except mutant.MutantError as err:
        print(f"exercise.py: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

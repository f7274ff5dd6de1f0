"""The grader as a library: the one entry point of a service (the course server, server/).

    grade_submission(chapter, folder, out)       exactly `lab.py grade FOLDER --lab CH --out OUT`
    run_program(program, args, work, edit=None, trace=False)
                                                 one program of programs.json, built with the
                                                 student's lab regions (linted as a lab's are);
                                                 with trace, its kernel's accesses recorded and
                                                 drawn (scripts/trace_kernel.py's picture)
    run_exercise(name, work, edit=None)          one exercise of tests/exercises, its "patched"
                                                 build being the student's edit of the lines the
                                                 exercise changes (exercise_text: linted); which
                                                 of its claims held, with the values measured

Every build and run of student code happens in the grader's fence (fence.py), as in a grade;
a weak fence is refused unless the caller accepts it, as lab.py does. Each returns a dict of
JSON values: exit (0 ok, 1 failed or points lost, 2 refused, 77 cannot run here), summary (one
line), output (what ran printed, capped), and report (the grade's table) or claims. Nothing
here knows of HTTP, accounts or queues.
"""
import contextlib
import difflib
import io
import json
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from . import cli, lint
from .fence import Fence, gpu_probe, safe_read
from .labs import REPO, LabError, load_labs, regions, region_body, splice

OUTPUT_CAP = 64 << 10
# A student's trace: the accesses it keeps (trace.cuh counts the rest as overflow; the handouts'
# largest, MM-GPU-SM's, has about 20000) and the bytes of its CSV read back from the fenced folder.
TRACE_RECORDS = 1 << 16
TRACE_CSV_CAP = 8 << 20
COMMON_FLAGS = {"--json", "--repeats", "--help"}  # common/report.h's, every program's


def _cannot(why):
    return {"exit": 77, "summary": f"cannot run here: {why}", "output": ""}


def _fence(accept_weak_fence, tools):
    fence = Fence(None, tools=tools)
    if fence.weak and not accept_weak_fence:
        raise LabError(cli.weak_fence_refused(fence, cli.argparse.Namespace(), "server"))
    return fence


def grade_submission(chapter, folder, out, options=()):
    """`lab.py grade FOLDER --lab CHAPTER --out OUT [options]`, the same code; its printed table
    is the report, results.json the scores."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli.run(cli.__doc__, ["grade", str(folder), "--lab", chapter, "--out", str(out)]
                       + list(options))
    results = Path(out) / "results.json"
    scores = json.loads(results.read_text()) if results.is_file() else None
    text = buf.getvalue().replace(str(folder), "your submission").replace(str(out), "the report")
    summary = (f"{scores['score']:g} / {scores['max_score']:g} points" if scores else "no report")
    if code == 77:
        # lab.py grade's one line (report.not_graded), wrapped: its reason, on one line again.
        why = text.split("no points lost or won: ")[-1] if "no points lost or won: " in text else ""
        summary = "cannot run here: " + (" ".join(why.split()) or "no usable CUDA device")
    return {"exit": code, "summary": summary, "output": "", "report": text, "results": scores}


# ---- a program, or an exercise, built and run in the fence ---------------------------------

def programs():
    """{name: (chapter folder, source path, documented flags)} of programs.json."""
    data = json.loads((REPO / "programs.json").read_text())
    folders = {c["chapter"]: c["folder"] for c in data["chapters"]}
    out = {}
    for p in data["programs"]:
        src = REPO / folders[p["chapter"]] / f"{p['name']}.cu"
        if src.is_file():
            text = src.read_text()
            flags = sorted(set(re.findall(r'args\.\w+\("(--[a-z0-9][a-z0-9-]*)"', text)) | COMMON_FLAGS)
            out[p["name"]] = (folders[p["chapter"]], src, flags, p.get("gpu", True))
    return out


def edited_text(src, edit):
    """The course's program with the lab regions of EDIT (the student's copy of the file),
    each linted as a lab's: (text, None) or (None, why)."""
    reference = src.read_text()
    specs = {n: s for lab in load_labs()["labs"] for t in lab["tasks"] for n, s in t["regions"].items()}
    here = [n for n in regions(reference, src.name) if n in specs]
    if not here:
        return None, f"{src.name} has no lab region to edit: run it as it is"
    shown = f"{src.parent.name}/{src.name}"
    try:
        problems = []
        for name in here:
            body, first = region_body(edit, name, shown)
            problems += lint.lint_region(body, first, specs[name], shown, name)
        if problems:
            return None, "the region lint refused your code (nothing was built):\n" + "\n".join(problems[:8])
        return splice(reference, edit, {"regions": {n: specs[n] for n in here}}, f"{shown} (course)", shown), None
    except LabError as e:
        return None, str(e)


# ---- an exercise's editable part ---------------------------------------------------------

def _lines(text):
    """A file's lines, line ends normalised (CRLF, a missing last newline)."""
    return text.replace("\r\n", "\n").rstrip("\n").split("\n")


def _span_in(ops, a, b):
    """Where lines [a, b) of the first file of difflib's opcodes OPS are in the second file,
    every change that touches the span's edges included."""
    starts, ends = [], []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            if i1 <= a <= i2:
                starts.append(j1 + a - i1)
            if i1 <= b <= i2:
                ends.append(j1 + b - i1)
        else:
            if i1 == a:
                starts.append(j1)
            if i2 == b:
                ends.append(j2)
    return min(starts), max(ends)


def editable_parts(e):
    """The lines of the exercise's program that its patch changes: [(first, end, region)], 0-based
    [first, end) of the course's file. A patch inside a lab region makes the whole region's body
    the part (region: its name, linted with the lab's own rules); elsewhere the part is the
    patch's own lines (region None)."""
    text = (REPO / e["source"]).read_text()
    specs = {n for lab in load_labs()["labs"] for t in lab["tasks"] for n in t["regions"]}
    found = {n: r for n, r in regions(text, e["source"]).items() if n in specs}
    parts = []
    for find, _ in e["patches"]:
        at = text.find(find)
        first = text[:at].count("\n")
        end = first + find.rstrip("\n").count("\n") + 1
        region = next((n for n, (o, c, _) in found.items() if o < first and end <= c), None)
        if region:
            first, end = found[region][0] + 1, found[region][1]
        if (first, end, region) not in parts:
            parts.append((first, end, region))
    return sorted(parts)


def _problems(body, first, spec, shown, name):
    """The lint's sentences for one part, without their place (for comparing two texts)."""
    return [m.split(f": region {name}: ", 1)[-1] for m in lint.lint_region(body, first, spec, shown, name)]


def exercise_text(e, edit):
    """The student's edit of exercise E as the text of its patched build: (text, None, note) or
    (None, why, None). The student sends the whole file; only the exercise's editable part may
    differ from the course's program (editable_parts), and each part is linted: a lab region by
    its lab's rules, exactly as a lab's region; any other part by the same lint with what the
    course's lines and the exercise's own answer there do as its allowance: it may call what
    they call, and it may hold no construct the lint refuses that they do not hold as often
    (a kernel's header keeps its __global__; a system(), an asm or a new call is refused)."""
    src = REPO / e["source"]
    shown = f"{src.parent.name}/{src.name}"
    if not e["patches"]:
        return None, (f"exercise {e['name']} changes nothing in {src.name}: it runs the program as "
                      "it is, so it takes no edit (send none)"), None
    original, mine = _lines(src.read_text()), _lines(edit)
    sys.path.insert(0, str(REPO / "tests" / "exercises"))
    import exercise as ex
    answer = _lines(ex.patched(e))
    parts = editable_parts(e)
    where = ", ".join(f"lines {a + 1}-{b}" + (f" (LAB {r})" if r else "") for a, b, r in parts)
    ops = difflib.SequenceMatcher(None, original, mine, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag != "equal" and not any(a <= i1 and i2 <= b for a, b, _ in parts):
            line = j1 + 1 if j2 > j1 else i1 + 1
            return None, (f"{shown}:{line}: exercise {e['name']} lets you change only {where} of "
                          f"{src.name}; this line differs from the course's file: restore it "
                          "(nothing was built)"), None
    answer_ops = difflib.SequenceMatcher(None, original, answer, autojunk=False).get_opcodes()
    specs = {n: s for lab in load_labs()["labs"] for t in lab["tasks"] for n, s in t["regions"].items()}
    problems = []
    for a, b, region in parts:
        ja, jb = _span_in(ops, a, b)
        body = mine[ja:jb]
        if region:
            problems += lint.lint_region(body, ja + 1, specs[region], shown, region)
            continue
        name = f"lines {a + 1}-{b}"
        ka, kb = _span_in(answer_ops, a, b)
        ours = [original[a:b], answer[ka:kb]]
        calls = set().union(*(lint.callees(lint.tokens("\n".join(x), 1)[0]) for x in ours))
        spec = {"kind": "device", "calls": sorted(calls)}
        allowed = Counter()
        for x in ours:
            allowed |= Counter(_problems(x, 1, spec, shown, name))
        left = Counter(allowed)
        for m in lint.lint_region(body, ja + 1, spec, shown, name):
            what = m.split(f": region {name}: ", 1)[-1]
            if left[what] > 0:
                left[what] -= 1
            else:
                problems.append(m)
    if problems:
        return None, ("the lint refused your edit (nothing was built):\n" + "\n".join(problems[:8])), None
    return "\n".join(mine) + "\n", None, f"your edit: {where} of {src.name}, linted: accepted"


# ---- a program, or an exercise, built and run in the fence ---------------------------------

def _tree(jail, folder, text, source_name, trace=False):
    """common/ and the program's folder (its .md and .py aside), the source replaced by TEXT;
    with TRACE, tools/trace/trace.cuh beside them (the trace patch includes it)."""
    tree = jail / "tree"
    shutil.copytree(REPO / "common", tree / "common", ignore=shutil.ignore_patterns("*.md"))
    shutil.copytree(REPO / folder, tree / folder,
                    ignore=shutil.ignore_patterns("*.md", "*.py", "__pycache__", "build*"))
    if trace:
        (tree / "tools" / "trace").mkdir(parents=True)
        shutil.copyfile(REPO / "tools" / "trace" / "trace.cuh", tree / "tools" / "trace" / "trace.cuh")
    (tree / folder / source_name).write_text(text)
    for p in [tree] + list(tree.rglob("*")):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return tree / folder


class _Fenced:
    """One fenced folder: builds and runs inside it, as the fenced uid."""

    def __init__(self, fence, scratch, name):
        self.fence, self.slot = fence, fence.take_slot()
        self.jail = fence.jail(scratch, self.slot, name)

    def chown(self, path):
        if self.fence.drops_uid:
            import os
            uid = self.fence.uid(self.slot)
            os.chown(path, uid, uid)

    def run(self, words, cwd, timeout, limits=None, extra_env=None):
        rc, out, _ = self.fence.run(words, cwd, self.slot, timeout, limits, extra_env=extra_env, home=self.jail)
        return rc, out[-OUTPUT_CAP:]

    def close(self):
        self.fence.give_slot(self.slot)


def nvcc_of(src, tree_src, binary, arch):
    sys.path.insert(0, str(REPO / "tests" / "mutants"))
    import mutant
    words = mutant.standalone_line(src)
    out, skip = [shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"], False
    for w in words[1:]:
        if skip:
            skip = False
        elif w == "-o":
            skip = True
        else:
            out.append(str(tree_src) if w == src.name else w)
    if not any(w.startswith("-arch") for w in out):  # a line naming its target keeps it (sm_90a)
        out.append(f"-arch={arch}")
    return out + ["-o", str(binary)]


def refused_edit(kind, name, edit, trace=False):
    """Why a job's edit cannot run, said before it is queued (the course server answers it at
    once; the run checks it again): None when it is taken. kind 'run': NAME's lab regions
    linted (edited_text) and, with TRACE, the trace patch still applies to the edit; kind
    'exercise': exercise_text."""
    if kind == "exercise" and edit is not None:
        sys.path.insert(0, str(REPO / "tests" / "exercises"))
        import exercise as ex
        return exercise_text(ex.parse(ex.find(name)), edit)[1]
    if kind != "run" or edit is None:
        return None
    text, why = edited_text(programs()[name][1], edit)
    if text is None or not trace:
        return why
    tk = _trace_kernel()
    try:
        tk.mutant.patched_text(tk.parse_patch(tk.patch_of(name)), text)
    except tk.mutant.MutantError:
        return "the trace cannot record your edit: it changed a line the trace records (keep that line, or run without the picture)"
    return None


def _trace_kernel():
    sys.path.insert(0, str(REPO / "scripts"))
    import trace_kernel
    return trace_kernel


def traced_programs():
    """The programs with a traced picture (a trace patch of tools/trace/patches/)."""
    return sorted(_trace_kernel().STUDENT_PICTURE)


def run_program(program, args, work, edit=None, timeout=60, arch="native", accept_weak_fence=False,
                trace=False):
    """The program (with the student's regions), built and run in the fence. With TRACE, the
    build is its trace patch's copy (scripts/trace_kernel.py: a recording call before each access
    of its kernel), run once; the accesses are read back from the fenced folder and drawn into
    WORK/trace.png (the result's 'picture'), with trace_kernel.py's summary lines."""
    known = programs()
    if program not in known:
        return {"exit": 2, "summary": f"no program {program!r}", "output": ""}
    folder, src, flags, _ = known[program]
    bad = [a for a in args if a.startswith("--") and a.split("=")[0] not in flags]
    if bad:
        return {"exit": 2, "summary": f"{program} has no flag {bad[0]} (its flags: {' '.join(flags)})", "output": ""}
    text = src.read_text()
    if edit is not None:
        text, why = edited_text(src, edit)
        if text is None:
            return {"exit": 1, "summary": why.split("\n")[0], "output": why}
    env = None
    if trace:
        tk = _trace_kernel()
        if program not in tk.STUDENT_PICTURE:
            return {"exit": 2, "summary": f"{program} has no traced picture (the programs that have one: "
                    f"{', '.join(traced_programs())})", "output": ""}
        m = tk.parse_patch(tk.patch_of(program))
        try:
            text = tk.mutant.patched_text(m, text)
        except tk.mutant.MutantError as err:
            return {"exit": 1, "summary": "the trace cannot record your edit: it changed a line the trace "
                    "records (keep that line as it is, or run without the picture)",
                    "output": str(err).replace(str(m["path"]), f"the trace of {program}")}
        if not args:  # the size the handout's picture uses
            args = shlex.split((m["runs"] or [""])[0])
        env = {"TRACE_CSV": "trace.csv", "TRACE_CAPACITY": str(TRACE_RECORDS)}
    why = gpu_probe()
    if why:
        return _cannot("no GPU (" + why + ")")
    try:
        fence = _fence(accept_weak_fence, [shutil.which("nvcc")])
    except LabError as e:
        return {"exit": 2, "summary": "refused: weak fence", "output": str(e)}
    scratch = Path(tempfile.mkdtemp(prefix="server-run-", dir=work))
    scratch.chmod(0o711)
    box = _Fenced(fence, scratch, "job")
    try:
        cwd = _tree(box.jail, folder, text, src.name, trace)
        box.chown(cwd)
        rc, out = box.run(nvcc_of(src, cwd / src.name, cwd / program, arch), cwd, 300,
                          {"nproc": 256, "fsize": 512 << 20, "nofile": 1024})
        if rc != 0:
            out = out.replace(box.fence.inside(cwd.parent, box.jail) + "/", "")  # /lab/... inside
            return {"exit": 1, "summary": "does not compile", "output": out.replace(str(cwd.parent) + "/", "")}
        rc, out = box.run([str(cwd / program)] + list(args), cwd, timeout, extra_env=env)
        if rc == "timeout":
            return {"exit": 1, "summary": f"did not finish within {timeout} s (stopped)", "output": out}
        verdict = re.findall(r"^Verdict: .*$", out, re.M)
        r = {"exit": rc, "summary": (verdict[-1] if verdict else f"exit {rc}"), "output": out}
        if trace and rc != 77:
            r.update(_picture(program, args, cwd, box.jail, Path(work)))
        return r
    finally:
        box.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _picture(program, args, cwd, jail, work):
    """The trace the fenced run wrote (read without following a link, capped), drawn by
    trace_kernel.py's student picture into WORK/trace.png: {'picture', 'trace'} or why not."""
    data, why = safe_read(cwd / "trace.csv", TRACE_CSV_CAP + 1, under=jail)
    if data is None:
        return {"trace": f"no trace was written ({why})"}
    if len(data) > TRACE_CSV_CAP:
        return {"trace": f"the trace is larger than {TRACE_CSV_CAP >> 20} MiB: trace a smaller size"}
    tk = _trace_kernel()
    local = work / "trace.csv"
    local.write_bytes(data)
    words = " ".join(shlex.quote(a) for a in args)
    try:
        rows = tk.tracelib.load(local)
        try:
            lines = tk.student_picture(program, words, rows, work / "trace.png")
        except ImportError as err:  # matplotlib: scripts/setup.sh installs it where a GPU is
            lines = tk.student_picture(program, words, rows, None)
            return {"trace": "\n".join(lines + [f"(recorded, not drawn: {err}; scripts/setup.sh installs it)"])}
    except Exception as err:  # noqa: BLE001  (a trace the student's code wrote: any shape)
        return {"trace": f"the trace could not be read or drawn: {type(err).__name__}: {str(err)[:200]}"}
    finally:
        local.unlink(missing_ok=True)
    return {"picture": "trace.png", "trace": "\n".join(lines)}


def run_exercise(name, work, edit=None, arch="native", accept_weak_fence=False):
    """The exercise's builds and runs, each in the fence; with EDIT (the student's whole file),
    its patched build is the student's file, which may differ from the course's only in the
    exercise's editable part, linted (exercise_text). Returns which claims held, each with the
    value it measured, and every run's outcome."""
    sys.path.insert(0, str(REPO / "tests" / "exercises"))
    import exercise as ex
    try:
        e = ex.parse(ex.find(name))
    except Exception as err:  # noqa: BLE001  (an unknown or malformed name: one line)
        return {"exit": 2, "summary": f"no exercise {name!r}: {err}", "output": ""}
    note = None
    if edit is not None:
        edit, why, note = exercise_text(e, edit)
        if edit is None:
            return {"exit": 1, "summary": why.split("\n")[0], "output": why}
    why = gpu_probe()
    if why:
        return _cannot("no GPU (" + why + ")") | ({"output": note} if note else {})
    try:
        fence = _fence(accept_weak_fence, [shutil.which("nvcc"), shutil.which("compute-sanitizer")])
    except LabError as err:
        return {"exit": 2, "summary": "refused: weak fence", "output": str(err)}
    src = REPO / e["source"]
    scratch = Path(tempfile.mkdtemp(prefix="server-exercise-", dir=work))
    scratch.chmod(0o711)
    rec, log, boxes = {"builds": {}, "runs": {}}, [note] if note else [], {}
    try:
        # one fenced folder per build: its runs run there, as its uid
        for bname, b in e["builds"].items():
            text = (edit if edit is not None else ex.patched(e)) if b["patched"] else src.read_text()
            box = boxes[bname] = _Fenced(fence, scratch, f"build-{bname}")
            box.cwd = _tree(box.jail, src.parent.name, text, src.name)
            box.chown(box.cwd)
            words = nvcc_of(src, box.cwd / src.name, box.cwd / e["program"], arch)
            words = words[:-2] + b["flags"] + words[-2:]
            rc, out = box.run(words, box.cwd, 600, {"nproc": 256, "fsize": 512 << 20, "nofile": 1024})
            box.built = rc == 0
            rec["builds"][bname] = {"command": f"nvcc ({bname})", "tries": [{"exit": rc, "lines": out.splitlines()[-20:]}]}
            log.append(f"$ build {bname}: exit {rc}\n{out[-4000:]}")
        for rname, r in e["runs"].items():
            box = boxes[r["build"]]
            if not box.built:
                rec["runs"][rname] = {"command": "(not built)", "build": r["build"], "tries": []}
                continue
            binary = str(box.cwd / e["program"])
            words = ([shutil.which("cuobjdump") or "cuobjdump", "-sass", binary] if r["tool"] == "sass" else
                     ([shutil.which("compute-sanitizer") or "compute-sanitizer", "--tool", r["tool"]] if r["tool"] else [])
                     + [binary] + r["args"] + ["--json"])
            tries = []
            for _ in range(r["times"]):
                started = time.monotonic()
                rc, out = box.run(words, box.cwd, r["timeout"])
                lines, records = ex.kept(out, r["keep"])
                tries.append({"exit": None if rc == "timeout" else rc, "timed_out": rc == "timeout",
                              "seconds": round(time.monotonic() - started, 2), "lines": lines, "json": records})
                log.append(f"$ {rname} ({' '.join(r['args'])}): exit {rc}\n" + "\n".join(lines[:40]))
            rec["runs"][rname] = {"command": rname, "build": r["build"], "tries": tries}
        return exercise_result(e, rec, "\n".join(log))
    finally:
        for box in boxes.values():
            box.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _plain(value):
    """A measured value as JSON can carry it (a number, a string, a list of them)."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def exercise_result(e, rec, log=""):
    """What a student sees of an exercise that ran (its record REC, in exercise.py's shape):
    each claim held or not, with its sentence and the value it measured (exercise.py's
    evaluate, the answer key's own), and each run's outcome (exercise.py's outcome)."""
    import exercise as ex
    claims = [{"says": s, "holds": bool(h), "claim": c, "value": _plain(v)} for s, h, c, v in ex.evaluate(e, rec)]
    runs = [{"run": n, "build": r["build"], "args": " ".join(e["runs"][n]["args"]), "outcome": ex.outcome(r)}
            for n, r in rec["runs"].items()]
    held = sum(c["holds"] for c in claims)
    return {"exit": 0 if held == len(claims) else 1, "summary": f"{held} of {len(claims)} claims held",
            "output": log[-OUTPUT_CAP:], "claims": claims, "runs": runs}

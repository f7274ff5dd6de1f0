"""The grader as a library: the one entry point of a service (the course server, server/).

    grade_submission(chapter, folder, out)       exactly `lab.py grade FOLDER --lab CH --out OUT`
    run_program(program, args, work, edit=None)  one program of programs.json, built with the
                                                 student's lab regions (linted as a lab's are)
    run_exercise(name, work, edit=None)          one exercise of tests/exercises, its "patched"
                                                 build being the student's edit; its claims

Every build and run of student code happens in the grader's fence (fence.py), as in a grade;
a weak fence is refused unless the caller accepts it, as lab.py does. Each returns a dict of
JSON values: exit (0 ok, 1 failed or points lost, 2 refused, 77 cannot run here), summary (one
line), output (what ran printed, capped), and report (the grade's table) or claims. Nothing
here knows of HTTP, accounts or queues.
"""
import contextlib
import io
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from . import cli, lint
from .fence import Fence, gpu_probe
from .labs import REPO, LabError, load_labs, regions, region_body, splice

OUTPUT_CAP = 64 << 10
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
        summary = "cannot run here: " + (text.split("CANNOT GRADE here: ")[-1].split("\n")[0])
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


def _tree(jail, folder, text, source_name):
    """common/ and the program's folder (its .md and .py aside), the source replaced by TEXT."""
    tree = jail / "tree"
    shutil.copytree(REPO / "common", tree / "common", ignore=shutil.ignore_patterns("*.md"))
    shutil.copytree(REPO / folder, tree / folder,
                    ignore=shutil.ignore_patterns("*.md", "*.py", "__pycache__", "build*"))
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

    def run(self, words, cwd, timeout, limits=None):
        rc, out, _ = self.fence.run(words, cwd, self.slot, timeout, limits, home=self.jail)
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
    return out + [f"-arch={arch}", "-o", str(binary)]


def run_program(program, args, work, edit=None, timeout=60, arch="native", accept_weak_fence=False):
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
        cwd = _tree(box.jail, folder, text, src.name)
        box.chown(cwd)
        rc, out = box.run(nvcc_of(src, cwd / src.name, cwd / program, arch), cwd, 300,
                          {"nproc": 256, "fsize": 512 << 20, "nofile": 1024})
        if rc != 0:
            return {"exit": 1, "summary": "does not compile", "output": out.replace(str(cwd.parent) + "/", "")}
        rc, out = box.run([str(cwd / program)] + list(args), cwd, timeout)
        if rc == "timeout":
            return {"exit": 1, "summary": f"did not finish within {timeout} s (stopped)", "output": out}
        verdict = re.findall(r"^Verdict: .*$", out, re.M)
        return {"exit": rc, "summary": (verdict[-1] if verdict else f"exit {rc}"), "output": out}
    finally:
        box.close()
        shutil.rmtree(scratch, ignore_errors=True)


def run_exercise(name, work, edit=None, arch="native", accept_weak_fence=False):
    """The exercise's builds and runs, each in the fence; with EDIT, its patched build is the
    student's whole file (nothing is scored, so no lint: the fence is the boundary)."""
    sys.path.insert(0, str(REPO / "tests" / "exercises"))
    import exercise as ex
    try:
        e = ex.parse(ex.find(name))
    except Exception as err:  # noqa: BLE001  (an unknown or malformed name: one line)
        return {"exit": 2, "summary": f"no exercise {name!r}: {err}", "output": ""}
    why = gpu_probe()
    if why:
        return _cannot("no GPU (" + why + ")")
    try:
        fence = _fence(accept_weak_fence, [shutil.which("nvcc"), shutil.which("compute-sanitizer")])
    except LabError as err:
        return {"exit": 2, "summary": "refused: weak fence", "output": str(err)}
    src = REPO / e["source"]
    scratch = Path(tempfile.mkdtemp(prefix="server-exercise-", dir=work))
    scratch.chmod(0o711)
    rec, log, boxes = {"builds": {}, "runs": {}}, [], {}
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
                rc, out = box.run(words, box.cwd, r["timeout"])
                lines, records = ex.kept(out, r["keep"])
                tries.append({"exit": None if rc == "timeout" else rc, "timed_out": rc == "timeout",
                              "lines": lines, "json": records})
                log.append(f"$ {rname} ({' '.join(r['args'])}): exit {rc}\n" + "\n".join(lines[:40]))
            rec["runs"][rname] = {"command": rname, "build": r["build"], "tries": tries}
        claims = [{"says": s, "holds": h, "claim": c} for s, h, c, _ in ex.evaluate(e, rec)]
        held = sum(c["holds"] for c in claims)
        return {"exit": 0 if held == len(claims) else 1, "summary": f"{held} of {len(claims)} claims held",
                "output": "\n".join(log)[-OUTPUT_CAP:], "claims": claims}
    finally:
        for box in boxes.values():
            box.close()
        shutil.rmtree(scratch, ignore_errors=True)

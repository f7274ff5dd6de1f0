#!/usr/bin/env python3
"""Labs an instructor can hand out and grade: one per chapter, made from the real programs.

    lab.py list                               the labs and their tasks
    lab.py make CHAPTER DIR [--solution]      a student folder: skeletons, headers, handout, grader
    lab.py grade [DIR]                        grade one student's folder (default: the current one)
    lab.py grade-class SUBMISSIONS --lab CH   every folder under SUBMISSIONS -> one CSV of scores
    lab.py check                              (CPU) every lab makes, no skeleton holds solution text,
                                              every skeleton compiles
    lab.py selftest [--labs CH...]            (GPU) skeletons score 0, solutions full marks, planted
                                              bugs lose their task's points, a hang scores 0

One source of truth: the programs mark what a student writes with two comment lines,
`// LAB <region> {` and `// LAB }`; labs/labs.json says which regions make which task and how
it is graded. A skeleton keeps the markers and replaces what is between them by the task's
TODO text and a stub that compiles. The grader puts the student's regions, one task at a time,
into the suite's own copy of the program and builds the suite's own GoogleTest file with it,
so a task is judged on its own code alone, and a student's edited tests are never used.

Exit codes: 0 full marks (GitHub Classroom's convention), 1 points lost (or a check failed),
2 usage, 77 cannot grade here (no GPU, no nvcc): never a pass.
"""
import argparse
import concurrent.futures
import csv
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "mutants"))
import mutant  # noqa: E402  (the planted bugs: parse() and the patching rules)

EXIT_OK, EXIT_LOST, EXIT_USAGE, EXIT_CANNOT = 0, 1, 2, 77
OPEN = re.compile(r"^(\s*)// LAB (\S+) \{\s*$")
CLOSE = re.compile(r"^\s*// LAB \}\s*$")
TOOLS = ("memcheck", "racecheck", "synccheck")


class LabError(Exception):
    """A lab definition, a marker or a student's file that the grader cannot use."""


def load_labs():
    return json.loads((REPO / "labs" / "labs.json").read_text())


def find_lab(chapter):
    data = load_labs()
    for lab in data["labs"]:
        if chapter in (lab["chapter"], lab["folder"]):
            return lab, data.get("selftest", {}).get(lab["chapter"], {})
    names = ", ".join(lab["chapter"] for lab in data["labs"])
    raise LabError(f"no lab {chapter!r} (the labs: {names})")


# ---------------------------------------------------------------------------------------------
# Markers, skeletons, splicing
# ---------------------------------------------------------------------------------------------
def regions(text, where):
    """{name: (open line index, close line index, indent)} of a file's LAB blocks."""
    found, current = {}, None
    for i, line in enumerate(text.split("\n")):
        m = OPEN.match(line)
        if m:
            if current:
                raise LabError(f"{where}:{i + 1}: LAB {m.group(2)} opens inside LAB {current[0]}")
            current = (m.group(2), i, m.group(1))
        elif CLOSE.match(line):
            if not current:
                raise LabError(f"{where}:{i + 1}: '// LAB }}' closes nothing")
            if current[0] in found:
                raise LabError(f"{where}: LAB {current[0]} appears twice")
            found[current[0]] = (current[1], i, current[2])
            current = None
    if current:
        raise LabError(f"{where}: LAB {current[0]} is never closed ('// LAB }}')")
    return found


def region_body(text, name, where):
    r = regions(text, where)
    if name not in r:
        raise LabError(f"{where}: the markers of LAB {name} are missing: restore the lines "
                       f"'// LAB {name} {{' and '// LAB }}' around your code for this task")
    first, last, _ = r[name]
    return text.split("\n")[first + 1:last], first + 2  # the lines, and the first's number


def task_of_region(lab):
    return {name: task for task in lab["tasks"] for name in task["regions"]}


def skeleton(text, lab, filename):
    """The solution with every region of this lab replaced by its TODO block and stub."""
    owner = task_of_region(lab)
    lines = text.split("\n")
    found = regions(text, filename)
    for name, (first, last, indent) in sorted(found.items(), key=lambda kv: -kv[1][0]):
        if name not in owner:
            continue  # a region of no task of this lab stays as it is
        task = owner[name]
        spec = task["regions"][name]
        todo = textwrap.wrap(f"TODO(lab {task['id']}): {spec['todo']}", 100 - len(indent) - 3)
        block = [f"{indent}// {t}" if i == 0 else f"{indent}//   {t}" for i, t in enumerate(todo)]
        block += [indent + s for s in spec["stub"]]
        lines[first + 1:last] = block
    missing = [n for n, t in owner.items() if t["file"] == filename and n not in found]
    if missing:
        raise LabError(f"{filename}: no LAB markers for {', '.join(missing)}")
    return "\n".join(lines)


def splice(reference, student, task, ref_name, student_name):
    """The reference program with this task's regions taken from the student's file.
    #line directives make the compiler's messages name the student's file and lines."""
    ref_lines = reference.split("\n")
    found = regions(reference, ref_name)
    for name in sorted(task["regions"], key=lambda n: -found[n][0]):
        body, first_no = region_body(student, name, student_name)
        first, last, _ = found[name]
        ref_lines[first + 1:last] = ([f'#line {first_no} "{student_name}"'] + body +
                                     [f'#line {last + 1} "{ref_name}"'])
    return "\n".join(ref_lines)


def solution_lines(text, where):
    """The non-trivial lines inside the regions of a solution that appear nowhere outside them."""
    lines = text.split("\n")
    inside = set()
    for first, last, _ in regions(text, where).values():
        inside.update(range(first + 1, last))
    outside = {lines[i].strip() for i in range(len(lines)) if i not in inside}
    return {lines[i].strip() for i in inside
            if len(lines[i].strip()) >= 8 and lines[i].strip() not in outside}


# ---------------------------------------------------------------------------------------------
# make
# ---------------------------------------------------------------------------------------------
def nvcc_line(source):
    return " ".join(mutant.standalone_line(source))


def handout(lab):
    path = REPO / "labs" / f"{lab['chapter']}.md"
    return path.read_text() if path.exists() else f"# Lab {lab['chapter']}: {lab['title']}\n"


def cmd_make(chapter, out, solution=False):
    lab, _ = find_lab(chapter)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise LabError(f"{out} exists and is not empty: give a new folder")
    src = REPO / lab["folder"]
    dst = out / lab["folder"]
    shutil.copytree(REPO / "common", out / "common", ignore=shutil.ignore_patterns("*.md"))
    dst.mkdir(parents=True)
    for header in sorted(src.glob("*.h")):
        shutil.copy2(header, dst / header.name)
    if (src / "scenes").is_dir():
        shutil.copytree(src / "scenes", dst / "scenes")
    builds = []
    for name in lab["files"]:
        text = (src / name).read_text()
        (dst / name).write_text(text if solution else skeleton(text, lab, name))
        builds.append((Path(name).stem, name, nvcc_line(src / name)))
    libs = lambda line: " ".join(w[2:] for w in line.split() if w.startswith("-l"))  # noqa: E731
    cmake = [f"# Lab {lab['chapter']}: build the programs of this folder (made by scripts/lab.py).",
             "cmake_minimum_required(VERSION 3.24)", f"project(lab_{lab['chapter']} LANGUAGES CXX CUDA)",
             "set(CMAKE_CUDA_STANDARD 17)", "if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)",
             "  set(CMAKE_CUDA_ARCHITECTURES native)", "endif()"]
    for target, name, line in builds:
        cmake.append(f"add_executable({target} {lab['folder']}/{name})")
        if libs(line):
            cmake.append(f"target_link_libraries({target} PRIVATE {libs(line)})")
    (out / "CMakeLists.txt").write_text("\n".join(cmake) + "\n")
    grade = ("#!/bin/sh\n# Grades this folder with the course's grader (its own tests, never a copy "
             "from here).\n# CUDA_EXAMPLES_REPO: the course repository (default: the one that made "
             "this folder).\n"
             f'REPO="${{CUDA_EXAMPLES_REPO:-{REPO}}}"\n'
             'exec python3 "$REPO/scripts/lab.py" grade "$(dirname "$0")" "$@"\n')
    (out / "grade.sh").write_text(grade)
    (out / "grade.sh").chmod(0o755)
    (out / ".lab.json").write_text(json.dumps({"chapter": lab["chapter"]}) + "\n")
    tasks = "\n".join(f"| {t['id']} | `{lab['folder']}/{t['file']}` | {', '.join(t['regions'])} "
                      f"| {sum(t['points'].values())} | {t['title']} |" for t in lab["tasks"])
    lines = "\n".join(f"    (cd {lab['folder']} && {line})" for _, _, line in builds)
    readme = (handout(lab).rstrip() + "\n\n## Your tasks\n\nWrite your code between the lines "
              "`// LAB <region> {` and `// LAB }` of each TODO, and keep those two lines: the grader "
              "takes each task's code from between them (code elsewhere is not graded).\n\n"
              "| task | file | regions | points | what |\n|---|---|---|---|---|\n" + tasks +
              "\n\n## Build and run\n\n    cmake -S . -B build && cmake --build build\n\nor, one "
              f"program at a time:\n\n{lines}\n\n## Grade yourself\n\n    ./grade.sh\n\nprints a "
              "score per task and the reason for every point lost (it needs the course repository "
              "and a GPU). Your instructor grades with the same grader.\n")
    (out / "README.md").write_text(readme)
    return lab


# ---------------------------------------------------------------------------------------------
# building (cached by content: the same spliced source is built once)
# ---------------------------------------------------------------------------------------------
class Builder:
    def __init__(self, work, arch, nvcc, jobs, gtest_lib=None, gtest_include=None):
        self.work, self.arch, self.nvcc, self.jobs = Path(work).resolve(), arch, nvcc, jobs
        self.gtest_lib = gtest_lib or ["-lgtest", "-lgtest_main"]
        self.gtest_include = [f"-I{d}" for d in (gtest_include or []) if d]
        self.cache = self.work / "cache"

    def arch_flags(self):
        """'sm_90', 'native' -> -arch=...; CMake's '90-real' or '90' -> -arch=sm_90."""
        if re.match(r"^\d", self.arch or ""):
            return mutant.arch_flags(self.arch)
        return [f"-arch={self.arch}"] if self.arch else []

    def plan(self, lab, text, kind, task=None):
        """A build of one spliced program source: kind 'gtest' (the task's GoogleTest file)
        or 'program' (the program itself, for the performance gate)."""
        name = task["file"]
        what = task["gtest"] if kind == "gtest" else Path(name).stem
        test_src = REPO / "tests" / lab["folder"] / f"{task['gtest']}.cu" if kind == "gtest" else None
        key = hashlib.sha256("\0".join([kind, what, name, text, self.arch,
                                        test_src.read_text() if test_src else ""]).encode())
        return {"lab": lab, "text": text, "kind": kind, "file": name, "what": what,
                "key": key.hexdigest()[:20]}

    def build(self, job):
        root = self.cache / job["key"]
        binary, log = root / job["what"], root / "build.log"
        if (root / "ok").exists():
            return True, binary, ""
        lab = job["lab"]
        tmp = Path(tempfile.mkdtemp(dir=self.cache.parent if self.cache.exists() else None,
                                    prefix="build-"))
        tree = tmp / "tree"
        shutil.copytree(REPO / "common", tree / "common")
        shutil.copytree(REPO / lab["folder"], tree / lab["folder"],
                        ignore=shutil.ignore_patterns("__pycache__"))
        (tree / lab["folder"] / job["file"]).write_text(job["text"])
        if job["kind"] == "gtest":
            shutil.copytree(REPO / "tests" / lab["folder"], tree / "tests" / lab["folder"])
            shutil.copy2(REPO / "tests" / "gpu_test.h", tree / "tests" / "gpu_test.h")
            # -lineinfo: compute-sanitizer names the student's file and line (#line in splice)
            words = [self.nvcc, "-std=c++17", "-O2", "-lineinfo", "-DCUDA_EXAMPLES_NO_MAIN", f"-I{tree}",
                     f"-I{tree / 'tests'}"] + self.arch_flags() + self.gtest_include
            words += [str(tree / "tests" / lab["folder"] / f"{job['what']}.cu"), "-o",
                      str(tmp / job["what"])] + self.gtest_lib + ["-lcublas", "-lpthread"]
            cwd = tree
        else:
            words = mutant.standalone_line(tree / lab["folder"] / job["file"])
            words = [self.nvcc] + words[1:] + self.arch_flags()
            words[words.index("-o") + 1] = str(tmp / job["what"])
            cwd = tree / lab["folder"]
        r = subprocess.run(words, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
        out = r.stdout.replace(str(tree) + "/", "")
        root.mkdir(parents=True, exist_ok=True)
        log.write_text(out)
        if r.returncode == 0:
            shutil.move(str(tmp / job["what"]), binary)
            (root / "ok").write_text("")  # failures are not kept: they are rebuilt next time
        shutil.rmtree(tmp, ignore_errors=True)
        return r.returncode == 0, (binary if r.returncode == 0 else None), out

    def build_all(self, jobs):
        self.cache.mkdir(parents=True, exist_ok=True)
        unique = {j["key"]: j for j in jobs}
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            done = dict(zip(unique, pool.map(self.build, unique.values())))
        return done


# ---------------------------------------------------------------------------------------------
# grading
# ---------------------------------------------------------------------------------------------
def cannot_grade_reason(nvcc):
    if not nvcc or not Path(nvcc).exists():
        return "nvcc was not found (install the CUDA toolkit, or pass --nvcc)"
    ok, why = mutant.gpu_visible()
    return None if ok else why


def run(words, timeout, env=None):
    try:
        r = subprocess.run(words, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout, env=env)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out


def compiler_message(log, limit=12):
    lines = [l for l in log.split("\n") if l.strip()]
    errors = [i for i, l in enumerate(lines) if "error" in l]
    start = errors[0] if errors else 0
    return "\n".join(lines[start:start + limit])


def gtest_env():
    env = dict(os.environ)
    env["CUDA_EXAMPLES_REQUIRE_GPU"] = "1"  # a skipped test is a failure, never a pass
    return env


def first_failure(out):
    """The message of the first failed test, as gtest printed it (a few lines)."""
    m = re.search(r"^\[ RUN      \] (\S+)\n(.*?)^\[  FAILED  \] \1", out, re.M | re.S)
    if not m:
        return ""
    lines = [l for l in m.group(2).split("\n") if l.strip() and not l.startswith("[")]
    return f"{m.group(1)}: " + " / ".join(l.strip() for l in lines[:6])[:600]


def check_tests(task, binary, timeout):
    words = [str(binary), f"--gtest_filter={task['filter']}"]
    rc, out = run(words, timeout, gtest_env())
    if rc == "timeout":
        return False, (f"your code did not finish within {timeout} s and was stopped (an endless "
                       "loop? an index that never reaches n? a barrier that not every thread of "
                       "the block reaches?)"), out
    if re.search(r"\[  SKIPPED \]", out) or "no CUDA device" in out:
        raise CannotGrade("a test was skipped (no usable CUDA device): " + out.strip()[-300:])
    failed = sorted(set(re.findall(r"^\[  FAILED  \] (\S+)\.(\S+)", out, re.M)))
    ran = re.search(r"\[==========\] (\d+) tests? from .* ran", out)
    if rc == 0 and ran and int(ran.group(1)) > 0:
        return True, f"{ran.group(1)} tests passed", out
    if failed:
        total = ran.group(1) if ran else "?"
        names = ", ".join(t for _, t in failed[:6]) + (" ..." if len(failed) > 6 else "")
        return False, (f"{len(failed)} of {total} tests failed ({names}); first: "
                       f"{first_failure(out)}"), out
    tail = " / ".join(out.strip().split("\n")[-4:])[:500]
    return False, f"the test program stopped (exit {rc}) before it finished: {tail}", out


def check_sanitizer(task, binary, tool, timeout, sanitizer):
    words = [sanitizer, "--tool", tool, "--print-limit", "5", str(binary),
             f"--gtest_filter={task['sanitize']['filter']}"]
    rc, out = run(words, timeout, gtest_env())
    if rc == "timeout":
        return False, f"compute-sanitizer --tool {tool} did not finish within {timeout} s", out
    counts = [int(n) for n in re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)", out)]
    if counts and max(counts) == 0 and rc == 0:
        return True, f"compute-sanitizer --tool {tool}: no errors", out
    hazards = [l.lstrip("= ").strip() for l in out.split("\n")
               if l.startswith("=") and re.search(r"Error|error|hazard|Race|Barrier|Invalid", l)]
    what = {"memcheck": "an out-of-bounds or misaligned memory access",
            "racecheck": "a race in shared memory: threads read and write the same place with no "
                         "__syncthreads() between them",
            "synccheck": "a barrier used wrongly (a __syncthreads() that not all threads reach, or "
                         "a shuffle with a wrong mask)"}[tool]
    said = "; ".join(hazards[:3])[:500] or " / ".join(out.strip().split("\n")[-3:])[:400]
    return False, f"compute-sanitizer --tool {tool} found {what}: {said}", out


def perf_value(out, perf):
    for line in out.split("\n"):
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("variant") != perf["variant"]:
            continue
        if perf["metric"] == "time":
            t = rec.get("time_ms")
            t = t.get("median") if isinstance(t, dict) else t
            return 1.0 / t if t else None  # a rate: runs per millisecond
        return rec.get(perf["metric"])
    return None


def check_perf(task, student_bin, reference_bin, timeout, work):
    """Student and reference, alternated twice in the same run; the best of each counts."""
    perf = task["perf"]
    words = shlex.split(perf["args"])
    lock = open(Path(work) / "perf.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # no two performance gates share the GPU at once
    try:
        best = {"student": None, "reference": None}
        for _ in range(2):
            for who, binary in (("reference", reference_bin), ("student", student_bin)):
                rc, out = run([str(binary)] + words, timeout)
                if rc != 0:
                    if who == "reference":
                        return False, f"the reference failed its own run (exit {rc})", out
                    return False, (f"your program failed its own check at {perf['args']} "
                                   f"(exit {rc}): {' / '.join(out.strip().split(chr(10))[-2:])}"), out
                v = perf_value(out, perf)
                if v is None:
                    return False, f"no '{perf['variant']}' measurement in the {who}'s output", out
                best[who] = v if best[who] is None else max(best[who], v)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    ratio = best["student"] / best["reference"]
    if perf["metric"] == "time":  # rates in runs per ms: show the times
        mine, theirs, unit = 1 / best["student"], 1 / best["reference"], "ms"
    else:
        mine, theirs = best["student"], best["reference"]
        unit = {"gbps": "GB/s", "gflops": "GFLOP/s"}[perf["metric"]]
    said = (f"{perf['what']}: {100 * ratio:.0f}% of the reference's speed "
            f"({mine:.4g} against {theirs:.4g} {unit}); "
            f"the gate is {100 * perf['min_ratio']:.0f}%")
    return ratio >= perf["min_ratio"], said, ""


class CannotGrade(Exception):
    pass


def student_file(folder, lab, name):
    for path in (Path(folder) / lab["folder"] / name, Path(folder) / name):
        if path.exists():
            return path
    return None


def plan_submission(builder, lab, folder):
    """The builds one submission needs, and for each task what to run on them."""
    plans, jobs = [], []
    for task in lab["tasks"]:
        plan = {"task": task, "error": None}
        ref_path = REPO / lab["folder"] / task["file"]
        reference = ref_path.read_text()
        path = student_file(folder, lab, task["file"])
        if path is None:
            plan["error"] = f"{lab['folder']}/{task['file']} is missing from the submission"
        else:
            try:
                text = splice(reference, path.read_text(errors="replace"), task,
                              f"{lab['folder']}/{task['file']} (reference)",
                              f"{lab['folder']}/{task['file']}")
            except LabError as e:
                plan["error"] = str(e)
        if not plan["error"]:
            plan["gtest"] = builder.plan(lab, text, "gtest", task)
            jobs.append(plan["gtest"])
            if "perf" in task:
                plan["program"] = builder.plan(lab, text, "program", task)
                plan["reference"] = builder.plan(lab, reference, "program", task)
                jobs += [plan["program"], plan["reference"]]
        plans.append(plan)
    return plans, jobs


def score_task(plan, built, args, work):
    """[(check, points, max, reason)] for one task."""
    task = plan["task"]
    pts = task["points"]
    rows = []
    checks = ["tests"] + task.get("sanitize", {}).get("tools", []) + (["perf"] if "perf" in task else [])

    def lose_all(reason, first="tests"):
        for c in checks:
            rows.append((c, 0, pts[c], reason if c == first else "not run: " + first + " failed"))
        return rows

    if plan["error"]:
        return lose_all(plan["error"])
    ok, binary, log = built[plan["gtest"]["key"]]
    if not ok:
        return lose_all("does not compile: " + compiler_message(log))
    if args.build_only:
        return [(c, 0, pts[c], "built; not run (--build-only)") for c in checks]
    passed, said, _ = check_tests(task, binary, args.timeout)
    rows.append(("tests", pts["tests"] if passed else 0, pts["tests"], said))
    for tool in task.get("sanitize", {}).get("tools", []):
        if not passed:
            rows.append((tool, 0, pts[tool], "not run: the tests must pass first"))
            continue
        clean, said, _ = check_sanitizer(task, binary, tool, max(args.timeout, 180), args.sanitizer)
        rows.append((tool, pts[tool] if clean else 0, pts[tool], said))
    if "perf" in task:
        if not passed:
            rows.append(("perf", 0, pts["perf"], "not run: the tests must pass first"))
        else:
            s_ok, s_bin, s_log = built[plan["program"]["key"]]
            r_ok, r_bin, r_log = built[plan["reference"]["key"]]
            if not (s_ok and r_ok):
                rows.append(("perf", 0, pts["perf"], "the program does not build: " +
                             compiler_message(s_log if not s_ok else r_log)))
            else:
                fast, said, _ = check_perf(task, s_bin, r_bin, args.timeout, work)
                rows.append(("perf", pts["perf"] if fast else 0, pts["perf"], said))
    return rows


def grade_plans(lab, plans, built, args, work):
    return [(p["task"], score_task(p, built, args, work)) for p in plans]


def table(lab, results, who=""):
    out = [f"Lab {lab['chapter']} ({lab['title']}){': ' + who if who else ''}",
           f"{'task':8} {'score':>7}  what"]
    total = maximum = 0
    for task, rows in results:
        got, most = sum(r[1] for r in rows), sum(r[2] for r in rows)
        total, maximum = total + got, maximum + most
        out.append(f"{task['id']:8} {got:>3}/{most:<3}  {task['title']}")
        for check, p, m, reason in rows:
            if p < m:
                out.append(f"{'':10}-{m - p} {check}: " + reason.replace("\n", "\n" + " " * 14))
    out.append(f"{'total':8} {total:>3}/{maximum:<3}")
    return "\n".join(out), total, maximum


def write_reports(lab, results, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tests, cases, failures = [], [], 0
    for task, rows in results:
        for check, p, m, reason in rows:
            name = f"{task['id']} {check}: {task['title']}"
            tests.append({"name": name, "score": p, "max_score": m, "output": reason})
            fail = "" if p == m else f'<failure message={quoteattr(reason[:300])}>{escape(reason)}</failure>'
            failures += p < m
            cases.append(f'  <testcase classname="lab.{task["id"]}" name={quoteattr(check)}>{fail}'
                         f'</testcase>')
    total = sum(t["score"] for t in tests)
    (out_dir / "results.json").write_text(json.dumps(
        {"score": total, "stdout_visibility": "visible", "tests": tests}, indent=1) + "\n")
    (out_dir / "junit.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuite name="lab.{lab["chapter"]}" tests="{len(cases)}" failures="{failures}">\n'
        + "\n".join(cases) + "\n</testsuite>\n")


def lab_of_folder(folder, chapter):
    if chapter:
        return find_lab(chapter)[0]
    meta = Path(folder) / ".lab.json"
    if meta.exists():
        return find_lab(json.loads(meta.read_text())["chapter"])[0]
    raise LabError(f"{folder}: no .lab.json (made by 'lab.py make'): say which lab with --lab")


def cmd_grade(args):
    lab = lab_of_folder(args.dir, args.lab)
    if not args.build_only:
        why = cannot_grade_reason(args.nvcc)
        if why:
            print(f"lab.py grade: CANNOT GRADE here: {why}\nNo score is given: this is not a "
                  "pass. Grade on a machine with an NVIDIA GPU and the CUDA toolkit.")
            return EXIT_CANNOT
    work = Path(args.work)
    builder = Builder(work, args.arch, args.nvcc, args.jobs, args.gtest_lib, args.gtest_include)
    plans, jobs = plan_submission(builder, lab, args.dir)
    built = builder.build_all(jobs)
    try:
        results = grade_plans(lab, plans, built, args, work)
    except CannotGrade as e:
        print(f"lab.py grade: CANNOT GRADE: {e}")
        return EXIT_CANNOT
    text, total, maximum = table(lab, results, str(args.dir))
    print(text)
    write_reports(lab, results, args.out or Path(args.dir) / "grade-report")
    print(f"(results.json and junit.xml in {args.out or Path(args.dir) / 'grade-report'})")
    return EXIT_OK if total == maximum else EXIT_LOST


def cmd_grade_class(args):
    lab = lab_of_folder(args.dir, args.lab) if args.lab else None
    if lab is None:
        raise LabError("grade-class needs --lab CHAPTER")
    why = cannot_grade_reason(args.nvcc)
    if why:
        print(f"lab.py grade-class: CANNOT GRADE here: {why}\nNo scores written.")
        return EXIT_CANNOT
    work = Path(args.work)
    builder = Builder(work, args.arch, args.nvcc, args.jobs, args.gtest_lib, args.gtest_include)
    folders = sorted(p for p in Path(args.dir).iterdir() if p.is_dir())
    planned = [(f, *plan_submission(builder, lab, f)) for f in folders]
    built = builder.build_all([j for _, _, jobs in planned for j in jobs])
    csv_path = Path(args.csv or Path(args.dir) / f"scores-{lab['chapter']}.csv")
    all_full = True
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student"] + [t["id"] for t in lab["tasks"]] + ["total", "max", "lost"])
        for folder, plans, _ in planned:
            try:
                results = grade_plans(lab, plans, built, args, work)
            except CannotGrade as e:
                print(f"lab.py grade-class: CANNOT GRADE: {e}")
                return EXIT_CANNOT
            text, total, maximum = table(lab, results, folder.name)
            print(text + "\n")
            write_reports(lab, results, work / "reports" / folder.name)
            lost = "; ".join(f"{t['id']} {c}: {r[:120]}" for t, rows in results
                             for c, p, m, r in rows if p < m)
            w.writerow([folder.name] + [sum(r[1] for r in rows) for _, rows in results] +
                       [total, maximum, lost])
            all_full &= total == maximum
    print(f"scores of {len(folders)} submissions: {csv_path}")
    return EXIT_OK if all_full else EXIT_LOST


# ---------------------------------------------------------------------------------------------
# list, check (CPU), selftest (GPU)
# ---------------------------------------------------------------------------------------------
def cmd_list():
    for lab in load_labs()["labs"]:
        print(f"{lab['chapter']}  {lab['title']}  (files: {', '.join(lab['files'])})")
        for t in lab["tasks"]:
            checks = ["tests"] + t.get("sanitize", {}).get("tools", []) + (
                [f"perf >= {100 * t['perf']['min_ratio']:.0f}% of the reference"] if "perf" in t else [])
            print(f"  {t['id']}  {sum(t['points'].values()):>2} pts  {t['title']}\n"
                  f"{'':10}{t['file']}: {', '.join(t['regions'])}; checks: {', '.join(checks)}")
    return EXIT_OK


def skeleton_leaks(lab, folder):
    """Solution lines found in a made skeleton: [(file, line)]."""
    leaks = []
    for name in lab["files"]:
        sol = (REPO / lab["folder"] / name).read_text()
        skel = (Path(folder) / lab["folder"] / name).read_text()
        skel_lines = {l.strip() for l in skel.split("\n")}
        leaks += [(name, l) for l in sorted(solution_lines(sol, name)) if l in skel_lines]
    return leaks


def cmd_check(args):
    """Every lab makes; no skeleton holds a line of its solution's regions; every skeleton (and,
    with --solutions, every solution) compiles with its folder's nvcc line."""
    failed = 0
    work = Path(tempfile.mkdtemp(prefix="lab-check-"))
    compiles = []
    for lab in load_labs()["labs"]:
        if args.labs and lab["chapter"] not in args.labs:
            continue
        for variant in ("skeleton", "solution"):
            folder = work / lab["chapter"] / variant
            cmd_make(lab["chapter"], folder, solution=variant == "solution")
            if variant == "skeleton":
                leaks = skeleton_leaks(lab, folder)
                for name, line in leaks:
                    print(f"FAIL {lab['chapter']}: the skeleton {name} holds solution text: {line}")
                failed += bool(leaks)
                for task in lab["tasks"]:
                    for name in task["regions"]:
                        body, _ = region_body((folder / lab["folder"] / task["file"]).read_text(),
                                              name, task["file"])
                        if not any(f"TODO(lab {task['id']})" in l for l in body):
                            print(f"FAIL {lab['chapter']}: region {name} has no TODO")
                            failed += 1
            if variant == "skeleton" or args.solutions:
                for name in lab["files"]:
                    compiles.append((lab, variant, folder, name))
        print(f"{lab['chapter']}: made (skeleton and solution), {len(lab['tasks'])} tasks")

    def compile_one(item):
        lab, variant, folder, name = item
        words = mutant.standalone_line(folder / lab["folder"] / name)
        words = [args.nvcc] + words[1:] + Builder(".", args.arch, args.nvcc, 1).arch_flags()
        words[words.index("-o") + 1] = str(folder / Path(name).stem)
        r = subprocess.run(words, cwd=folder / lab["folder"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return item, r.returncode, r.stdout

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for (lab, variant, folder, name), rc, out in pool.map(compile_one, compiles):
            print(f"{'ok  ' if rc == 0 else 'FAIL'} {lab['chapter']} {variant} {name} "
                  f"{'compiles' if rc == 0 else 'does not compile'}")
            if rc:
                print(compiler_message(out))
                failed += 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"lab.py check: {'all good' if not failed else f'{failed} problems'}")
    return EXIT_OK if not failed else EXIT_LOST


def mutated_folder(lab, name, dest):
    """A solution folder with one planted bug (tests/mutants) in it: a student's buggy file."""
    m = mutant.parse(REPO / "tests" / "mutants" / lab["folder"] / f"{name}.mutant")
    cmd_make(lab["chapter"], dest, solution=True)
    target = dest / m["source"]
    text = target.read_text()
    for find, replace in m["patches"]:
        if text.count(find) != 1:
            raise LabError(f"{name}: the find block does not match once in {m['source']}")
        text = text.replace(find, replace)
    target.write_text(text)
    return m


def changed_tasks(lab, folder):
    out = []
    for task in lab["tasks"]:
        ref = (REPO / lab["folder"] / task["file"]).read_text()
        mine = (Path(folder) / lab["folder"] / task["file"]).read_text()
        for name in task["regions"]:
            if region_body(ref, name, "ref")[0] != region_body(mine, name, "student")[0]:
                out.append(task["id"])
                break
    return out


def cmd_selftest(args):
    if not args.build_only:
        why = cannot_grade_reason(args.nvcc)
        if why:
            required = os.environ.get("CUDA_EXAMPLES_REQUIRE_GPU", "0") not in ("", "0")
            print(f"lab.py selftest: {'FAILED' if required else 'skipped'}: cannot run here: {why}")
            return EXIT_LOST if required else EXIT_CANNOT
    work = Path(args.work)
    builder = Builder(work, args.arch, args.nvcc, args.jobs, args.gtest_lib, args.gtest_include)
    failures, summary = [], []
    labs = [l for l in load_labs()["labs"] if not args.labs or l["chapter"] in args.labs]
    for lab in labs:
        _, st = find_lab(lab["chapter"])
        root = work / "selftest" / lab["chapter"]
        shutil.rmtree(root, ignore_errors=True)
        subs = []  # (name, folder, expectation)
        cmd_make(lab["chapter"], root / "skeleton")
        subs.append(("skeleton", root / "skeleton", {"all": 0}))
        cmd_make(lab["chapter"], root / "solution", solution=True)
        subs.append(("solution", root / "solution", {"all": "full"}))
        for name in st.get("mutants", []):
            folder = root / f"mutant-{name}"
            m = mutated_folder(lab, name, folder)
            tasks = changed_tasks(lab, folder)
            if not tasks:
                failures.append(f"{lab['chapter']} {name}: the planted bug is in no task's region")
            subs.append((f"bug {name}", folder, {"lose": tasks, "bug": m["bug"]}))
        if "hang" in st:
            h = st["hang"]
            folder = root / "hang"
            cmd_make(lab["chapter"], folder, solution=True)
            path = folder / lab["folder"] / h["file"]
            text = path.read_text()
            first, last, indent = regions(text, h["file"])[h["region"]]
            lines = text.split("\n")
            lines[first + 1:last] = [indent + c for c in h["code"]]
            path.write_text("\n".join(lines))
            subs.append(("hanging kernel", folder, {"lose": [h["task"]], "hang": True}))
        planned = [(n, f, e, *plan_submission(builder, lab, f)) for n, f, e in subs]
        started = time.time()
        built = builder.build_all([j for *_, jobs in planned for j in jobs])
        print(f"{lab['chapter']}: built {len(planned)} submissions in {time.time() - started:.0f} s")
        rows = []
        for name, folder, expect, plans, _ in planned:
            try:
                results = grade_plans(lab, plans, built, args, work)
            except CannotGrade as e:
                print(f"lab.py selftest: cannot grade: {e}")
                return EXIT_CANNOT
            text, total, maximum = table(lab, results, name)
            print(text + "\n")
            scores = {t["id"]: (sum(r[1] for r in rows_), sum(r[2] for r in rows_), rows_)
                      for t, rows_ in results}
            rows.append((name, scores, total, maximum))
            if args.build_only:
                if any(r[3].startswith("does not compile")
                                               for _, rr in results for r in rr):
                    failures.append(f"{lab['chapter']} {name}: does not compile")
                continue
            if expect.get("all") == 0 and total != 0:
                failures.append(f"{lab['chapter']} skeleton scores {total}, not 0")
            if expect.get("all") == "full" and total != maximum:
                failures.append(f"{lab['chapter']} solution scores {total}/{maximum}")
            for tid, (got, most, task_rows) in scores.items():
                if tid in expect.get("lose", []):
                    if got == most:
                        failures.append(f"{lab['chapter']} {name}: task {tid} kept all its points")
                    if expect.get("hang") and got != 0:
                        failures.append(f"{lab['chapter']} {name}: the hanging task scored {got}")
                    if expect.get("hang") and not any("did not finish" in r[3] for r in task_rows):
                        failures.append(f"{lab['chapter']} {name}: no 'did not finish' message")
                elif "lose" in expect and got != most:
                    failures.append(f"{lab['chapter']} {name}: task {tid}, untouched, lost points")
        ids = [t["id"] for t in lab["tasks"]]
        summary.append(f"\n### Lab {lab['chapter']}\n\n| submission | " + " | ".join(ids) +
                       " | total |\n|---|" + "---|" * (len(ids) + 1))
        for name, scores, total, maximum in rows:
            summary.append(f"| {name} | " + " | ".join(f"{scores[i][0]}/{scores[i][1]}" for i in ids)
                           + f" | {total}/{maximum} |")
    print("\n".join(summary))
    for f in failures:
        print("SELFTEST FAIL:", f)
    print(f"lab.py selftest: {'PASS' if not failures else f'{len(failures)} failures'}"
          f"{' (build only)' if args.build_only else ''}")
    return EXIT_OK if not failures else EXIT_LOST


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the labs and their tasks")
    mk = sub.add_parser("make", help="write a student folder")
    mk.add_argument("chapter")
    mk.add_argument("dir")
    mk.add_argument("--solution", action="store_true", help="the full programs (an answer folder)")

    def grading(q):
        q.add_argument("--arch", default="native", help="nvcc -arch (default native; e.g. sm_90)")
        q.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
        q.add_argument("--sanitizer", default=shutil.which("compute-sanitizer") or
                       "/usr/local/cuda/bin/compute-sanitizer")
        q.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
        q.add_argument("--timeout", type=int, default=60, help="seconds before a run is a hang")
        q.add_argument("--work", default=str(REPO / "build-lab"), help="builds and cache")
        q.add_argument("--build-only", action="store_true", help="build, run nothing")
        q.add_argument("--gtest-lib", action="append", default=[], help="default -lgtest -lgtest_main")
        q.add_argument("--gtest-include", action="append", default=[])

    gr = sub.add_parser("grade", help="grade one student's folder")
    gr.add_argument("dir", nargs="?", default=".")
    gr.add_argument("--lab", help="the lab (default: the folder's .lab.json)")
    gr.add_argument("--out", help="where results.json and junit.xml go (default DIR/grade-report)")
    grading(gr)
    gc = sub.add_parser("grade-class", help="grade every folder under SUBMISSIONS")
    gc.add_argument("dir")
    gc.add_argument("--lab", required=True)
    gc.add_argument("--csv", help="the table of scores (default SUBMISSIONS/scores-CH.csv)")
    grading(gc)
    ck = sub.add_parser("check", help="CPU: make every lab, no leaks, skeletons compile")
    ck.add_argument("--labs", nargs="*")
    ck.add_argument("--solutions", action="store_true", help="compile the solutions too")
    ck.add_argument("--arch", default="sm_90", help="nvcc -arch, or CMake's form (90-real)")
    ck.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ck.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    st = sub.add_parser("selftest", help="GPU: prove the grader on skeletons, solutions, bugs")
    st.add_argument("--labs", nargs="*")
    grading(st)
    args = p.parse_args()
    try:
        if args.command == "list":
            return cmd_list()
        if args.command == "make":
            lab = cmd_make(args.chapter, args.dir, args.solution)
            print(f"lab {lab['chapter']} written to {args.dir} ({'solution' if args.solution else 'skeleton'}):"
                  f" {', '.join(lab['files'])}; grade it with {args.dir}/grade.sh")
            return EXIT_OK
        if args.command == "grade":
            return cmd_grade(args)
        if args.command == "grade-class":
            return cmd_grade_class(args)
        if args.command == "check":
            return cmd_check(args)
        return cmd_selftest(args)
    except (LabError, mutant.MutantError) as e:
        print(f"lab.py: {e}")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())

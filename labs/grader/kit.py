"""The student's kit (make), the CPU check (check: every lab makes, no solution line anywhere in
a kit, skeletons compile) and the GPU self-test (selftest)."""
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import report
from .labs import (EXIT_CANNOT, EXIT_LOST, EXIT_OK, REPO, LabError, code_of, find_lab, load_labs,
                   region_body, regions, skeleton, solution_lines)

sys.path.insert(0, str(REPO / "tests" / "mutants"))
import mutant  # noqa: E402


def nvcc_line(source):
    return " ".join(mutant.standalone_line(source))


def handout(lab):
    """labs/<chapter>.md without the markers of its generated block (scripts/docs.py)."""
    path = REPO / "labs" / f"{lab['chapter']}.md"
    if not path.exists():
        return f"# Lab {lab['chapter']}: {lab['title']}\n"
    return "\n".join(l for l in path.read_text().split("\n")
                     if not re.match(r"\s*<!-- \[\[\[(cog .*|end)\]\]\] -->\s*$", l))


# What a student kit ships of the grader: the lint of its regions (lint.py in the kit runs it),
# never the drivers, the build or the solutions.
KIT_LINT_MODULES = ("__init__.py", "labs.py", "intake.py", "lint.py", "lintdir.py", "region_ast.py",
                    "device_ast.py", "clang_child.py")


def kit_lint_script(lab):
    return f'''#!/usr/bin/env python3
"""Checks the regions of this folder with the course grader's token rules, before it builds
anything: one line per violation, and which regions still hold their TODO. No GPU needed. (The
grader then also reads every region on clang's tree: a region this passes can still be refused
there, with the reason in the grade's report.)

    python3 lint.py          (exit 0: no violation; 1: violations, each on its line)

The lint is the course's own (labs/grader/, with this lab's entry of labs/labs.json)."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "labs"))
from grader import labs, lintdir  # noqa: E402

if __name__ == "__main__":
    lab = labs.find_lab("{lab['chapter']}")[0]
    sys.exit(lintdir.report(*lintdir.lint_folder(HERE, [lab]), command="lint.py"))
'''


def kit_grade_script(lab):
    return (f'''#!/bin/sh
# Grades this folder with the grading kit of lab {lab["chapter"]} that your instructor gives you
# (made with `lab.py kit`; it holds the grader and the reference prebuilt, never the solutions):
#     CUDA_EXAMPLES_GRADER=/where/you/unpacked/that/kit ./grade.sh
# It needs an NVIDIA GPU and the CUDA Toolkit. Without them: python3 lint.py checks your regions,
# and the build of README.md compiles your programs.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${{CUDA_EXAMPLES_GRADER:-}}" ]; then
  echo "grade.sh: nothing graded: set CUDA_EXAMPLES_GRADER to the grading kit of your course" >&2
  echo "          (lab.py kit); here, python3 lint.py checks your regions" >&2
  exit 77
fi
exec python3 "$CUDA_EXAMPLES_GRADER/scripts/lab.py" grade "$here" --lab {lab["chapter"]} \\
  --out "${{TMPDIR:-/tmp}}/lab-report-$(id -u)" "$@"
''')


def wrap_md(text, width=100):
    """Markdown paragraphs wrapped to width (lines that start a list, a table or code are kept)."""
    import textwrap
    out = []
    for para in text.split("\n\n"):
        if para.startswith(("    ", "|", "#", "- ", "```")):
            out.append(para)
        else:
            out.append(textwrap.fill(para, width, break_long_words=False, break_on_hyphens=False))
    return "\n\n".join(out)


def cmd_make(chapter, out, solution=False):
    """A student folder that works on its own: the skeletons (or, --solution, the programs),
    the headers they include, a CMakeLists.txt whose ctest runs each program (each checks its
    GPU result against its CPU reference; 77 is a skip without a GPU), lint.py with the course's
    lint, grade.sh for a grading kit, and README.md. It names nothing of this machine."""
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
    cmake = [f"# Lab {lab['chapter']}: build the programs of this folder (made by lab.py make);",
             "# ctest runs each: it checks its GPU result against its CPU reference (77: no GPU).",
             "cmake_minimum_required(VERSION 3.24)",
             "# The GPU of this machine where nvidia-smi sees one, unless you give",
             "# -DCMAKE_CUDA_ARCHITECTURES (or CUDAARCHS); without one, nvcc's default.",
             "if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})",
             "  execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _smi OUTPUT_QUIET ERROR_QUIET)",
             "  if(_smi EQUAL 0)", "    set(CMAKE_CUDA_ARCHITECTURES native)", "  endif()", "endif()",
             f"project(lab_{lab['chapter']} LANGUAGES CXX CUDA)",
             "set(CMAKE_CUDA_STANDARD 17)", "enable_testing()"]
    for target, name, line in builds:
        cmake.append(f"add_executable({target} {lab['folder']}/{name})")
        if libs(line):
            cmake.append(f"target_link_libraries({target} PRIVATE {libs(line)})")
        cmake.append(f"add_test(NAME {target} COMMAND {target} WORKING_DIRECTORY "
                     f"${{CMAKE_SOURCE_DIR}}/{lab['folder']})")
        cmake.append(f"set_tests_properties({target} PROPERTIES SKIP_RETURN_CODE 77)")
    (out / "CMakeLists.txt").write_text("\n".join(cmake) + "\n")
    # The lint, shipped: the modules it needs and this lab's entry of labs.json (todo texts,
    # stubs and rules: what the skeletons already show), never the drivers or the solutions.
    (out / "labs" / "grader").mkdir(parents=True)
    for name in KIT_LINT_MODULES:
        shutil.copy2(REPO / "labs" / "grader" / name, out / "labs" / "grader" / name)
    data = load_labs()
    (out / "labs" / "labs.json").write_text(json.dumps(
        {"about": data["about"], "labs": [lab]}, indent=1) + "\n")
    (out / "lint.py").write_text(kit_lint_script(lab))
    (out / "lint.py").chmod(0o755)
    # grade.sh is the student's convenience only: an instructor (or the Classroom workflow)
    # runs the course's own grader on the folder, with the lab named on the command line.
    (out / "grade.sh").write_text(kit_grade_script(lab))
    (out / "grade.sh").chmod(0o755)
    import textwrap
    tasks = "\n".join(textwrap.fill(
        f"- **{t['id']}** ({sum(t['points'].values())} points), `{lab['folder']}/{t['file']}`, "
        f"{'regions' if len(t['regions']) > 1 else 'region'} {', '.join(t['regions'])}: {t['title']}",
        100, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
        for t in lab["tasks"])
    lines = "\n".join(f"    (cd {lab['folder']} && {line})" for _, _, line in builds)
    readme = (handout(lab).rstrip() + "\n\n" + wrap_md(
        "## Your tasks\n\nWrite your code between the lines `// LAB <region> {` and `// LAB }` of "
        "each TODO, and keep those two lines: the grader takes each task's code from between them "
        "(code elsewhere is not graded). A region holds statements of its function only:\n\n"
        "- no #include or other directive (no `#` at all, not even in a comment), and no\n"
        "  declaration outside the function;\n"
        "- plain spellings (`&&`, `||`, `!`, `{`, not `and`, `or`, `not`, `<%`);\n"
        "- in a host region, no `&` or `*` pointer work and no cast but to the types its task\n"
        "  lists;\n"
        "- only the calls its task needs.\n\n"
        "Check with `python3 lint.py` in this folder (the course grader's own lint, in `labs/`; no "
        "GPU needed): it names every violation, and the regions that still hold their TODO.\n\n"
        "The tasks:\n\n" + tasks +
        "\n\n## Build and run\n\n    cmake -S . -B build && cmake --build build && ctest --test-dir build"
        "\n\nbuilds every program and runs each: a program checks its GPU result against its CPU "
        "reference and says PASS or FAIL (without a GPU, each exits 77 and ctest counts it skipped). "
        f"Or one program at a time:\n\n{lines}\n\n## Grade yourself\n\n"
        "    CUDA_EXAMPLES_GRADER=/where/you/unpacked/the/grading/kit ./grade.sh\n\n"
        "prints a score per task and the reason for every point lost. It needs the grading kit your "
        "instructor gives (it holds the grader and the reference prebuilt, not the solutions) and "
        "an NVIDIA GPU. Your instructor grades with the same grader, on inputs drawn when they "
        "grade.") + "\n")
    (out / "README.md").write_text(readme)
    return lab


def cmd_kit(chapter, out, arch, nvcc):
    """A grading kit for students to grade themselves without the solutions: the grader, the
    lab's drivers, headers and skeletons, and the reference drivers prebuilt (machine code
    only; kit.json holds their hashes). Made on a machine with nvcc; no GPU needed."""
    from .build import Builder, sha256_file
    from .fence import Fence
    lab, _ = find_lab(chapter)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise LabError(f"{out} exists and is not empty: give a new folder")
    cmd_make(chapter, out / "student")  # the skeletons: the kit's programs
    shutil.move(str(out / "student" / "common"), out / "common")
    shutil.move(str(out / "student" / lab["folder"]), out / lab["folder"])
    shutil.rmtree(out / "student")
    (out / "scripts").mkdir()
    shutil.copy2(REPO / "scripts" / "lab.py", out / "scripts" / "lab.py")
    shutil.copytree(REPO / "labs" / "grader", out / "labs" / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (out / "tests" / "mutants").mkdir(parents=True)
    shutil.copy2(REPO / "tests" / "mutants" / "mutant.py", out / "tests" / "mutants" / "mutant.py")
    (out / "labs").mkdir(exist_ok=True)
    shutil.copytree(REPO / "labs" / "drivers", out / "labs" / "drivers")
    data = load_labs()
    (out / "labs" / "labs.json").write_text(json.dumps(
        {"about": data["about"], "labs": [lab]}, indent=1) + "\n")
    work = Path(tempfile.mkdtemp(prefix="lab-kit-"))
    try:
        builder = Builder(work, arch, nvcc, Fence("setsid"), shared_cache=False)
        refs = {}
        for task in lab["tasks"]:
            binary, _ = builder.reference(lab, task, (REPO / lab["folder"] / task["file"]).read_text())
            dest = out / "reference" / task["id"] / "driver"
            dest.parent.mkdir(parents=True)
            shutil.copy2(binary, dest)
            subprocess.run(["strip", str(dest)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            refs[task["id"]] = sha256_file(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    (out / "kit.json").write_text(json.dumps({"lab": lab["chapter"], "arch": arch,
                                              "references": refs}, indent=1) + "\n")
    leaks = kit_leaks(lab, out)
    if leaks:
        raise LabError(f"the kit holds solution text: {leaks[:3]}")
    return lab


def cmd_list():
    for lab in load_labs()["labs"]:
        print(f"{lab['chapter']}  {lab['title']}  (files: {', '.join(lab['files'])})")
        for t in lab["tasks"]:
            checks = ["tests"] + t.get("sanitize", {}).get("tools", []) + (
                [f"perf >= {100 * t['perf']['min_ratio']:.0f}% of the reference"] if "perf" in t else [])
            print(f"  {t['id']}  {sum(t['points'].values()):>2} pts  {t['title']}\n"
                  f"{'':10}{t['file']}: {', '.join(t['regions'])}; checks: {', '.join(checks)}")
    return EXIT_OK


def kit_leaks(lab, folder):
    """Solution lines (of any task's region) found in any text file of a made kit, the lint's
    Python and labs.json that it ships included: [(kit file, line)]."""
    sol = set()
    for name in lab["files"]:
        sol |= solution_lines((REPO / lab["folder"] / name).read_text(), name)
    leaks = []
    for p in sorted(Path(folder).rglob("*")):
        if not p.is_file() or p.suffix not in (".cu", ".h", ".cpp", ".md", ".txt", ".sh", ".py",
                                               ".json", ""):
            continue
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        found = {code_of(l) for l in text.split("\n")}
        leaks += [(str(p.relative_to(folder)), l) for l in sorted(sol & found)]
    return leaks


def cmd_check(args):
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
                leaks = kit_leaks(lab, folder)
                for name, line in leaks:
                    print(f"FAIL {lab['chapter']}: the kit's {name} holds solution text: {line}")
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
        words = [args.nvcc] + words[1:] + mutant.arch_flags(args.arch)
        words[words.index("-o") + 1] = str(folder / Path(name).stem)
        # Nothing runs what this builds: the line's host optimization (-O2) becomes -O0, which
        # takes a quarter off each compile (15 s to 11 s for Dot-SM-Warp.cu on the 2-core CI
        # machine). The warnings come from the compilers' front ends, the same at any -O.
        words = ["-O0" if w in ("-O1", "-O2", "-O3") else w for w in words]
        r = subprocess.run(words, cwd=folder / lab["folder"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return item, r.returncode, r.stdout

    from .score import compiler_message
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for (lab, variant, folder, name), rc, out in pool.map(compile_one, compiles):
            warnings = unexpected_warnings(lab, name, out) if variant == "skeleton" else []
            good = rc == 0 and not warnings
            print(f"{'ok  ' if good else 'FAIL'} {lab['chapter']} {variant} {name} "
                  f"{'does not compile' if rc else 'compiles'}"
                  f"{' with a warning' if rc == 0 and warnings else ''}")
            if rc:
                print(compiler_message(out) or out[-1500:])
            for w in warnings:
                print("    " + w)
            failed += not good
    shutil.rmtree(work, ignore_errors=True)
    print(f"lab.py check: {'all good' if not failed else f'{failed} problems'}")
    return EXIT_OK if not failed else EXIT_LOST


def unexpected_warnings(lab, name, log):
    """The compiler's warnings on a skeleton, but for the variables that a region's TODO leaves
    to the student ('unused_in_skeleton' in labs/labs.json): a skeleton must compile cleanly."""
    allowed = {v for t in lab["tasks"] if t["file"] == name for spec in t["regions"].values()
               for v in spec.get("unused_in_skeleton", [])}
    out = []
    for line in log.split("\n"):
        if not re.search(r"\bwarning\s*[#:]", line):
            continue
        m = re.search(r'variable "(\w+)" was (declared but never referenced|set but never used)', line)
        if m and m.group(1) in allowed:
            continue
        out.append(line.strip())
    return out


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


def tree_hash(folder):
    h = hashlib.sha256()
    for p in sorted(Path(folder).rglob("*")):
        if p.is_symlink():
            h.update(f"L{p}->{os.readlink(p)}".encode())
        elif p.is_file():
            h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


def cmd_selftest(args, grade_folders):
    sys.path.insert(0, str(REPO / "tests" / "labs" / "cheats"))
    import cheats  # noqa: E402  (tests/labs/cheats/cheats.py)
    work = Path(args.work)
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
        spared = []
        for c in cheats.CHEATS:
            if c["lab"] != lab["chapter"]:
                continue
            if c.get("harms_neighbours") and getattr(args, "spare_neighbours", False):
                spared.append(c["name"])
                continue
            folder = root / f"cheat-{c['name']}"
            cmd_make(lab["chapter"], folder, solution=True)
            c["make"](folder, lab)
            subs.append((f"cheat {c['name']}", folder, {"zero": c.get("zero", []), "lose": c.get("lose", []), "cheat": c}))
        hashes = {n: tree_hash(f) for n, f, _ in subs}
        started = time.time()
        unlinted = {f for _, f, e in subs if "cheat" in e and e["cheat"].get("lint") is False}
        graded, why = grade_folders(lab, [f for _, f, _ in subs], args, unlinted=unlinted)
        took = time.time() - started
        if why:
            required = os.environ.get("CUDA_EXAMPLES_REQUIRE_GPU", "0") not in ("", "0")
            print(f"lab.py selftest: {'FAILED' if required else 'skipped'}: cannot run here: {why}")
            return EXIT_LOST if required else EXIT_CANNOT
        m = graded[0][2]
        print(f"fence: {m['fence_detail']}")
        if spared:
            print(f"{lab['chapter']}: left out (--spare-neighbours), graded by tests/labs/neighbours.py "
                  f"with the GPU to itself: {', '.join(spared)}")
        print(f"{lab['chapter']}: {len(subs)} submissions graded in {took:.0f} s (builds {m.get('build_s')} s, "
              f"{m.get('builds')} distinct programs built, {m.get('gradings_shared')} tasks graded once for "
              f"several submissions with the same program; speed gates {m.get('speed_gates_s')} s, of which "
              f"{m.get('speed_gate_wait_s')} s waiting for the lock)")
        print(f"{lab['chapter']}: the lint took {m.get('lint_s')} s; fenced runs (count, seconds of their own, "
              f"side by side): " + ", ".join(f"{k} {n} in {s} s" for k, (n, s) in m.get("runs", {}).items())
              + f"; {m.get('runs_lock_wait_s')} s waiting for the GPU lock")
        rows = []
        for (name, folder, expect), (_, results, meta) in zip(subs, graded):
            text, total, maximum = report.table(lab, results, name)
            print(text + "\n")
            scores = {t["id"]: (sum(r[1] for r in rr), sum(r[2] for r in rr), rr) for t, rr in results}
            rows.append((name, scores, total, maximum))
            out = report.write_reports(lab, results, work / "selftest-reports" / lab["chapter"] /
                                       name.replace(" ", "-"), meta, folder)
            doc = json.loads((out / "results.json").read_text())
            if doc["score"] != total or doc.get("fence") != meta.get("fence"):
                failures.append(f"{lab['chapter']} {name}: the report is not the grader's")
            if tree_hash(folder) != hashes[name]:
                failures.append(f"{lab['chapter']} {name}: the grader changed the submission folder")
            if args.build_only:
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
                elif tid in expect.get("zero", []):
                    if got != 0:
                        failures.append(f"{lab['chapter']} {name}: the attacked task {tid} scored {got}")
                elif ("lose" in expect or "zero" in expect) and got != most:
                    failures.append(f"{lab['chapter']} {name}: task {tid}, untouched, lost points: "
                                    + "; ".join(r[3][:200] for r in task_rows if r[1] < r[2]))
            if "cheat" in expect:
                for tid, most in expect["cheat"].get("at_most", {}).items():
                    if scores[tid][0] > most:
                        failures.append(f"{lab['chapter']} {name}: task {tid} scored {scores[tid][0]}, "
                                        f"more than the {most} it may")
                if expect["cheat"].get("lint") is False and any(
                        "does not compile" in r[3] for _, rr in results for r in rr):
                    failures.append(f"{lab['chapter']} {name}: the attack does not compile: it proves nothing")
                for problem in expect["cheat"].get("after", lambda f, r: [])(folder, out):
                    failures.append(f"{lab['chapter']} {name}: {problem}")
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

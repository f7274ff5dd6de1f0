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
    # grade.sh is the student's convenience only: an instructor (or the Classroom workflow)
    # runs the course's own grader on the folder, with the lab named on the command line.
    grade = ("#!/bin/sh\n# Grades this folder with the course's grader (its own driver, never a "
             "file from here).\n# CUDA_EXAMPLES_REPO: the course repository or the grading kit "
             "(docs/instructors.md).\n"
             f'REPO="${{CUDA_EXAMPLES_REPO:-{REPO}}}"\n'
             f'exec python3 "$REPO/scripts/lab.py" grade "$(dirname "$0")" --lab {lab["chapter"]} '
             '--out "${TMPDIR:-/tmp}/lab-report-$(id -u)" "$@"\n')
    (out / "grade.sh").write_text(grade)
    (out / "grade.sh").chmod(0o755)
    tasks = "\n".join(f"| {t['id']} | `{lab['folder']}/{t['file']}` | {', '.join(t['regions'])} "
                      f"| {sum(t['points'].values())} | {t['title']} |" for t in lab["tasks"])
    lines = "\n".join(f"    (cd {lab['folder']} && {line})" for _, _, line in builds)
    readme = (handout(lab).rstrip() + "\n\n## Your tasks\n\nWrite your code between the lines "
              "`// LAB <region> {` and `// LAB }` of each TODO, and keep those two lines: the grader "
              "takes each task's code from between them (code elsewhere is not graded). A region "
              "holds statements of its function only: no #include or other directive (no `#` at "
              "all, not even in a comment), no declaration outside the function, plain spellings "
              "(`&&`, `||`, `!`, `{`, not `and`, `or`, `not`, `<%`), in a host region no `&` or "
              "`*` pointer work and no cast but to the types its task lists, and only the calls "
              "its task needs (check with "
              f"`python3 {REPO}/scripts/lab.py lint . --lab {lab['chapter']}` in this folder: the "
              "course repository's lint, on your files).\n\n"
              "| task | file | regions | points | what |\n|---|---|---|---|---|\n" + tasks +
              "\n\n## Build and run\n\n    cmake -S . -B build && cmake --build build\n\nor, one "
              f"program at a time:\n\n{lines}\n\n## Grade yourself\n\n    ./grade.sh\n\nprints a "
              "score per task and the reason for every point lost (it needs the course's grading "
              "kit and a GPU). Your instructor grades with the same grader, on inputs drawn when "
              "they grade.\n")
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
    """Solution lines (of any task's region) found in any text file of a made kit:
    [(kit file, line)]."""
    sol = set()
    for name in lab["files"]:
        sol |= solution_lines((REPO / lab["folder"] / name).read_text(), name)
    leaks = []
    for p in sorted(Path(folder).rglob("*")):
        if not p.is_file() or p.suffix not in (".cu", ".h", ".cpp", ".md", ".txt", ".sh", ""):
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
        for c in cheats.CHEATS:
            if c["lab"] != lab["chapter"]:
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
        print(f"{lab['chapter']}: {len(subs)} submissions graded in {took:.0f} s (builds {m.get('build_s')} s, "
              f"{m.get('builds')} distinct programs built, {m.get('gradings_shared')} tasks graded once for "
              f"several submissions with the same program; speed gates {m.get('speed_gates_s')} s, of which "
              f"{m.get('speed_gate_wait_s')} s waiting for the lock)")
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

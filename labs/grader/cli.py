"""The command line of scripts/lab.py (its docstring lists the commands)."""
import argparse
import concurrent.futures
import csv
import io
import os
import shutil
import tempfile
import time
from pathlib import Path

from . import lint, lintdir, region_ast, report, score
from .build import Builder
from .fence import KINDS, Fence, gpu_probe
from .kit import cmd_check, cmd_kit, cmd_list, cmd_make, cmd_selftest
from .labs import EXIT_CANNOT, EXIT_LOST, EXIT_OK, EXIT_USAGE, REPO, LabError, find_lab


def cmd_lint(args):
    """Every region of every task of the lab in DIR: one line per violation."""
    lab = find_lab(args.lab)[0] if args.lab else None
    labs = [lab] if lab else [find_lab(c)[0] for c in ("ch02", "ch03", "ch04", "ch05", "ch06")]
    # In the course, the grader's own check: the token rules, then every region by whitelist on
    # clang's tree in the course's copy of its program (a kit's lint.py has no course copy).
    def ahead(regions):  # clang's parses side by side, a child a core
        region_ast.warm(lint.parse_requests(regions), os.cpu_count() or 1)
    return lintdir.report(*lintdir.lint_folder(args.dir, labs, only_present=not args.lab,
                                               course=REPO, ahead=ahead))


def make_fence(args):
    return Fence(getattr(args, "fence", None), tools=[getattr(args, "nvcc", None),
                                                      getattr(args, "sanitizer", None)])


def weak_fence_refused(fence, args, command):
    """The message (exit 2) where only a fence that leaves the file system in view works here
    and the instructor did not accept it; None otherwise."""
    if not fence.weak or getattr(args, "accept_weak_fence", False) or getattr(args, "build_only", False):
        return None
    return (f"lab.py {command}: REFUSED: the only fence that works here is '{fence.kind}', which "
            "leaves this machine's files (the course repository, the reference drivers, the "
            "cache, other submissions) in view of student code, so its grades could be forged.\n"
            "Grade as root on Linux (mount, PID and network namespaces: the 'namespaces' fence), "
            "or where unprivileged user namespaces are allowed ('namespaces-user'); or pass "
            "--accept-weak-fence to grade anyway, knowing that.\nfence: " + fence.describe())


def grade_folders(lab, folders, args, names=None, fence=None, unlinted=()):
    """[(folder, results, meta)]: every folder graded, each task on its own. unlinted: folders
    whose regions are not linted (lab.py selftest only: cheats that stand for an attacker who
    got past the lint, to prove that the fence holds by itself)."""
    fence = fence or make_fence(args)
    names = names or [Path(f).name for f in folders]
    meta = {"fence": fence.kind, "fence_detail": fence.describe()}
    why = None if args.build_only else gpu_probe()
    if why is None and not args.build_only and (not args.nvcc or not Path(args.nvcc).exists()):
        why = "nvcc was not found (install the CUDA toolkit, or pass --nvcc)"
    if why:
        return [(f, report.cannot_grade_results(lab, why), dict(meta, cannot_grade=why)) for f in folders], why
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="lab-grade-"))
    scratch.chmod(0o711)
    builder = grader = None
    try:
        builder = Builder(work, args.arch, args.nvcc, fence, shared_cache=fence.namespaces or fence.drops_uid)
        started = time.time()
        prepared = score.prepare_many(lab, folders, REPO, unlinted, workers=max(1, args.jobs))
        linted = time.time()
        reference_text = {t["id"]: (REPO / lab["folder"] / t["file"]).read_text() for t in lab["tasks"]}
        grader = score.Grader(builder, fence, scratch, args.timeout, args.sanitizer, args.seed)
        grader.gpu = score.GpuLock(work / "gpu.lock")  # every grader of this machine shares it
        grader.label = lab["chapter"]
        if os.environ.get("CUDA_EXAMPLES_LAB_TRACE"):  # docs/grader.md: where the time goes
            trace_dir = Path(os.environ["CUDA_EXAMPLES_LAB_TRACE"])
            trace_dir.mkdir(parents=True, exist_ok=True)
            grader.trace = open(trace_dir / f"{lab['chapter']}-{os.getpid()}.jsonl", "a")
            grader.note(run="lint", asked=started, got=started, ended=linted)
        builds = concurrent.futures.ThreadPoolExecutor(max(1, args.jobs))
        try:
            # The references first, the students' programs queued behind them at once (waiting
            # for the references before queueing them left nvcc idle: in command 2 on an H200, 21 s
            # between ch02's lint and its first student build).
            ref_builds = {t["id"]: builds.submit(builder.reference, lab, t, reference_text[t["id"]])
                          for t in lab["tasks"]}
            # The grader's launcher too, where a task's speed gate has one (built once and cached:
            # Builder.launcher). Built when the first gate asked for it, it held every gate of the
            # grading back by its build: in command 2 on an H200 (d2c8079), 6 s between ch02's last
            # check and its gates, beside the other tests.
            if not args.build_only and any(t.get("perf", {}).get("launcher") for t in lab["tasks"]):
                builds.submit(builder.launcher)

            def build(item):
                task, text = item
                slot = fence.take_slot()
                began = time.time()
                try:
                    return builder.student(lab, task, text, scratch, slot, args.build_timeout)
                finally:
                    fence.give_slot(slot)
                    grader.note(run="build", program=task["id"], asked=began, got=began, ended=time.time())
            # One build of each distinct program: the build reads nothing of the submission but
            # the spliced text (Builder.tree), so two submissions with the same text for a task
            # (a class's untouched skeletons; in lab.py selftest, the solution's text in every
            # cheat that attacks another task) get the same binary, read-only to the code it runs.
            jobs, same = {}, {}
            for i, prep in enumerate(prepared):
                for task in lab["tasks"]:
                    text, _ = prep[task["id"]]
                    if text is not None:
                        key = (task["id"], text)
                        if key not in same:
                            same[key] = builds.submit(build, (task, text))
                        jobs[(i, task["id"])] = same[key]
            refs = {k: v.result()[0] for k, v in ref_builds.items()}
            builds_done = [0.0]

            def done(_):
                builds_done[0] = time.time()
            for f in same.values():
                f.add_done_callback(done)
            first_use = {id(v): k for k, v in reversed(list(jobs.items()))}  # leftovers counted once

            def grade_one(pair):
                # A task of a submission is graded as soon as its program is built, while the
                # builds of the others go on (the graders wait on the GPU, the builds on the
                # CPUs), and beside the submission's other tasks: one after another, a
                # solution's tasks made a chain of seven runs in ch04 (each task's tests, then
                # its sanitizers), whose last began 84 s into command 2's self-tests on an H200.
                i, task = pair
                text, error = prepared[i][task["id"]]
                plan = {"error": error, "reference": refs[task["id"]]}
                if text is not None:
                    binary, log, left = jobs[(i, task["id"])].result()
                    if first_use[id(jobs[(i, task["id"])])] == (i, task["id"]):
                        with grader.clock:
                            grader.left_over += left
                    plan.update(binary=binary, log=log)
                if args.build_only:
                    return [(c, 0, task["points"][c], "built; not run (--build-only)" if plan.get("binary")
                             else (error or "does not compile: " + score.compiler_message(plan.get("log", ""))))
                            for c in score.checks_of(task)]
                return grader.task(task, plan, gates=False)
            # Two parts: every test and sanitizer run first, the GPU shared; then every speed
            # gate, back to back, the GPU held alone once for all of them (Grader.gates).
            pairs = [(i, task) for i in range(len(folders)) for task in lab["tasks"]]
            with concurrent.futures.ThreadPoolExecutor(max(1, min(8, args.jobs))) as pool:
                graded = iter(pool.map(grade_one, pairs))
                all_results = [[(task, next(graded)) for task in lab["tasks"]] for _ in folders]
            due = {}  # {(task id, program): what gates() takes}: one gate a program
            for results in all_results:
                for task, rows in results:
                    waiting = grader.due(task, rows)
                    if waiting is not None:
                        due.setdefault(waiting[0], waiting)
            done = grader.gates(list(due.values()), workers=max(1, min(8, args.jobs))) if due else {}
            all_results = [[(task, grader.finish(task, rows, done)) for task, rows in results]
                           for results in all_results]
        finally:
            builds.shutdown(wait=True, cancel_futures=True)
        meta["build_s"] = round(max(builds_done[0], linted) - linted, 1) if same else 0.0
        meta["builds"] = len(same)
        meta["left_over_processes_killed"] = grader.left_over
        meta["gradings_shared"] = grader.shared  # tasks whose program was graded for another submission
        meta["runs_retried_alone"] = grader.retried  # runs that could not get the GPU, run again
        meta["speed_gates_s"], meta["speed_gate_wait_s"] = round(grader.perf_s, 1), round(grader.perf_wait_s, 1)
        meta["lint_s"] = round(linted - started, 1)
        meta["runs"] = {k: [n, round(s, 1)] for k, (n, s) in sorted(grader.runs.items())}
        meta["runs_lock_wait_s"] = round(grader.lock_wait_s, 1)
        return [(f, r, dict(meta)) for f, r in zip(folders, all_results)], None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if builder is not None:
            builder.close()
        if grader is not None and grader.trace is not None:
            grader.trace.close()


def lab_from_args(args):
    chapter = args.lab or os.environ.get("CUDA_LAB")
    if not chapter:
        raise LabError("say which lab with --lab CHAPTER (or CUDA_LAB): the grader never takes it "
                       "from the submission")
    return find_lab(chapter)[0]


def cmd_grade(args):
    out = Path(args.out) if args.out else Path(args.work) / "reports" / (Path(args.dir).resolve().name or "submission")
    try:
        lab = lab_from_args(args)
    except LabError as e:
        print(f"lab.py grade: {e}")
        return EXIT_USAGE
    times = getattr(args, "times", 1)
    if times < 1 or (times > 1 and args.seed is not None):
        print("lab.py grade: --times takes a count of 1 or more, and gives each grading a seed of its "
              "own (so not with --seed)")
        return EXIT_USAGE
    fence = make_fence(args)
    refused = weak_fence_refused(fence, args, "grade")
    if refused:
        print(refused)
        return EXIT_USAGE
    if times == 1:
        return grade_once(lab, args, fence, out)[0]
    # The same folder graded again and again, each grading from scratch with a seed (inputs,
    # shapes, the speed gate's shape) of its own: a grade a student can trust is the same every
    # time, and a submission at full marks should stay there (an instructor's check, and the
    # self-test's "the solution at full marks 10 times out of 10").
    full = 0
    for k in range(times):
        rc, total, maximum = grade_once(lab, args, fence, out / f"grading-{k + 1}")
        if rc == EXIT_CANNOT or rc == EXIT_USAGE:
            return rc
        full += rc == EXIT_OK
        print(f"grading {k + 1} of {times}: {total}/{maximum}\n")
    print(f"lab.py grade: full marks in {full} of {times} gradings, each with a seed of its own")
    return EXIT_OK if full == times else EXIT_LOST


def grade_once(lab, args, fence, out):
    """(exit code, total, maximum): one grading of args.dir, its report in OUT."""
    try:
        report.safe_dir(out, args.dir)
    except LabError as e:
        print(f"lab.py grade: {e}")
        return EXIT_USAGE, 0, 0
    try:
        [(folder, results, meta)], why = grade_folders(lab, [args.dir], args, fence=fence)
    except Exception as e:  # noqa: BLE001  (the report still says what happened)
        why = None
        results = report.cannot_grade_results(lab, f"the grader failed: {type(e).__name__}: {e}")
        meta = {"grader_error": str(e), "fence": fence.kind, "fence_detail": fence.describe()}
    report.write_reports(lab, results, out, meta, args.dir)
    if why:
        # Nothing ran: no table of zeros that would read like points lost; the fence that would
        # have run (the report keeps it too), then the one line that says why nothing was graded.
        print(report.fence_line(meta.get("fence_detail", "?")))
        print(report.cannot_grade_line(why))
        return EXIT_CANNOT, 0, 0
    text, total, maximum = report.table(lab, results, str(args.dir), meta.get("fence_detail"))
    print(text)
    print(f"(results.json and junit.xml in {out})")
    if "grader_error" in meta:
        return EXIT_LOST, total, maximum
    return (EXIT_OK if total == maximum else EXIT_LOST), total, maximum


def cmd_grade_class(args):
    lab = lab_from_args(args)
    root = Path(args.dir)
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    fence = make_fence(args)
    refused = weak_fence_refused(fence, args, "grade-class")
    if refused:
        print(refused)
        return EXIT_USAGE
    try:
        graded, why = grade_folders(lab, folders, args, fence=fence)
    except Exception as e:  # noqa: BLE001  (every student still gets a row and a report)
        why = None
        error = f"the grader failed: {type(e).__name__}: {e}"
        graded = [(f, report.cannot_grade_results(lab, error), {"grader_error": error, "fence": fence.kind,
                                                                "fence_detail": fence.describe()})
                  for f in folders]
    csv_path = Path(args.csv or root / f"scores-{lab['chapter']}.csv")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["student"] + [t["id"] for t in lab["tasks"]] + ["total", "max", "lost"])
    all_full = True
    for folder, results, meta in graded:
        text, total, maximum = report.table(lab, results, folder.name, meta.get("fence_detail"))
        print(text + "\n")
        try:
            report.write_reports(lab, results, Path(args.work) / "reports" / folder.name, meta, folder)
        except LabError as e:
            print(f"lab.py grade-class: {folder.name}: {e}")
        lost = "; ".join(f"{t['id']} {c}: {r[:120]}" for t, rows in results for c, p, m, r in rows if p < m)
        w.writerow([folder.name] + [sum(r[1] for r in rows) for _, rows in results] + [total, maximum, lost])
        all_full &= total == maximum
    out_dir = report.safe_dir(csv_path.parent)
    report.write_atomic(out_dir, csv_path.name, buf.getvalue())
    print(f"scores of {len(folders)} submissions: {csv_path}"
          f" (fence: {graded[0][2].get('fence_detail') if graded else '?'})")
    if why:
        print(f"lab.py grade-class: CANNOT GRADE here: {why}")
        return EXIT_CANNOT
    if graded and "grader_error" in graded[0][2]:
        print(f"lab.py grade-class: {graded[0][2]['grader_error']}")
    return EXIT_OK if all_full else EXIT_LOST


def build_parser(doc):
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the labs and their tasks")
    mk = sub.add_parser("make", help="write a student folder")
    mk.add_argument("chapter")
    mk.add_argument("dir")
    mk.add_argument("--solution", action="store_true", help="the full programs (an answer folder)")
    kt = sub.add_parser("kit", help="a grading kit without the solutions (reference prebuilt)")
    kt.add_argument("chapter")
    kt.add_argument("dir")
    kt.add_argument("--arch", default="sm_90", help="nvcc -arch of the prebuilt reference")
    kt.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    li = sub.add_parser("lint", help="check the regions of a folder (no GPU)")
    li.add_argument("dir")
    li.add_argument("--lab", help="the lab (default: every lab whose files are there)")

    def grading(q):
        q.add_argument("--arch", default="native", help="nvcc -arch (default native; e.g. sm_90)")
        q.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
        q.add_argument("--sanitizer", default=shutil.which("compute-sanitizer") or
                       "/usr/local/cuda/bin/compute-sanitizer")
        q.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
        q.add_argument("--timeout", type=int, default=60, help="seconds before a run is a hang")
        q.add_argument("--build-timeout", type=int, default=300, help="seconds before a build is stopped")
        q.add_argument("--work", default=str(REPO / "build-lab"), help="builds, cache and reports")
        q.add_argument("--build-only", action="store_true", help="build, run nothing")
        q.add_argument("--seed", type=int, help="the inputs' seed (default: a new one each run)")
        q.add_argument("--fence", choices=list(KINDS),
                       help="force a fence (default: the strongest that works here)")
        q.add_argument("--accept-weak-fence", action="store_true",
                       help="grade even where only a fence that leaves the file system in view "
                            "works (unshare+setpriv, setsid): its grades can be forged")
        q.add_argument("--gtest-lib", action="append", default=[], help=argparse.SUPPRESS)
        q.add_argument("--gtest-include", action="append", default=[], help=argparse.SUPPRESS)

    gr = sub.add_parser("grade", help="grade one student's folder")
    gr.add_argument("dir", nargs="?", default=".")
    gr.add_argument("--lab", help="the lab (or CUDA_LAB); never read from the submission")
    gr.add_argument("--out", help="where results.json and junit.xml go (default WORK/reports/NAME)")
    gr.add_argument("--times", type=int, default=1,
                    help="grade it N times, each with a new seed (reports in OUT/grading-K); exit 0 "
                         "only if every grading gave full marks")
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
    st = sub.add_parser("selftest", help="GPU: prove the grader on skeletons, solutions, bugs, cheats")
    st.add_argument("--labs", nargs="*")
    st.add_argument("--spare-neighbours", action="store_true",
                    help="leave out the cheats that take the GPU from every process beside them, "
                         "graders or not (tests/labs/neighbours.py grades them with the GPU to itself)")
    grading(st)
    return p


def run(doc, argv=None):
    args = build_parser(doc).parse_args(argv)
    try:
        if args.command == "list":
            return cmd_list()
        if args.command == "make":
            lab = cmd_make(args.chapter, args.dir, args.solution)
            print(report.wrapped(
                f"lab {lab['chapter']} written to {args.dir} ({'solution' if args.solution else 'skeleton'}):"
                f" {', '.join(lab['files'])}; lint it with {Path(args.dir) / 'lint.py'}, grade it "
                f"with {Path(args.dir) / 'grade.sh'} and a grading kit (lab.py kit)"))
            return EXIT_OK
        if args.command == "kit":
            lab = cmd_kit(args.chapter, args.dir, args.arch, args.nvcc)
            print(f"grading kit of lab {lab['chapter']} written to {args.dir} (no solution source "
                  f"inside): students grade with CUDA_EXAMPLES_GRADER={args.dir} ./grade.sh")
            return EXIT_OK
        if args.command == "lint":
            return cmd_lint(args)
        if args.command == "grade":
            return cmd_grade(args)
        if args.command == "grade-class":
            return cmd_grade_class(args)
        if args.command == "check":
            return cmd_check(args)
        fence = make_fence(args)
        refused = weak_fence_refused(fence, args, "selftest")
        if refused and gpu_probe() is None:  # without a GPU it skips (77), whatever the fence
            print(refused)
            return EXIT_USAGE
        return cmd_selftest(args, lambda *a, **k: grade_folders(*a, fence=fence, **k))
    except LabError as e:
        print(f"lab.py: {e}")
        return EXIT_USAGE
    except region_ast.MissingClang as e:
        print(f"lab.py: cannot grade here: {e}")
        return EXIT_CANNOT

"""The points of a task. Every point comes from the grader's own work: the driver's output files
compared with the reference's for the same seed (verify), compute-sanitizer's summary of the
driver's run, and the driver's CUDA-event timings of the student's and the reference's launches,
alternated, on fresh inputs, with the timed outputs checked too. Never from what the student's
program prints or its exit code.

A submission must not be able to tell a sanitizer's run from a checked one: both are the same
command (the driver, a seed, an output file), at the tests' shapes, with a seed of their own. The
timed runs use a shape drawn from the grade's seed within the task's "perf.shapes" (labs/labs.json),
named in the report; before every timed launch the inputs are drawn afresh (the launcher's) or
restored as they were uploaded (the driver's) and the outputs poisoned, and every launch's output
and inputs are checked (labs/drivers/driver.h). Where a task names a "launcher", its timed runs
are not the student's program at all: the grader's launcher (labs/drivers/launcher.cu) loads the
student's kernels, compiled as a module, and launches and times them itself. Where it names a
"plan" (ch06.1, whose student code is a schedule: host code that only orders operations), the
student's program runs once to record the order it asks for, the grader checks that plan, and
the reference's own driver carries it out and times it.

Every run on the GPU holds the GPU lock: shared by the checked and sanitizer runs, alone by a
performance gate. A run that could not get the GPU (no context, no memory: a neighbour took it)
runs again, alone on the GPU, and is never scored as the student's fault."""
import concurrent.futures
import contextlib
import fcntl
import json
import os
import random
import re
import secrets
import shutil
import statistics
import threading
import time
from pathlib import Path

from . import build, intake, lint, region_ast, verify
from .fence import REF_GID, safe_read
from .labs import LabError, file_task, kit_info, region_body, splice

PERF_ROUNDS, PERF_ROUNDS_AT_MOST = 3, 7  # rounds of a speed gate: as a rule, and while under it
# Two rounds are enough where both are far from the gate: each ratio at least halfway from the
# gate to the reference's speed (a pass), or under PERF_HOPELESS of the gate (a fail). The
# order is flipped between them, and another job on the GPU only slows the side it shares the
# GPU with: a slow submission passes early only if the reference was slowed in both rounds.
PERF_DECIDED_AFTER = 2
# More rounds only while the ratio is within this factor of the gate: another job on the GPU
# slowed an honest ch06 schedule to 12% of the reference's speed against a gate of 70% (0.17 of
# the gate); a submission at 1% of the gate is slow, and its seven rounds cost minutes.
PERF_HOPELESS = 0.1
# One round is enough where it is under this fraction of the gate: a thousand times under the
# slowest honest round seen (0.17 of the gate, above). A run that slow holds the GPU alone for
# seconds while every other grader waits: in command 2 on an H200 (be5da94) one of ch02's
# self-test gates took 13 s, 12 s of it two timed runs of a kernel at 1.4 s a launch (the
# reference's run: 21 launches in 39 ms).
PERF_FAR_GONE = 0.001
# The time limit of the reference's checked runs, whatever --timeout says (which is the
# student's): the reference is the course's code and does not hang, and one that ran out of a
# short limit beside other runs ran again alone on the GPU, which stalls every grader of the
# machine while the GPU drains. In command 2 on an H200 (bada666) two ch06 reference checks ran
# out of the self-tests' 30 s beside their tasks' memcheck runs (0.4 s each alone), and their
# retries waited 12.6 s for the GPU, every other run of the machine waiting with them.
REFERENCE_CHECK_S = 180
WHAT = {"memcheck": "an out-of-bounds or misaligned memory access",
        "racecheck": "a race in shared memory: threads read and write the same place with no "
                     "__syncthreads() between them",
        "synccheck": "a barrier used wrongly (a __syncthreads() that not all threads reach, or a "
                     "shuffle with a wrong mask)"}


def draw_shapes(ranges, seed, purpose, count):
    """[{param: value}]: `count` shapes drawn within `ranges` ({param: [lo, hi]}) from the
    grade's seed (the same seed and purpose give the same shapes: a grade can be replayed)."""
    rng = random.Random(f"{seed}/{purpose}")
    return [{k: rng.randint(lo, hi) for k, (lo, hi) in sorted(ranges.items())} for _ in range(count)]


def shape_params(shapes):
    """The driver's --param words for these shapes: NAME=V1,V2,... (one value per shape)."""
    words = []
    for k in sorted(shapes[0]) if shapes else []:
        words += ["--param", f"{k}=" + ",".join(str(s[k]) for s in shapes)]
    return words


def shape_text(shapes):
    return "; ".join(" ".join(f"{k}={v}" for k, v in sorted(s.items())) for s in shapes)


def checks_of(task):
    return ["tests"] + task.get("sanitize", {}).get("tools", []) + (["perf"] if "perf" in task else [])


def lose_all(task, reason, first="tests"):
    pts = task["points"]
    return [(c, 0, pts[c], reason if c == first else f"not run: {first} failed") for c in checks_of(task)]


def compiler_message(log, limit=12):
    lines = [l for l in log.split("\n") if l.strip()]
    errors = [i for i, l in enumerate(lines) if "error" in l]
    start = errors[0] if errors else 0
    return "\n".join(lines[start:start + limit])


def prepare(lab, folder, repo, lint_regions=True):
    """Intake and lint of one folder: {task id: (spliced text, None) or (None, why)}.
    lint_regions=False only in lab.py selftest (a cheat that stands for an attacker who got
    past the lint)."""
    return prepare_many(lab, [folder], repo, unlinted=() if lint_regions else (folder,))[0]


def prepare_many(lab, folders, repo, unlinted=(), workers=1):
    """prepare() of every folder: each task's file taken in and its regions read, then every
    region's parse by clang, side by side in at most `workers` children, each distinct region
    once (region_ast.warm), then each task judged. unlinted: folders whose regions are not
    linted (lab.py selftest only)."""
    read, todo = [], []  # per folder {task id: (text, [(region, spec, body, first)], why)}
    for folder in folders:
        taken, tasks = intake.take(folder, lab), {}
        for task in lab["tasks"]:
            text, why, _ = taken[task["file"]]
            shown = f"{lab['folder']}/{task['file']}"
            try:
                regions = [] if text is None else [(name, spec, *region_body(text, name, shown))
                                                   for name, spec in task["regions"].items()]
            except LabError as e:
                text, why = None, str(e)
            tasks[task["id"]] = (text, regions if text is not None else None, why)
            if text is not None and folder not in unlinted:
                program = repo / lab["folder"] / task["file"]
                todo += [(program, body, first, spec, name) for name, spec, body, first in regions]
        read.append(tasks)
    region_ast.warm(lint.parse_requests(todo), workers)
    out = []
    for folder, tasks in zip(folders, read):
        got = {}
        for task in lab["tasks"]:
            text, regions, why = tasks[task["id"]]
            if text is None:
                got[task["id"]] = (None, why)
                continue
            shown = f"{lab['folder']}/{task['file']}"
            program = repo / lab["folder"] / task["file"]
            try:
                problems = []
                for name, spec, body, first in (regions if folder not in unlinted else ()):
                    problems += lint.check_region(body, first, spec, shown, name, program)
                if problems:
                    got[task["id"]] = (None, "the region lint refused your code (nothing was built):\n" +
                                       "\n".join(problems[:8]))
                    continue
                whole = file_task(lab, task) if kit_info(repo) else task
                got[task["id"]] = (splice(program.read_text(), text, whole, f"{shown} (reference)", shown), None)
            except LabError as e:
                got[task["id"]] = (None, str(e))
        out.append(got)
    return out


# The driver's exit code for "could not get the GPU" (driver.h: EXIT_CODE_NO_GPU_NOW), and what a
# run that hit the same wall inside the program's own allocations prints.
NO_GPU_NOW = 75
NO_GPU_SIGNS = ("cudaErrorMemoryAllocation", "cudaErrorDevicesUnavailable", "CUDA_ERROR_OUT_OF_MEMORY",
                "out of memory", "Out of memory", "Internal Sanitizer Error")
# What a kernel that touched a guard page (driver.h: GuardedMemory) leaves in the output.
FAULT_SIGNS = ("cudaErrorIllegalAddress", "an illegal memory access")


class GpuLock:
    """Who may use the GPU: every run takes the lock shared, a performance gate (or a run that
    could not get the GPU beside others) takes it alone. One lock file per GPU, in the grader's
    work folder, so every grader of the machine shares it. A turnstile keeps a waiting
    exclusive taker from starving behind a stream of shared ones. Re-entrant in one thread: the
    gate's own runs do not wait for the gate."""

    def __init__(self, path):
        self.path, self.turnstile = Path(path), Path(f"{path}.turnstile")
        self.mine = threading.local()

    @contextlib.contextmanager
    def hold(self, alone=False):
        if getattr(self.mine, "held", None):
            yield
            return
        with open(self.turnstile, "a") as gate, open(self.path, "a") as lock:
            fcntl.flock(gate, fcntl.LOCK_EX)
            if not alone:
                fcntl.flock(gate, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
            if alone:
                fcntl.flock(gate, fcntl.LOCK_UN)
            self.mine.held = "alone" if alone else "shared"
            try:
                yield
            finally:
                self.mine.held = None
                fcntl.flock(lock, fcntl.LOCK_UN)

    def alone(self):
        return getattr(self.mine, "held", None) == "alone"


# The red zone memcheck keeps after every allocation of a sanitizer run: any access up to 16 MiB
# past an array's end is reported, whatever lies beyond it (the drawn shapes are smaller).
MEMCHECK_PADDING = 16 << 20


class Tampered(Exception):
    """Fenced code changed what the grader reads (the task scores 0)."""


LAUNCHER_PHASES = re.compile(r"^launcher: main at ([0-9.]+), go at ([0-9.]+), done at ([0-9.]+); ms: "
                             r"context ([0-9.]+) module ([0-9.]+) inputs ([0-9.]+) launches ([0-9.]+)$", re.M)


def launcher_phases(text):
    """{} or, for a run of the grader's launcher, where its time went as the launcher's own line
    says (labs/drivers/launcher.cu), for the trace: main_at, go_at and done_at (seconds since the
    epoch: against the trace's started, got and ended, the fence's and the process's start, its
    turn and its exit) and the milliseconds of each phase. Only the trace reads it; no score
    does."""
    found = LAUNCHER_PHASES.findall(text or "")
    if not found:
        return {}
    main_at, go_at, done_at, context, module, inputs, launches = (float(v) for v in found[-1])
    return {"main_at": main_at, "go_at": go_at, "done_at": done_at,
            "ms": {"context": context, "module": module, "inputs": inputs, "launches": launches}}


class Grader:
    def __init__(self, builder, fence, scratch, timeout, sanitizer, seed=None):
        self.builder, self.fence, self.scratch = builder, fence, Path(scratch)
        self.timeout, self.sanitizer, self.fixed_seed = timeout, sanitizer, seed
        # The grade's seed: the shapes of the sanitizer and timed runs are drawn from it.
        self.grade_seed = seed if seed is not None else secrets.randbits(62)
        self.left_over = 0  # processes found alive after a fenced run (and killed)
        self.perf_s = self.perf_wait_s = 0.0  # the speed gates' time (lock wait included), the wait
        self.clock = threading.Lock()
        # One grading of each distinct program: {(task id, binary): Future of its rows}.
        self.graded, self.shared = {}, 0
        # The seeds of the checked runs: {(task id, "tests" or a sanitizer's name): seed}, drawn
        # once a grading, and the reference's output at each: {(task id, seed): Future of its
        # path}, made once (reference_output).
        self.seeds, self.expected = {}, {}
        self.gpu = None  # the GpuLock (set by grade_folders; None: no lock, e.g. a unit test)
        self.retried = 0  # runs that could not get the GPU and ran again alone
        self.dropped = []  # timed runs started ahead whose turn never came (drop_round, reap)
        # {kind of run ("check", "time", "plan", a sanitizer's name): [runs, seconds]}, the
        # fenced runs' own time (lock waits apart: lock_wait_s), for lab.py selftest's report
        self.runs, self.lock_wait_s = {}, 0.0
        # Where the time goes, run by run: a file of JSON lines (cli.py: CUDA_EXAMPLES_LAB_TRACE),
        # one per fenced run and one per speed gate, with the moments it asked for the GPU, got
        # it and gave it back; None: no trace. The task a thread grades names its runs there.
        self.trace, self.label, self.doing = None, "", threading.local()

    def seed(self):
        return self.fixed_seed if self.fixed_seed is not None else secrets.randbits(62)

    def seed_of(self, task, purpose):
        """The seed of one kind of checked run of a task ("tests", or a sanitizer's name): drawn
        the first time this grading asks, then the same for every submission graded with it
        (grade-class, lab.py selftest), so the reference's output at it is made once
        (reference_output). A run learns nothing from it that its own run would not: it is new
        to every grading, nothing a run leaves outlives it (the fence), and a submission's
        tests and each of its sanitizer runs still have seeds of their own."""
        if self.fixed_seed is not None:
            return self.fixed_seed
        with self.clock:
            return self.seeds.setdefault((task["id"], purpose), secrets.randbits(62))

    def reference_output(self, task, ref, seed):
        """A Future of the path of the reference's checked output at seed: one run of the
        reference a seed in this grading, in a thread of its own so that the student's run goes
        on beside it. The file lies in that run's folder, which no later run sees and which
        lives as long as the grading. A failed run raises LabError in every waiter, and the
        next one to ask runs it again."""
        key = (task["id"], seed)
        with self.clock:
            made = self.expected.get(key)
            if made is not None and not (made.done() and made.exception() is not None):
                return made
            made = self.expected[key] = concurrent.futures.Future()

        def run():
            self.doing.task = task["id"]
            try:
                rc, text, out = self.run_driver(ref, "check", seed, max(self.timeout, REFERENCE_CHECK_S),
                                                reference=True)
                if rc != 0:
                    raise LabError(f"the reference driver failed (exit {rc}) in the fence: {text[-600:]}")
                made.set_result(out)
            except BaseException as e:  # noqa: BLE001  (every waiter sees it)
                made.set_exception(e)
        threading.Thread(target=run, daemon=True, name=f"reference {task['id']}").start()
        return made

    def run_driver(self, binary, mode, seed, timeout, tool=None, reference=False, params=(), show=()):
        """(rc, output, path of the output file): one fenced run of a driver, which sees its own
        folder and that one program. mode "check" (the tests, and every sanitizer run: the same
        command), "time" (a timed run) or "plan" (a schedule's plan run, at the timed shape).
        reference: a run of the reference build (its own uids, which no student run has).
        A sanitizer's log that is not a regular file (a symbolic link, a
        FIFO the program left in place of it) raises Tampered: the task scores 0. params: the
        driver's --param words (a timed run's drawn shape). show: more files the run may read.
        A run that could not get the GPU runs again, alone on it; so does a checked run of the
        reference that ran out of time beside other runs (it reads nothing of the student's, so
        only its neighbours made it slow: in command 2 on an H200 at 92199978 a ch06.2 reference
        check ran out of the self-tests' 20 s beside a racecheck run and a student's run that ran
        out of time too, where that run's other ch06.2 reference checks took 0.4 to 15 s, and the task of
        the submission it was checking scored 0 for it)."""
        lock = self.gpu.hold if self.gpu else (lambda alone=False: contextlib.nullcontext())
        asked = time.time()
        with lock():
            got = self._timed_run(asked, binary, mode, seed, timeout, tool, reference, params, show)
        slowed = reference and mode == "check" and got[0] == "timeout"
        if self.gpu and not self.gpu.alone() and (self.no_gpu(got) or slowed):
            with self.clock:
                self.retried += 1
            asked = time.time()
            with lock(alone=True):
                got = self._timed_run(asked, binary, mode, seed, timeout, tool, reference, params, show)
        return got

    def run_started(self, started, binary, seed, params, reference, show):
        """(rc, output, path of the output file) of a timed run started ahead (start_round): its
        go, while the gate holds the GPU alone. One that could not get the GPU (its context,
        made while others had the GPU) runs again from the start."""
        got = self._timed_run(time.time(), binary, "time", seed, self.timeout, None, reference, params,
                              show, warm=started)
        if self.no_gpu(got):
            with self.clock:
                self.retried += 1
            got = self.run_driver(binary, "time", seed, self.timeout, params=params, reference=reference,
                                  show=show)
        return got

    def _timed_run(self, asked, binary, mode, seed, timeout, tool, reference, params, show, warm=None):
        started, rc, text = time.time(), "raised", ""
        try:
            if warm is not None:  # a timed run started ahead of its turn (start_round): its turn
                warm["run"].go()
                got = self._end_driver(warm, timeout)
            else:
                got = self._run_driver(binary, mode, seed, timeout, tool, reference, params, show)
            rc, text = got[0], got[1]
            return got
        finally:
            ended = time.time()
            with self.clock:
                self.lock_wait_s += started - asked
                tally = self.runs.setdefault(tool or mode, [0, 0.0])
                tally[0] += 1
                tally[1] += ended - started
            self.note(run=tool or mode, reference=reference, program=Path(binary).name, rc=rc,
                      alone=bool(self.gpu and self.gpu.alone()), asked=asked, got=started, ended=ended,
                      **({"started": warm["at"]} if warm is not None else {}),
                      # a timed run's only: there the grader's program writes the output (the
                      # lint refuses printf in device code); a checked run's is the student's
                      # program's, which could print a line of the same form (for the trace only:
                      # no score reads it)
                      **launcher_phases(text if self.trace is not None and mode == "time" else ""))

    def note(self, **what):
        """One line of the trace (self.trace), if there is one."""
        if self.trace is None:
            return
        line = json.dumps(dict(lab=self.label, task=getattr(self.doing, "task", None), **what))
        with self.clock:
            self.trace.write(line + "\n")
            self.trace.flush()

    @staticmethod
    def no_gpu(got):
        rc, text = got[0], got[1]
        return rc == NO_GPU_NOW or (rc not in (0, "timeout") and any(s in text for s in NO_GPU_SIGNS))

    def _run_driver(self, binary, mode, seed, timeout, tool, reference, params, show):
        return self._end_driver(self._start_driver(binary, mode, seed, timeout, tool, reference, params,
                                                   show), timeout)

    def _start_driver(self, binary, mode, seed, timeout, tool, reference, params, show, waits=False):
        """A fenced run of a driver, started: {"run": the FencedRun, "slot", "out", "log",
        "tool", "at"}, for _end_driver. waits: started ahead of its turn (--wait), it opens the
        GPU and waits for its go (driver.h: Driver::wait_for_go)."""
        slot = self.fence.take_slot()
        try:
            jail = self.fence.jail(self.scratch, slot, f"run-{os.urandom(6).hex()}", reference)
            out = jail / f"out-{os.urandom(6).hex()}.bin"
            words = [str(binary), "--seed", str(seed), "--out", str(out)]
            words += {"time": ["--time"], "plan": ["--plan"]}.get(mode, []) + (["--wait"] if waits else [])
            words += list(params)
            log = jail / "sanitizer.log"
            if tool:
                # memcheck sees an access only where no allocation is: a read just past one array
                # can land in the next one and pass unseen (an H200 grade gave a cheat that reads
                # a[n + 64] full memcheck points). --padding puts a red zone after every allocation
                # the program's own code makes with cudaMalloc; the driver's buffers have guard
                # pages of their own (driver.h).
                pad = ["--padding", str(MEMCHECK_PADDING)] if tool == "memcheck" else []
                words = [self.sanitizer, "--tool", tool, *pad, "--error-exitcode", "86",
                         "--print-limit", "5", "--log-file", str(log)] + words
            run = self.fence.start(words, jail, slot, timeout, show=[binary, *show], reference=reference,
                                   waits=waits)
        except BaseException:
            self.fence.give_slot(slot)
            raise
        return {"run": run, "slot": slot, "out": out, "log": log, "tool": tool, "at": time.time()}

    def _end_driver(self, started, timeout):
        """(rc, output, path of the output file) of a run _start_driver started, `timeout`
        seconds from now at most (a waiting run that had no go ends without running)."""
        try:
            rc, text, left = started["run"].finish(timeout)
            with self.clock:
                self.left_over += left
            if started["tool"]:
                data, why = safe_read(started["log"], 1 << 20)
                if data is None and why != "missing":
                    raise Tampered(f"the sanitizer's log was replaced by the program ({why})")
                if data is not None:
                    text = data.decode(errors="replace")[-20000:] + "\n" + text
            return rc, text, started["out"]
        finally:
            self.fence.give_slot(started["slot"])

    def reference_copy(self, binary):
        """The cached reference, hash-checked, copied where only the reference's runs may run
        it (group REF_GID, no access for others; a namespace fence shows it to no other run)."""
        self.builder.verified(binary)
        dest = self.scratch / "ref" / f"reference-{os.urandom(4).hex()}"
        dest.parent.mkdir(exist_ok=True)
        dest.parent.chmod(0o711)
        shutil.copyfile(binary, dest)
        if self.fence.drops_uid:
            os.chown(dest, 0, REF_GID)
            dest.chmod(0o550)
        else:
            dest.chmod(0o500)
        self.builder.verified(binary)
        return dest

    def tests(self, task, ref, mine):
        seed = self.seed_of(task, "tests")
        expected = self.reference_output(task, ref, seed)
        rc, text, out = self.run_driver(mine, "check", seed, self.timeout)
        ref_out = expected.result()
        if rc == "timeout":
            return False, (f"your code did not finish within {self.timeout} s and was stopped (an "
                           "endless loop? an index that never reaches n? a barrier that not every "
                           "thread of the block reaches?)")
        ok, why = verify.compare_files(ref_out, out, task.get("tolerance", {}))
        if ok:
            return True, f"{why} (seed {seed})"
        tail = " / ".join(l for l in text.strip().split("\n")[-3:] if l.strip())[:400]
        if rc != 0 and any(s in text for s in FAULT_SIGNS):
            return False, (f"your kernel accessed memory outside its buffers (seed {seed}): every "
                           "buffer lies between unmapped guard pages, ending where its memory ends "
                           "and then starting where it starts, so a read or write even one element "
                           f"past the end or before the start stops the kernel: {tail}")
        said = f"wrong output (seed {seed}): {why}"
        if rc != 0 and tail:
            said += f"; the program stopped (exit {rc}): {tail}"
        return False, said

    def sanitize(self, task, ref, mine, tool):
        """compute-sanitizer over the same command as the tests' (the program cannot tell the
        two apart by its arguments), at the tests' shapes, with a seed of its own (its random
        shapes and inputs are new); its output must match the reference's for that seed, so a
        program that finds out that it is watched and skips its work there loses the points."""
        seed = self.seed_of(task, tool)
        at = f" (the tests' shapes, seed {seed})"
        expected = self.reference_output(task, ref, seed)
        rc, text, out = self.run_driver(mine, "check", seed, max(self.timeout, 180), tool)
        ref_out = expected.result()
        if rc == "timeout":
            return False, f"compute-sanitizer --tool {tool} did not finish and was stopped{at}"
        counts = [int(n) for n in re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)", text)]
        try:
            recs, _ = verify.read_records(out)
            whole = len(recs) > 0
        except verify.BadOutput:
            whole = False
        if counts and max(counts) == 0 and rc == 0 and whole:
            same, why = verify.compare_files(ref_out, out, task.get("tolerance", {}))
            if not same:
                return False, (f"compute-sanitizer --tool {tool}: the program's output under the "
                               f"sanitizer is not the reference's{at}: {why}")
            return True, f"compute-sanitizer --tool {tool}: no errors{at}"
        hazards = [l.lstrip("= ").strip() for l in text.split("\n")
                   if l.startswith("=") and re.search(r"Error|error|hazard|Race|Barrier|Invalid", l)]
        said = "; ".join(hazards[:3])[:500] or " / ".join(text.strip().split("\n")[-3:])[:400]
        if counts and max(counts) == 0:
            return False, f"compute-sanitizer --tool {tool}: the program did not finish its runs{at}: {said}"
        return False, f"compute-sanitizer --tool {tool} found {WHAT[tool]}{at}: {said}"

    def grader_folder(self, name):
        """A folder of the scratch folder for files the grader writes for its runs (0711: a run
        reaches only the files it is shown, by their names)."""
        folder = self.scratch / name
        with self.clock:
            folder.mkdir(exist_ok=True)
            folder.chmod(0o711)
        return folder

    def grader_file(self, folder, who, suffix, data, reference_only):
        """A file the grader writes for a run to read, shown to it read-only: a new name, created
        anew (O_EXCL, never through a link left in its place), and where the fence drops the uid,
        readable by the reference's runs alone when only they read it."""
        path = folder / f"{who}-{os.urandom(6).hex()}{suffix}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if reference_only and getattr(self.fence, "drops_uid", False):
            os.chown(path, 0, REF_GID)
            path.chmod(0o440)
        else:
            path.chmod(0o444)
        return path

    def timed_programs(self, task, ref, mine, shape, params):
        """({who: (program, extra words, files it must see, runs as the reference)}, None) of the
        timed runs, or (None, why the student's side cannot be timed). A task with a "launcher"
        (labs/labs.json perf.launcher): the grader's launcher, given the device code of each
        side's build as a module, so that no student host code runs in a timed run and the
        timings are written by the grader's program. A task with a "plan" (ch06.1, whose
        schedule is host code): the reference's driver, carrying out each side's plan
        (plan_files). Otherwise: the drivers themselves."""
        spec = task["perf"].get("launcher")
        if task["perf"].get("plan"):
            files, why = self.plan_files(task, ref, mine, shape, params)
            if files is None:
                return None, why
            return {who: (ref, ["--run-plan", str(f)], [f], True) for who, f in files.items()}, None
        if not spec:
            return {"reference": (ref, [], [], True), "student": (mine, [], [], False)}, None
        folder = self.grader_folder("launch")
        with self.clock:  # one copy of the launcher a grading, in the scratch folder, hash-checked
            if getattr(self, "launcher_copy", None) is None:
                built = self.builder.verified(self.builder.launcher())
                self.launcher_copy = folder / f"launcher-{os.urandom(4).hex()}"
                shutil.copyfile(built, self.launcher_copy)
                self.launcher_copy.chmod(0o555)
                self.builder.verified(built)
            launcher = self.launcher_copy
        programs = {}
        extra = [w for k, v in sorted(spec.get("params", {}).items()) for w in ("--param", f"{k}={v}")]
        for who, binary in (("reference", ref), ("student", mine)):
            module = self.grader_file(folder, who, ".fatbin", build.device_code(binary, spec["kernel"]),
                                      reference_only=who == "reference")
            programs[who] = (launcher, ["--module", str(module), "--kernel", spec["kernel"]] + extra,
                             [module], who == "reference")
        return programs, None

    def plan_files(self, task, ref, mine, shape, params):
        """({who: plan file}, None) or (None, why): each side's schedule at the timed shape,
        as the grader hands it to the reference's driver. Each build runs once in plan mode
        (driver.h: --plan) and records the operations its schedule queued; the grader reads
        that record as it reads any output of fenced code and checks every value
        (verify.read_plan: integers, at most 3 x chunks operations, each within its range),
        then writes the plan anew, one operation a line, readable by the reference's runs
        only. The student's program never sees the timed runs, and never writes a timing."""
        name = f"{task['perf']['variant']}.plan"
        folder = self.grader_folder("plans")
        seed = self.seed()
        files = {}
        for who, binary in (("reference", ref), ("student", mine)):
            rc, text, out = self.run_driver(binary, "plan", seed, self.timeout, params=params,
                                            reference=who == "reference")
            ops, why = (None, None)
            if rc == 0:
                ops, why = verify.read_plan(out, name, shape["chunks"], shape["streams"])
            if ops is None and who == "reference":
                raise LabError(f"the reference's plan run failed (exit {rc}): {why or text[-400:]}")
            if rc == "timeout":
                return None, f"your schedule did not finish its plan run within {self.timeout} s"
            if rc != 0:
                tail = " / ".join(l for l in text.strip().split("\n")[-3:] if l.strip())[:400]
                return None, f"your schedule's plan run failed (exit {rc}): {tail}"
            if ops is None:
                return None, f"the plan your program recorded was refused: {why}"
            plan = "".join(" ".join(str(v) for v in op) + "\n" for op in ops).encode()
            files[who] = self.grader_file(folder, who, ".plan", plan, reference_only=True)
        return files, None

    def perf(self, task, ref, mine):
        """Reference and student alternated under the same conditions: the same shape (drawn from
        the grade's seed within "perf.shapes"), the same inputs in a round (a new seed a round),
        the order flipped every round, alone on the GPU (the GPU lock, held alone). Each run is
        the median of the timed launches (CUDA events), each launch on inputs of its own (drawn
        afresh by the launcher, restored as uploaded by the driver) and freshly poisoned outputs,
        every launch's output and inputs compared with the reference's; where the task has a
        launcher, the grader's launcher runs and times the student's kernel, and where it has a
        plan, the reference's driver carries out and times the student's schedule
        (timed_programs). The verdict takes the better of two estimates of the speed ratio, best time against best time and the median of the rounds' ratios: another
        job on the machine only makes a run slower, so both are honest for an honest submission,
        and neither makes a slow one fast. PERF_DECIDED_AFTER rounds where both are far from the
        gate, otherwise PERF_ROUNDS, and more (up to PERF_ROUNDS_AT_MOST) while under the gate
        but within PERF_HOPELESS of it; one round where it is under PERF_FAR_GONE of the gate."""
        ready = self.perf_ready(task, ref, mine)
        return self.perf_gate(task, *ready) if ready[0] is not None else (False, ready[1])

    def perf_ready(self, task, ref, mine):
        """(programs, params, at) of a speed gate, or (None, why it fails before it starts):
        its shape drawn, its timed programs made (timed_programs), the GPU shared."""
        perf = task["perf"]
        shape = draw_shapes(perf.get("shapes", {}), self.grade_seed, f"{task['id']}/perf", 1)
        params = shape_params(shape) if perf.get("shapes") else []
        at = f" at {shape_text(shape)} (drawn from the grade's seed {self.grade_seed})" if params else ""
        programs, why = self.timed_programs(task, ref, mine, shape[0], params)
        if programs is None:
            return None, f"{perf['what']}{at}: {why}"
        return programs, params, at

    def perf_gate(self, task, programs, params, at, way=None, k=0):
        """A speed gate in a hold of the GPU alone (gates() holds it already for all of a
        grading's gates). way, k: the runway its runs start on (runway()) and the gate's place on
        it; without one, the gate makes its own and starts its first rounds before the hold."""
        own = way is None
        if own:
            way = self.runway([(programs, params)])
            self.top_up(way)
        asked = time.time()
        try:
            with (self.gpu.hold(alone=True) if self.gpu else contextlib.nullcontext()):
                got = time.time()
                with self.clock:  # (lab.py selftest reports how long the gates waited for the lock)
                    self.perf_wait_s += got - asked
                try:
                    return self.gate(task, task["perf"], programs, params, at, way, k)
                finally:
                    self.note(run="gate", asked=asked, got=got, ended=time.time())
        finally:
            if own:
                self.land(way)

    # How many timed runs wait ahead of their turn at most (runway): each holds a GPU context, and
    # its memory, while it waits, and contexts opened together were slower (command 2 on an H200
    # at a302223: eight opened at once took 5.4 to 6.3 s each, against 1.2 to 2.6 s at e176711).
    AHEAD = 6

    def runway(self, gates):
        """The timed runs of speed gates (gates: [(programs, params)], in the order they run),
        started ahead of their turn (start_round) in that order: each gate's first
        PERF_DECIDED_AFTER rounds, at most AHEAD runs waiting at a time (top_up), the next
        started as each round is taken (take_round). A later round (a gate undecided after its
        first ones) starts when it is due. In command 2 on an H200 (e176711) opening the GPU took
        1.2 to 2.6 s of each of ch02's 20 timed runs (1.7 to 9.0 s in all), while the gate held
        the GPU alone against every other grader."""
        return {"gates": gates, "plan": [(k, r) for k in range(len(gates))
                                         for r in range(1, PERF_DECIDED_AFTER + 1)],
                "ready": {}, "taken": set(), "done": set()}

    def top_up(self, way):
        """Start planned rounds, in order, until AHEAD runs wait. A round that cannot start is
        left to its gate, which starts it when it is due and says why if it cannot."""
        while 2 * (len(way["ready"]) + 1) <= self.AHEAD:
            todo = [kr for kr in way["plan"] if kr not in way["ready"] and kr not in way["taken"]
                    and kr[0] not in way["done"]]
            if not todo:
                return
            way["taken"].add(todo[0])  # (started here or never: its gate starts it if due)
            try:
                way["ready"][todo[0]] = self.start_round(*way["gates"][todo[0][0]])
            except Exception:  # noqa: BLE001
                return

    def take_round(self, way, k, r, likely_more=False):
        """(seed, {who: started run}): round r of gate k, started ahead or now; then, from the
        last planned round on and where its gate is likely to need it (likely_more), the gate's
        next round (dropped if it is not needed: end_gate); then the next planned rounds. A
        round started when it was due opened the GPU while the gate held it alone: in command 2
        on an H200 (ab4730b) the third to seventh rounds of one of ch02's gates took 2.2 to
        2.9 s each, the launches 0.1 to 0.2 s of it, and the gate 14.9 s."""
        rnd = way["ready"].pop((k, r), None)
        way["taken"].add((k, r))
        if rnd is None:
            rnd = self.start_round(*way["gates"][k])
        if likely_more and PERF_DECIDED_AFTER <= r < PERF_ROUNDS_AT_MOST and (k, r + 1) not in way["taken"]:
            way["taken"].add((k, r + 1))  # (started here or, if it cannot start, when due)
            try:
                way["ready"][(k, r + 1)] = self.start_round(*way["gates"][k])
            except Exception:  # noqa: BLE001
                pass
        self.top_up(way)
        return rnd

    def end_gate(self, way, k):
        """Gate k is decided: its rounds still waiting are dropped, the next gates' start."""
        way["done"].add(k)
        self.drop_round(way.pop("current", (None, {})))  # its runs that had no turn (a failure)
        for kr in [kr for kr in way["ready"] if kr[0] == k]:
            self.drop_round(way["ready"].pop(kr))
        self.top_up(way)

    def land(self, way):
        """Every run of the runway that never had its turn dropped, and all reaped (after the
        hold: reaping waits for each process's end)."""
        way["done"].update(range(len(way["gates"])))
        for rnd in way["ready"].values():
            self.drop_round(rnd)
        way["ready"].clear()
        self.reap()

    def start_round(self, programs, params):
        """(seed, {who: started run}): a round of a speed gate, its two timed runs started ahead
        of their turn with the round's seed (--wait). Each opens the GPU and loads its code,
        which runs nothing on the GPU, then waits for its go (runway)."""
        seed, started = self.seed(), {}
        try:
            for who in ("reference", "student"):
                binary, extra, show, as_reference = programs[who]
                started[who] = self._start_driver(binary, "time", seed, self.timeout, None, as_reference,
                                                  params + extra, show, waits=True)
        except BaseException:
            self.drop_round((seed, started))
            raise
        return seed, started

    def drop_round(self, rnd):
        """The runs of a round whose turn never came: stdin closed without a go (each ends at
        once, having run nothing on the GPU), reaped later (reap: after the hold)."""
        for started in rnd[1].values():
            started["run"].go(False)
            with self.clock:
                self.dropped.append(started)
        rnd[1].clear()

    def reap(self):
        """Wait for the dropped runs' end (their slots back, any process left killed)."""
        with self.clock:
            dropped, self.dropped = self.dropped, []
        for started in dropped:
            try:
                rc = self._end_driver(started, 10)[0]  # its output is never read
            except Exception as e:  # noqa: BLE001
                rc = f"not reaped: {e}"[:200]
            self.note(run="dropped", rc=rc)  # (the trace: each ends at once, exit 76, driver.h)

    def gates(self, due, workers=1):
        """{key: (fast, what) or the exception it raised}: the second part of a grading, every
        speed gate due (due: [(key, task, ref, mine)]). Their timed programs are made side by
        side, the GPU shared (a schedule's plan runs, the device code a launcher loads); then
        the gates run one after another in ONE hold of the GPU alone. A gate takes the GPU only
        once the runs on it have drained, and no run starts while it waits: each gate of a
        grading taken on its own, between the checks, stalled every grader of the machine for
        its drain (on an H200, in command 2: up to 34 s before one of ch02's gates began). The
        first timed runs start before the hold (runway), while the GPU drains."""
        started = time.time()

        def ready(job):
            key, task, ref, mine = job
            self.doing.task = task["id"]
            try:
                return self.perf_ready(task, ref, mine)
            except Exception as e:  # noqa: BLE001  (finish() scores the task)
                return e
        with concurrent.futures.ThreadPoolExecutor(max(1, workers)) as pool:
            made = list(pool.map(ready, due))
        timed = [k for k, r in enumerate(made) if not isinstance(r, Exception) and r[0] is not None]
        way = self.runway([made[k][:2] for k in timed])
        out = {}
        try:
            self.top_up(way)
            asked = time.time()
            with (self.gpu.hold(alone=True) if self.gpu else contextlib.nullcontext()):
                got = time.time()
                with self.clock:
                    self.perf_wait_s += got - asked
                for n, ((key, task, ref, mine), ready_) in enumerate(zip(due, made)):
                    self.doing.task = task["id"]
                    if isinstance(ready_, Exception) or ready_[0] is None:
                        out[key] = ready_ if isinstance(ready_, Exception) else (False, ready_[1])
                        continue
                    try:
                        out[key] = self.perf_gate(task, *ready_, way=way, k=timed.index(n))
                    except Exception as e:  # noqa: BLE001
                        out[key] = e
                self.note(run="gates", asked=asked, got=got, ended=time.time(), count=len(due))
        finally:
            self.land(way)
        with self.clock:
            self.perf_s += time.time() - started
        return out

    @staticmethod
    def due(task, rows):
        """(key, task, reference copy, program) of the speed gate a task's rows wait for
        (task(gates=False)), as gates() takes it, or None."""
        for check, points, _, what in rows:
            if check == "perf" and points is None:
                return (task["id"], str(what["mine"])), task, what["ref"], what["mine"]
        return None

    @staticmethod
    def finish(task, rows, done):
        """A task's rows with its speed gate's verdict (gates()) in place of the row that
        waited for it; an error in the gate scores the task 0, as it does in task()."""
        waiting = Grader.due(task, rows)
        if waiting is None:
            return rows
        got = done[waiting[0]]
        if isinstance(got, Tampered):
            return lose_all(task, f"an attack on the grader was stopped: {got}")
        if isinstance(got, Exception):
            return lose_all(task, f"the grader could not grade this task: {type(got).__name__}: {got}")
        fast, said = got
        return [(c, (m if fast else 0), m, said) if c == "perf" and p is None else (c, p, m, r)
                for c, p, m, r in rows]

    def gate(self, task, perf, programs, params, at, way, k):
        """(fast, what): the rounds of a speed gate (perf), the GPU held alone, its runs taken
        from the runway (way, k: runway()). Its rounds still waiting when it is decided are
        dropped (end_gate)."""
        try:
            return self.gate_rounds(task, perf, programs, params, at, way, k)
        finally:
            self.end_gate(way, k)

    def gate_rounds(self, task, perf, programs, params, at, way, k):
        best = {"reference": None, "student": None}
        ratios, fewer = [], ""

        def verdict():
            by_best = best["reference"] / best["student"]
            return max(by_best, statistics.median(ratios)), by_best
        # The gate, and the halfway point from it to the reference's speed ("clearly passed").
        gate = perf["min_ratio"]
        clear = gate + (1 - gate) / 2

        def more(rounds):
            if rounds < PERF_DECIDED_AFTER:
                return rounds == 0 or verdict()[0] >= PERF_FAR_GONE * gate
            if rounds < PERF_ROUNDS:
                passed = min(ratios) >= clear and verdict()[1] >= clear
                hopeless = verdict()[0] < PERF_HOPELESS * gate
                return not (passed or hopeless)
            return rounds < PERF_ROUNDS_AT_MOST and PERF_HOPELESS * gate <= verdict()[0] < gate
        def likely_more(after):
            # Round after + 1, as more() would ask for it if the rounds so far were all: up to
            # PERF_ROUNDS where the gate is not clearly passed, beyond it where it is under the
            # gate; never where it is hopeless.
            line = clear if after < PERF_ROUNDS else gate
            return bool(ratios) and PERF_HOPELESS * gate <= verdict()[0] < line
        rounds = 0
        while more(rounds):
            rounds += 1
            seed, started = way["current"] = self.take_round(way, k, rounds, likely_more(rounds))
            outs, ms_of, timed_of = {}, {}, {}
            order = ("reference", "student")
            for who in (order if rounds % 2 else order[::-1]):
                binary, extra, show, as_reference = programs[who]
                rc, text, out = self.run_started(started.pop(who), binary, seed, params + extra,
                                                 as_reference, show)
                if rc != 0:
                    if who == "reference":
                        raise LabError(f"the reference failed its timed run (exit {rc}): {text[-400:]}")
                    if rc == "timeout":
                        return False, (f"{perf['what']}{at}: your code did not finish its timed "
                                       f"launches within {self.timeout} s: far too slow")
                    refused = [l for l in text.split("\n") if l.startswith("schedule refused")]
                    if perf.get("plan") and refused:  # the course's run_op checked the plan
                        return False, (f"{perf['what']}{at}: the course's driver, carrying out "
                                       f"your schedule's plan, refused it: {refused[0][:400]}")
                    return False, f"your code failed the timed run{at} (exit {rc})"
                recs, times = verify.read_records(out)
                if perf["variant"] not in times:
                    return False, f"no timing of '{perf['variant']}' came back"
                ms = times[perf["variant"]]
                ms_of[who], timed_of[who] = ms, times
                best[who] = ms if best[who] is None else min(best[who], ms)
                outs[who] = out
            # The grader's programs time the student's code (its launcher, or the reference's
            # driver carrying out a plan): where they timed fewer launches of slow code, the
            # reference's later launches are not asked for (driver.h: TIMED_BUDGET_MS).
            cut, ran = None, timed_of["student"].get(f"{perf['variant']}.launches")
            if (perf.get("launcher") or perf.get("plan")) and ran is not None:
                cut = (perf["variant"], int(ran))
            ok, why = verify.compare_files(outs["reference"], outs["student"], task.get("tolerance", {}),
                                           launches=cut)
            if not ok:
                return False, f"the output of the timed runs is wrong{at} (seed {seed}): {why}"
            ratios.append(ms_of["reference"] / ms_of["student"])
            full = timed_of["reference"].get(f"{perf['variant']}.launches")
            if cut and full and cut[1] < full:
                fewer = (f"; so slow that {cut[1]} of its {full:.0f} launches "
                         f"{'was' if cut[1] == 1 else 'were'} timed")
        ratio, by_best = verdict()
        timer = ("the launches of the reference's driver, which carried out each schedule's plan"
                 if perf.get("plan") else "the driver's launches")
        said = (f"{perf['what']}{at}: {100 * ratio:.0f}% of the reference's speed ({best['student']:.4g} "
                f"ms against {best['reference']:.4g} ms at best, CUDA events, median of {timer}; "
                f"{rounds} alternated round{'s' if rounds > 1 else ''}, "
                f"ratio{'s' if rounds > 1 else ''} {', '.join(f'{100 * r:.0f}%' for r in ratios)}{fewer}); "
                f"the gate is {100 * perf['min_ratio']:.0f}%")
        return ratio >= perf["min_ratio"], said

    def task(self, task, plan, gates=True):
        """[(check, points, max, reason)] for one task; any error scores 0 for this task only.
        A program is graded once in a grading: two submissions whose text for a task is the same
        share one build (lab.py's grade_folders), so the same binary, and here its one set of
        rows. Every run of it is fenced afresh (a private /tmp, nothing kept between runs), so a
        second grading could tell nothing the first did not; it would only draw other inputs.
        Two students with the same code get the same score, and a class of untouched skeletons,
        or lab.py selftest's cheats that keep the solution's text for the tasks they do not
        attack, cost one grading, not one each. gates=False: a speed gate that is due is left
        as the row ("perf", None, max, {"ref": ..., "mine": ...}), for gates() and finish()."""
        if plan.get("error") or plan.get("binary") is None:
            return self.task_once(task, plan, gates)
        key = (task["id"], str(plan["binary"]), gates)
        with self.clock:
            first = key not in self.graded
            if first:
                self.graded[key] = concurrent.futures.Future()
            else:
                self.shared += 1
            rows = self.graded[key]
        if first:
            try:
                rows.set_result(self.task_once(task, plan, gates))
            except BaseException as e:  # noqa: BLE001  (whoever waits on it sees it too)
                rows.set_exception(e)
        return list(rows.result())

    def task_once(self, task, plan, gates=True):
        pts = task["points"]
        self.doing.task = task["id"]
        try:
            if plan.get("error"):
                return lose_all(task, plan["error"])
            if plan.get("binary") is None:
                return lose_all(task, "does not compile: " + compiler_message(plan.get("log", "")))
            ref = self.reference_copy(plan["reference"])
            rows = []
            passed, said = self.tests(task, ref, plan["binary"])
            rows.append(("tests", pts["tests"] if passed else 0, pts["tests"], said))
            for tool in task.get("sanitize", {}).get("tools", []):
                if not passed:
                    rows.append((tool, 0, pts[tool], "not run: the tests must pass first"))
                    continue
                clean, said = self.sanitize(task, ref, plan["binary"], tool)
                rows.append((tool, pts[tool] if clean else 0, pts[tool], said))
            if "perf" in task:
                if not passed:
                    rows.append(("perf", 0, pts["perf"], "not run: the tests must pass first"))
                elif not gates:  # its gate comes after every check of the grading (gates())
                    rows.append(("perf", None, pts["perf"], {"ref": ref, "mine": plan["binary"]}))
                else:
                    started = time.time()
                    fast, said = self.perf(task, ref, plan["binary"])
                    with self.clock:
                        self.perf_s += time.time() - started
                    rows.append(("perf", pts["perf"] if fast else 0, pts["perf"], said))
            return rows
        except Tampered as e:
            return lose_all(task, f"an attack on the grader was stopped: {e}")
        except Exception as e:  # noqa: BLE001  (the task scores 0; the others go on)
            return lose_all(task, f"the grader could not grade this task: {type(e).__name__}: {e}")

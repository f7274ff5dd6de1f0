"""The points of a task. Every point comes from the grader's own work: the driver's output files
compared with the reference's for the same seed (verify), compute-sanitizer's summary of the
driver's run, and the driver's CUDA-event timings of the student's and the reference's launches,
alternated, on fresh inputs, with the timed outputs checked too. Never from what the student's
program prints or its exit code.

A submission must not be able to tell a measured run from a checked one: the sanitizer runs and
the timed runs use shapes drawn from the grade's seed within the ranges of the task's
"sanitize.shapes" and "perf.shapes" (labs/labs.json), passed to the driver as --param and named in
the report; the driver poisons the outputs before every timed launch and records every timed
launch's output, all compared with the reference's (labs/drivers/driver.h)."""
import concurrent.futures
import fcntl
import os
import random
import re
import secrets
import shutil
import statistics
import threading
import time
from pathlib import Path

from . import intake, lint, verify
from .fence import REF_GID, safe_read
from .labs import LabError, file_task, kit_info, region_body, splice

PERF_ROUNDS, PERF_ROUNDS_AT_MOST = 3, 7  # rounds of a speed gate: always, and while under it
# More rounds only while the ratio is within this factor of the gate: another job on the GPU
# slowed an honest ch06 schedule to 12% of the reference's speed against a gate of 70% (0.17 of
# the gate); a submission at 1% of the gate is slow, and its seven rounds cost minutes.
PERF_HOPELESS = 0.1
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
    """Intake and lint: {task id: (spliced text, None) or (None, why)}. lint_regions=False
    only in lab.py selftest (a cheat that stands for an attacker who got past the lint)."""
    taken = intake.take(folder, lab)
    out = {}
    for task in lab["tasks"]:
        text, why, shown = taken[task["file"]]
        if text is None:
            out[task["id"]] = (None, why)
            continue
        shown_name = f"{lab['folder']}/{task['file']}"
        try:
            problems = []
            for name, spec in task["regions"].items():
                body, first = region_body(text, name, shown_name)
                if lint_regions:
                    problems += lint.check_region(body, first, spec, shown_name, name,
                                                  repo / lab["folder"] / task["file"])
            if problems:
                out[task["id"]] = (None, "the region lint refused your code (nothing was built):\n" +
                                   "\n".join(problems[:8]))
                continue
            reference = (repo / lab["folder"] / task["file"]).read_text()
            whole = file_task(lab, task) if kit_info(repo) else task
            out[task["id"]] = (splice(reference, text, whole, f"{shown_name} (reference)", shown_name), None)
        except LabError as e:
            out[task["id"]] = (None, str(e))
    return out


# The red zone memcheck keeps after every allocation of a sanitizer run: any access up to 16 MiB
# past an array's end is reported, whatever lies beyond it (the drawn shapes are smaller).
MEMCHECK_PADDING = 16 << 20


class Tampered(Exception):
    """Fenced code changed what the grader reads (the task scores 0)."""


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

    def seed(self):
        return self.fixed_seed if self.fixed_seed is not None else secrets.randbits(62)

    def run_driver(self, binary, mode, seed, timeout, tool=None, reference=False, params=()):
        """(rc, output, path of the output file): one fenced run of a driver, which sees its own
        folder and that one program. reference: a run of the reference (its own uids, which no
        student run has). A sanitizer's log that is not a regular file (a symbolic link, a FIFO
        the program left in place of it) raises Tampered: the task scores 0. params: the
        driver's --param words (the drawn shapes)."""
        slot = self.fence.take_slot()
        try:
            jail = self.fence.jail(self.scratch, slot, f"run-{os.urandom(6).hex()}", reference)
            out = jail / f"out-{os.urandom(6).hex()}.bin"
            words = [str(binary), "--mode", mode, "--seed", str(seed), "--out", str(out)] + list(params)
            log = jail / "sanitizer.log"
            if tool:
                # memcheck sees an access only where no allocation is: a read just past one array
                # can land in the next one and pass unseen (an H200 grade gave a cheat that reads
                # a[n + 64] full memcheck points). --padding puts a red zone after every allocation.
                pad = ["--padding", str(MEMCHECK_PADDING)] if tool == "memcheck" else []
                words = [self.sanitizer, "--tool", tool, *pad, "--error-exitcode", "86",
                         "--print-limit", "5", "--log-file", str(log)] + words
            rc, text, left = self.fence.run(words, jail, slot, timeout, show=[binary], reference=reference)
            with self.clock:
                self.left_over += left
            if tool:
                data, why = safe_read(log, 1 << 20)
                if data is None and why != "missing":
                    raise Tampered(f"the sanitizer's log was replaced by the program ({why})")
                if data is not None:
                    text = data.decode(errors="replace")[-20000:] + "\n" + text
            return rc, text, out
        finally:
            self.fence.give_slot(slot)

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
        seed = self.seed()
        rc, text, ref_out = self.run_driver(ref, "check", seed, self.timeout, reference=True)
        if rc != 0:
            raise LabError(f"the reference driver failed (exit {rc}) in the fence: {text[-600:]}")
        rc, text, out = self.run_driver(mine, "check", seed, self.timeout)
        if rc == "timeout":
            return False, (f"your code did not finish within {self.timeout} s and was stopped (an "
                           "endless loop? an index that never reaches n? a barrier that not every "
                           "thread of the block reaches?)")
        ok, why = verify.compare_files(ref_out, out, task.get("tolerance", {}))
        if ok:
            return True, f"{why} (seed {seed})"
        tail = " / ".join(l for l in text.strip().split("\n")[-3:] if l.strip())[:400]
        said = f"wrong output (seed {seed}): {why}"
        if rc != 0 and tail:
            said += f"; the program stopped (exit {rc}): {tail}"
        return False, said

    def sanitize_shapes(self, task):
        spec = task.get("sanitize", {})
        return draw_shapes(spec.get("shapes", {}), self.grade_seed, f"{task['id']}/sanitize",
                           spec.get("count", 2) if spec.get("shapes") else 0)

    def sanitize(self, task, mine, tool):
        shapes = self.sanitize_shapes(task)
        at = f" (shapes drawn from the grade's seed {self.grade_seed}: {shape_text(shapes)})"
        rc, text, out = self.run_driver(mine, "sanitize", self.seed(), max(self.timeout, 180), tool,
                                        params=shape_params(shapes))
        if rc == "timeout":
            return False, f"compute-sanitizer --tool {tool} did not finish and was stopped{at}"
        counts = [int(n) for n in re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)", text)]
        try:
            recs, _ = verify.read_records(out)
            whole = len(recs) > 0
        except verify.BadOutput:
            whole = False
        if counts and max(counts) == 0 and rc == 0 and whole:
            return True, f"compute-sanitizer --tool {tool}: no errors{at}"
        hazards = [l.lstrip("= ").strip() for l in text.split("\n")
                   if l.startswith("=") and re.search(r"Error|error|hazard|Race|Barrier|Invalid", l)]
        said = "; ".join(hazards[:3])[:500] or " / ".join(text.strip().split("\n")[-3:])[:400]
        if counts and max(counts) == 0:
            return False, f"compute-sanitizer --tool {tool}: the program did not finish its runs{at}: {said}"
        return False, f"compute-sanitizer --tool {tool} found {WHAT[tool]}{at}: {said}"

    def perf(self, task, ref, mine, lock_path):
        """Reference and student alternated under the same conditions: the same shape (drawn from
        the grade's seed within "perf.shapes"), the same inputs in a round (a new seed a round),
        the order flipped every round, one performance gate on the GPU at a time. Each run is the
        median of the driver's timed launches (CUDA events), each launch on freshly poisoned
        outputs, every launch's output compared with the reference's. The verdict takes the better
        of two estimates of the speed ratio, best time against best time and the median of the
        rounds' ratios: another job on a shared GPU only makes a run slower, so both are honest
        for an honest submission, and neither makes a slow one fast. At least PERF_ROUNDS
        rounds, more (up to PERF_ROUNDS_AT_MOST) while under the gate but within PERF_HOPELESS
        of it."""
        perf = task["perf"]
        shape = draw_shapes(perf.get("shapes", {}), self.grade_seed, f"{task['id']}/perf", 1)
        params = shape_params(shape) if perf.get("shapes") else []
        at = f" at {shape_text(shape)} (drawn from the grade's seed {self.grade_seed})" if params else ""
        best = {"reference": None, "student": None}
        ratios = []

        def verdict():
            by_best = best["reference"] / best["student"]
            return max(by_best, statistics.median(ratios)), by_best
        asked = time.time()
        with open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # no two performance gates share the GPU at once
            with self.clock:  # (lab.py selftest reports how long the gates waited for the lock)
                self.perf_wait_s += time.time() - asked
            rounds = 0
            while rounds < PERF_ROUNDS_AT_MOST and (rounds < PERF_ROUNDS or (
                    PERF_HOPELESS * perf["min_ratio"] <= verdict()[0] < perf["min_ratio"])):
                rounds += 1
                seed = self.seed()
                outs, ms_of = {}, {}
                order = (("reference", ref), ("student", mine))
                for who, binary in (order if rounds % 2 else order[::-1]):
                    rc, text, out = self.run_driver(binary, "time", seed, self.timeout, params=params,
                                                    reference=who == "reference")
                    if rc != 0:
                        if who == "reference":
                            raise LabError(f"the reference failed its timed run (exit {rc}): {text[-400:]}")
                        if rc == "timeout":
                            return False, (f"{perf['what']}{at}: your code did not finish its timed "
                                           f"launches within {self.timeout} s: far too slow")
                        return False, f"your code failed the timed run{at} (exit {rc})"
                    recs, times = verify.read_records(out)
                    if perf["variant"] not in times:
                        return False, f"no timing of '{perf['variant']}' came back"
                    ms = times[perf["variant"]]
                    ms_of[who] = ms
                    best[who] = ms if best[who] is None else min(best[who], ms)
                    outs[who] = out
                ok, why = verify.compare_files(outs["reference"], outs["student"], task.get("tolerance", {}))
                if not ok:
                    return False, f"the output of the timed runs is wrong{at} (seed {seed}): {why}"
                ratios.append(ms_of["reference"] / ms_of["student"])
        ratio, by_best = verdict()
        said = (f"{perf['what']}{at}: {100 * ratio:.0f}% of the reference's speed ({best['student']:.4g} "
                f"ms against {best['reference']:.4g} ms at best, CUDA events, median of the driver's "
                f"launches; {rounds} alternated rounds, ratios {', '.join(f'{100 * r:.0f}%' for r in ratios)}); "
                f"the gate is {100 * perf['min_ratio']:.0f}%")
        return ratio >= perf["min_ratio"], said

    def task(self, task, plan, lock_path):
        """[(check, points, max, reason)] for one task; any error scores 0 for this task only.
        A program is graded once in a grading: two submissions whose text for a task is the same
        share one build (lab.py's grade_folders), so the same binary, and here its one set of
        rows. Every run of it is fenced afresh (a private /tmp, nothing kept between runs), so a
        second grading could tell nothing the first did not; it would only draw other inputs.
        Two students with the same code get the same score, and a class of untouched skeletons,
        or lab.py selftest's cheats that keep the solution's text for the tasks they do not
        attack, cost one grading, not one each."""
        if plan.get("error") or plan.get("binary") is None:
            return self.task_once(task, plan, lock_path)
        key = (task["id"], str(plan["binary"]))
        with self.clock:
            first = key not in self.graded
            if first:
                self.graded[key] = concurrent.futures.Future()
            else:
                self.shared += 1
            rows = self.graded[key]
        if first:
            try:
                rows.set_result(self.task_once(task, plan, lock_path))
            except BaseException as e:  # noqa: BLE001  (whoever waits on it sees it too)
                rows.set_exception(e)
        return list(rows.result())

    def task_once(self, task, plan, lock_path):
        pts = task["points"]
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
                clean, said = self.sanitize(task, plan["binary"], tool)
                rows.append((tool, pts[tool] if clean else 0, pts[tool], said))
            if "perf" in task:
                if not passed:
                    rows.append(("perf", 0, pts["perf"], "not run: the tests must pass first"))
                else:
                    started = time.time()
                    fast, said = self.perf(task, ref, plan["binary"], lock_path)
                    with self.clock:
                        self.perf_s += time.time() - started
                    rows.append(("perf", pts["perf"] if fast else 0, pts["perf"], said))
            return rows
        except Tampered as e:
            return lose_all(task, f"an attack on the grader was stopped: {e}")
        except Exception as e:  # noqa: BLE001  (the task scores 0; the others go on)
            return lose_all(task, f"the grader could not grade this task: {type(e).__name__}: {e}")

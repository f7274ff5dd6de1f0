#!/usr/bin/env python3
"""Times README's commands on this machine, from a fresh clone, and writes the record that the
times in README.md and docs/ci.md are generated from (docs/gen/g.py: g.ci_times()).

    python3 tools/ci_record.py gpu --out DIR [--commit SHA]   a GPU runner: command 2
        (scripts/test.sh --preset gpu, build included), the planted bugs' tier (scripts/test.sh
        --preset gpu --planted-bugs, in the same build folder), the sanitizers, then command 1
    python3 tools/ci_record.py cpu --out DIR [--commit SHA]   a machine without a GPU: .ci/run
        (format check, command 1 --quick, docs check, command 2 and the planted bugs, --preset ci)
    python3 tools/ci_record.py newcomer --out DIR      README's two commands as README writes
        them (python3 scripts/tour.py, then scripts/test.sh), from a fresh clone, with none of
        CI, CUDAARCHS or the CUDA_EXAMPLES_* settings (it refuses to run with them): the times
        and the example summary of README's Quick start. Run it where nothing else is heavy
        (each step keeps the load average at its start and end); commit DIR/record.json as
        docs/runs/ci/<machine>-newcomer.json.
    --only STEP (repeatable) runs some steps: 'command 2', 'planted bugs', 'sanitizers',
    'command 1'; --append adds them to DIR/record.json (a machine whose calls are limited in
    time: command 2 first, then --only 'planted bugs' --append in the same build folder). Where
    one tier is longer than one call, split it: --only 'command 2' --pass side, then --only
    'command 2' --pass lesson --append (scripts/test.sh --pass): one step, whose time is the sum
    of both commands'.

Run it in a fresh clone (git clone REPO /tmp/fresh && cd /tmp/fresh), so that the build is timed
too: it says whether the build folder was there when it started (each step also says whether
it found the build folder made by an earlier step: "after"). DIR gets record.json (the
machine, the commit, each step's wall time, exit code and breakdown: setup, configure, build,
tests, and each label's summed test seconds from ctest) and one log per step. Commit DIR's
record.json as docs/runs/ci/<machine>-<mode>.json (the record it replaces goes to
docs/runs/ci/history/). --commit names the commit run where the tree
is a copy (one sent to a GPU machine): no git checkout, or one whose .git is not the tree's own
(then what git said there is kept as git_saw); otherwise the commit is read from the tree, with
"(local changes)" when it differs. Exit status: that of the first step that failed, else 0.
"""
import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import tour  # noqa: E402  (project_commit: the project's own commit, or "unknown")

MODES = {
    "gpu": ("build-gpu", [
        ("command 2", ["scripts/test.sh", "--preset", "gpu"], "build-gpu/times.json"),
        ("planted bugs", ["scripts/test.sh", "--preset", "gpu", "--planted-bugs"],
         "build-gpu/times-planted-bugs.json"),
        ("sanitizers", ["scripts/sanitize.sh", "--preset", "gpu-sanitize"], None),
        ("command 1", [sys.executable, "scripts/tour.py", "--preset", "gpu"], None),
    ]),
    "cpu": ("build-ci", [
        (".ci/run", ["bash", ".ci/run"], "build-ci/times.json"),
    ]),
    # README's two commands exactly as README writes them, as a newcomer runs them: no preset,
    # no CUDAARCHS, no CI=true, the tour at its default sizes (README's "How long they took").
    "newcomer": ("build", [
        ("command 1", ["python3", "scripts/tour.py"], None),
        ("command 2", ["scripts/test.sh"], "build/times.json"),
    ]),
}
# What a newcomer's run must not have set: each would make it another run than README's.
NEWCOMER_UNSET = ("CUDAARCHS", "CI", "CUDA_EXAMPLES_PLOTS", "CUDA_EXAMPLES_NO_INSTALL",
                  "CUDA_EXAMPLES_MUTANTS", "CUDA_EXAMPLES_REQUIRE_GPU", "CMAKE_GENERATOR")
HOW = {"newcomer": "README's two commands as written (python3 scripts/tour.py, then "
                   "scripts/test.sh), one after the other, from a fresh clone, by "
                   "tools/ci_record.py newcomer"}


def load():
    """The load average (1, 5 min) now: a shared machine's times depend on it."""
    try:
        one, five, _ = os.getloadavg()
        return [round(one, 2), round(five, 2)]
    except OSError:
        return None
TIERS = ("command 2", "planted bugs")  # the steps that --pass splits (scripts/test.sh --pass)


def machine():
    out = {"host": platform.node(), "cores": os.cpu_count(), "gpu": None, "gpus": 0}
    try:
        with open("/proc/cpuinfo") as f:
            out["cpu"] = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
        with open("/proc/meminfo") as f:
            kib = int(next(l.split()[1] for l in f if l.startswith("MemTotal")))
            out["ram_gib"] = round(kib / 2**20)
    except (OSError, StopIteration, ValueError):
        pass
    smi = shutil.which("nvidia-smi")
    if smi:
        r = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        names = [n.strip() for n in r.stdout.splitlines() if n.strip()] if r.returncode == 0 else []
        out["gpus"] = len(names)
        out["gpu"] = names[0] if names else None
    return out


def summary_blocks(log_path):
    """Each 'Summary: ...' block of scripts/test.sh's end (test_summary.py), up to its 'Times:'."""
    blocks, current = [], None
    with open(log_path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("Summary: "):
                current = [line]
            elif current is not None:
                if line.startswith("Times: ") or line.startswith("ci: "):
                    blocks.append(current)
                    current = None
                else:
                    current.append(line)
    if current:
        blocks.append(current)
    return blocks


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=sorted(MODES))
    parser.add_argument("--out", required=True, help="where record.json and the logs go")
    parser.add_argument("--commit", help="the commit this tree is, where it is a copy (git there is not asked)")
    parser.add_argument("--note", default="", help="a sentence kept with the record")
    parser.add_argument("--only", action="append", default=[], metavar="STEP",
                        help="run only this step (repeatable): 'command 2', 'planted bugs', "
                             "'sanitizers', 'command 1'")
    parser.add_argument("--pass", dest="test_pass", choices=("side", "lesson"),
                        help="a tier in two calls: its side-by-side pass (with the build), then "
                             "its second pass (the lessons) and summary (--append), "
                             "kept as one step")
    parser.add_argument("--append", action="store_true",
                        help="add the steps to DIR/record.json (a second call on the same machine, "
                             "its build folder kept: the sanitizers and the tour after command 2)")
    opts = parser.parse_args()
    os.chdir(ROOT)
    os.makedirs(opts.out, exist_ok=True)
    build_dir, steps = MODES[opts.mode]
    if opts.test_pass:
        if opts.mode != "gpu" or len(opts.only) != 1 or opts.only[0] not in TIERS:
            parser.error("--pass goes with gpu --only 'command 2' (or --only 'planted bugs')")
        if opts.test_pass == "lesson" and not opts.append:
            parser.error("--pass lesson adds to the record --pass side wrote: give --append")
        steps = [(n, w[:3] + ["--pass", opts.test_pass] + w[3:] if n in TIERS else w, t)
                 for n, w, t in steps]  # scripts/test.sh --preset gpu --pass ...
    if opts.only:
        unknown = set(opts.only) - {name for name, _, _ in steps}
        if unknown:
            parser.error(f"no step {', '.join(sorted(unknown))} in mode {opts.mode}")
        steps = [step for step in steps if step[0] in opts.only]
    commit, dirty = tour.project_commit()
    git_saw = None
    if opts.commit and commit != opts.commit:
        # The tree is a copy whose .git, if any, is not its own: the H200's copies carried the
        # .git of an older commit, and git there saw "local changes" that were the newer commit.
        # The operator's word wins, and what git said there is kept beside it.
        if commit != "unknown":
            git_saw = commit + (" (local changes)" if dirty else "")
        commit, dirty = opts.commit, None
    env = dict(os.environ)
    if opts.mode == "newcomer":
        set_here = [k for k in NEWCOMER_UNSET if env.get(k)]
        if set_here:
            parser.error(f"newcomer: unset {', '.join(set_here)} first: README's commands run "
                         "without them")
        if not opts.append and os.path.exists(build_dir):
            parser.error("newcomer: run it in a fresh clone (there is a build/ here)")
    record = {"schema": "cuda-examples-ci-times/1", "mode": opts.mode, "machine": machine(),
              "commit": commit, "dirty": dirty, "note": opts.note,
              **({"how": HOW[opts.mode]} if opts.mode in HOW else {}),
              **({"git_saw": git_saw} if git_saw else {}),
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "fresh_clone": not os.path.exists(build_dir), "steps": []}
    status = 0
    path = os.path.join(opts.out, "record.json")
    if opts.append and os.path.exists(path):
        with open(path) as f:
            earlier = json.load(f)
        record["steps"] = earlier["steps"]
        record["fresh_clone"] = earlier.get("fresh_clone")
    for name, words, times in steps:
        if times and os.path.exists(times):
            os.remove(times)
        found_build = os.path.exists(build_dir)  # made by an earlier step (or call)
        log_name = name + (f" {opts.test_pass} pass" if opts.test_pass else "")
        log_path = os.path.join(opts.out, re.sub(r"[^A-Za-z0-9]+", "-", log_name).strip("-") + ".log")
        print(f"ci_record: {name}: {' '.join(words)}", flush=True)
        load_start = load()
        started = time.time()
        with open(log_path, "w") as log:
            proc = subprocess.Popen(words, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                    text=True, errors="replace")
            for line in proc.stdout:
                sys.stdout.write(line)  # line by line: a runner's log shows where a step is
                sys.stdout.flush()
                log.write(line)
                log.flush()
            rc = proc.wait()
        step = {"name": name, "command": " ".join(w if w != sys.executable else "python3" for w in words),
                "seconds": round(time.time() - started, 1), "exit": rc, "log": os.path.basename(log_path),
                "build_folder_found": found_build, "load_start": load_start, "load_end": load()}
        if times and os.path.exists(times):
            with open(times) as f:
                step["breakdown"] = json.load(f)
        ci_times = os.path.join(build_dir, "ci-run-times.json")
        if name == ".ci/run" and os.path.exists(ci_times):
            with open(ci_times) as f:
                step["ci_steps"] = json.load(f)
            planted = os.path.join(build_dir, "times-planted-bugs.json")
            if os.path.exists(planted):  # .ci/run's last step: the planted bugs' tier
                with open(planted) as f:
                    step["breakdown_planted_bugs"] = json.load(f)
        # What scripts/test.sh printed at its end, as printed: the counts and the skips by reason
        # (README's example is generated from it). .ci/run prints two: command 2's, the planted bugs'.
        summaries = summary_blocks(log_path)
        if summaries:
            step["summary"] = summaries[0]
        if name == ".ci/run" and len(summaries) > 1:
            step["summary_planted_bugs"] = summaries[1]
        if opts.test_pass:
            step["passes_s"] = {opts.test_pass: step["seconds"]}
            step["command"] = step["command"].replace(f" --pass {opts.test_pass}", "")
        side = next((s for s in record["steps"] if s["name"] == name and "passes_s" in s
                     and "lesson" not in s["passes_s"]), None) if opts.test_pass == "lesson" else None
        if opts.test_pass == "lesson" and side is None:
            print(f"ci_record: no '{name}' side pass in the record to add this pass to", flush=True)
            rc = rc or 2
        if side is not None:  # one step: both commands' time, the lesson call's summary
            side["passes_s"]["lesson"] = step["seconds"]
            side["seconds"] = round(side["seconds"] + step["seconds"], 1)
            side["exit"] = side["exit"] or rc
            side["log"] = [side["log"], step["log"]]
            if "breakdown" in step:
                side["breakdown"] = step["breakdown"]
            step = side
        else:
            record["steps"].append(step)
        print(f"ci_record: {name} took {step['seconds']:.0f} s, exit {step['exit']}", flush=True)
        status = status or rc
        with open(path, "w") as f:  # after every step: a cut-off run keeps what it measured
            json.dump(record, f, indent=1)
    print(f"ci_record: {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())

"""The Slurm backend: the course server hands each job to a Slurm cluster with sbatch, instead of
running it on its own GPUs. It implements the protocol of server/backends.py (its docstring):

    start   writes WORKDIR/slurm-job.py (runs ARGV in WORKDIR, then writes its exit code to
            WORKDIR/slurm-exit) and submits it: sbatch --parsable --gres=gpu:1 (when the
            cluster has GPUs), output appended to LOG_PATH. The handle holds the Slurm job id.
    poll    the exit code from WORKDIR/slurm-exit when it is there; otherwise the job's state from
            scontrol (or sacct, once the controller has forgotten it): None while it waits or
            runs; a job that ended without writing its code was killed or lost (negative: the
            server runs it again).
    cancel  scancel, then waits until the cluster says the job has ended.
    alive_after_restart
            True while the cluster still has the job (or it has ended and left its exit code):
            a restarted server goes on polling it.

The job runs the same ARGV a local worker runs (the server's runner, which fences the student's
code itself), as the user who submits it, with the server's environment less its Slurm and CUDA
variables (Slurm gives the job its GPU in CUDA_VISIBLE_DEVICES). WORKDIR must be on a file
system the cluster's nodes share with the server (on one machine, any folder).

Options (make_backend; serve.py's --slurm-* words, with or without the "slurm" prefix):
    conf       slurm.conf of the cluster (default: SLURM_CONF, else Slurm's own default)
    partition  the partition to submit to (default: the cluster's default)
    gres       "auto" (default: gpu:1 when a node of the partition has a GPU gres), "none", or a
               gres such as gpu:h100:1
    jobs       how many jobs the server keeps in the cluster at once (its worker slots; default:
               the GPUs the partition declares, at least 1)
    time       sbatch's --time limit, minutes (default 30): the runner has its own limits, this
               one only ends a job that outlived them
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

NAME = "course"  # the jobs' name in squeue
EXIT_FILE = "slurm-exit"
SCRIPT_FILE = "slurm-job.py"
# Job states of Slurm in which the job still waits, runs or is being cleaned up.
ALIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
         "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
         "RESV_DEL_HOLD"}

# The batch script: a few lines of Python, so that a job killed by a signal is told from one that
# exited with 128+N, as LocalBackend's Popen tells them. The exit code goes to a temporary name
# first and is renamed, so that poll never reads half a number.
SCRIPT = '''#!/usr/bin/env python3
# Written by server/slurm/backend.py for job {job_id}: runs its argv in its folder and keeps the
# exit code (negative: killed by that signal) in {exit_file}.
import os, subprocess, sys
os.chdir({workdir!r})
code = subprocess.call({argv!r}, stdin=subprocess.DEVNULL)
with open({exit_file!r} + ".tmp", "w") as f:
    f.write(str(code))
os.replace({exit_file!r} + ".tmp", {exit_file!r})
sys.exit(code if code >= 0 else 128 - code)
'''


class SlurmError(RuntimeError):
    """A Slurm command failed: its command line and what it printed."""


class SlurmBackend:
    name = "slurm"

    def __init__(self, conf=None, partition=None, gres="auto", jobs=None, time_min=30):
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("SLURM_") and k not in ("CUDA_VISIBLE_DEVICES",)}
        conf = conf or os.environ.get("SLURM_CONF")
        if conf:
            self.env["SLURM_CONF"] = str(Path(conf).resolve())
        self.partition = partition
        self.time_min = int(time_min)
        self._checked = {}  # Slurm job id -> when scontrol was last asked (poll's rate limit)
        self.missing = [c for c in ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
                        if shutil.which(c) is None]
        gpus = self._partition_gpus() if not self.missing else 0
        if gres in (None, "", "auto"):
            self.gres = "gpu:1" if gpus else None
        elif gres == "none":
            self.gres = None
        else:
            self.gres = gres
        self.jobs = int(jobs) if jobs else max(1, gpus)

    # ---- Slurm's commands -------------------------------------------------------------------
    def _run(self, *argv, check=True, timeout=30):
        try:
            out = subprocess.run(list(argv), capture_output=True, text=True, env=self.env,
                                 stdin=subprocess.DEVNULL, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SlurmError(f"{' '.join(argv)}: {e}") from e
        if check and out.returncode != 0:
            raise SlurmError(f"{' '.join(argv)}: exit {out.returncode}: "
                             f"{(out.stderr or out.stdout).strip()}")
        return out

    def _partition_gpus(self):
        """How many GPUs the partition's nodes declare as gres (sinfo %G: gpu:2, gpu:h100:4(S:0))."""
        argv = ["sinfo", "-h", "-N", "-o", "%N %G"] + (["-p", self.partition] if self.partition else [])
        try:
            out = self._run(*argv, timeout=15).stdout
        except SlurmError:
            return 0
        total = {}
        for line in out.splitlines():
            node, _, gres = line.partition(" ")
            for item in gres.split(","):
                parts = item.split("(")[0].split(":")
                if parts[0] == "gpu" and parts[-1].isdigit():
                    total[node] = int(parts[-1])
        return sum(total.values())

    def _state(self, slurm_id):
        """(state, exit code, signal) of a job, or None when the cluster no longer knows it."""
        out = self._run("scontrol", "-o", "show", "job", slurm_id, check=False)
        if out.returncode == 0 and "JobState=" in out.stdout:
            fields = dict(w.split("=", 1) for w in out.stdout.split() if "=" in w)
            code, _, sig = fields.get("ExitCode", "0:0").partition(":")
            return fields["JobState"], int(code or 0), int(sig or 0)
        if shutil.which("sacct") is None:
            return None
        out = self._run("sacct", "-n", "-P", "-X", "-j", slurm_id, "-o", "State,ExitCode",
                        check=False)
        line = out.stdout.strip().splitlines()[:1] if out.returncode == 0 else []
        if not line:
            return None
        state, _, code = line[0].partition("|")
        code, _, sig = code.partition(":")
        return state.split()[0], int(code or 0), int(sig or 0)

    # ---- the protocol -------------------------------------------------------------------------
    def slots(self):
        return [f"slurm{i}" for i in range(self.jobs)]

    def cannot_run(self):
        if self.missing:
            return ("cannot run here: Slurm's " + ", ".join(self.missing) + " not installed "
                    "(apt-get install slurm-client)")
        return None

    def start(self, job_id, argv, workdir, log_path, slot):
        workdir = Path(workdir).resolve()
        exit_file = workdir / EXIT_FILE
        exit_file.unlink(missing_ok=True)  # a previous attempt's
        script = workdir / SCRIPT_FILE
        script.write_text(SCRIPT.format(job_id=job_id, workdir=str(workdir),
                                        argv=[str(w) for w in argv], exit_file=str(exit_file)))
        script.chmod(0o700)
        cmd = ["sbatch", "--parsable", f"--job-name={NAME}-{job_id}", f"--chdir={workdir}",
               f"--output={Path(log_path).resolve()}", "--open-mode=append",
               f"--time={self.time_min}", "--ntasks=1", "--export=ALL"]
        if self.partition:
            cmd.append(f"--partition={self.partition}")
        if self.gres:
            cmd.append(f"--gres={self.gres}")
        out = self._run(*cmd, str(script))
        slurm_id = out.stdout.strip().split(";")[0]  # "ID" or "ID;cluster"
        if not slurm_id.isdigit():
            raise SlurmError(f"sbatch answered {out.stdout.strip()!r}, not a job id")
        return {"slurm_id": slurm_id, "job": job_id, "slot": slot, "exit_file": str(exit_file)}

    def _exit_code(self, handle):
        try:
            return int(Path(handle["exit_file"]).read_text().strip())
        except (OSError, ValueError):
            return None

    def poll(self, handle):
        code = self._exit_code(handle)
        if code is not None:
            self._checked.pop(handle["slurm_id"], None)
            return code
        # Ask the controller at most once a second per job; the exit file answers in between.
        now = time.monotonic()
        if now - self._checked.get(handle["slurm_id"], 0) < 1.0:
            return None
        self._checked[handle["slurm_id"]] = now
        state = self._state(handle["slurm_id"])
        if state is not None and state[0].rstrip("+") in ALIVE:
            return None
        code = self._exit_code(handle)  # written between the two looks
        self._checked.pop(handle["slurm_id"], None)
        if code is not None:
            return code
        if state is None:
            return -1  # the cluster forgot it and it left no exit code: lost
        name, _, sig = state
        # Ended without its exit file: cancelled, out of time, its node failed, or the script
        # could not start. A signal (or a state that ends a job from outside) is negative.
        if sig:
            return -sig
        if name.startswith(("CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                            "DEADLINE", "OUT_OF_MEMORY")):
            return -9
        return state[1] if state[1] else -1

    def cancel(self, handle):
        self._run("scancel", handle["slurm_id"], check=False)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = self._state(handle["slurm_id"])
            if state is None or state[0].rstrip("+") not in ALIVE:
                break
            time.sleep(0.2)
        self._checked.pop(handle["slurm_id"], None)

    def alive_after_restart(self, handle):
        if self._exit_code(handle) is not None:
            return True  # it ended while the server was down: poll reads its exit code
        state = self._state(handle["slurm_id"])
        return state is not None and state[0].rstrip("+") in ALIVE


def make_backend(options=None):
    """serve.py --backend slurm: options are its --slurm-* words (conf, partition, gres, jobs,
    time), with or without the "slurm" prefix, dashes or underscores."""
    opts = {}
    for k, v in (options or {}).items():
        k = k.replace("-", "_")
        k = k[len("slurm_"):] if k.startswith("slurm_") else k
        if v is not None:
            opts[k] = v
    unknown = set(opts) - {"conf", "partition", "gres", "jobs", "time"}
    if unknown:
        raise ValueError(f"unknown Slurm options: {', '.join(sorted(unknown))} "
                         "(conf, partition, gres, jobs, time)")
    return SlurmBackend(conf=opts.get("conf"), partition=opts.get("partition"),
                        gres=opts.get("gres", "auto"), jobs=opts.get("jobs"),
                        time_min=opts.get("time", 30))


if __name__ == "__main__":
    print(__doc__, file=sys.stderr)
    sys.exit(2)

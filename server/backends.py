"""Where a job runs: the server's queue hands each job to a backend, and a backend is only this.

The protocol (every backend implements these; the queue calls nothing else):

    backend.name                       "local", "slurm", ...: shown on the pages and in the log
    backend.slots() -> [str]           one name per worker the server starts: "gpu0", "gpu1", ...
                                       (LocalBackend: one per visible GPU; a Slurm backend: as
                                       many as the jobs it lets wait in the cluster at once).
                                       Each worker takes one job at a time from the queue.
    backend.cannot_run() -> str|None   why no job can run here ("cannot run here: no GPU"), or
                                       None. While it says why, a worker finishes each job it
                                       takes at once with exit 77 and that sentence, never runs it.
    backend.start(job_id, argv, workdir, log_path, slot) -> handle
                                       starts ARGV (a list of words, run in WORKDIR, stdout and
                                       stderr to LOG_PATH) for job JOB_ID (an int) on worker SLOT
                                       and returns at once. The handle is a dict of JSON values:
                                       the server stores it in its database, so that a server
                                       started again after a crash can ask about the job.
    backend.poll(handle) -> int|None   None while the job runs; then its exit code (0..255), or a
                                       negative number when it was killed by a signal (-9) or
                                       lost: the server then runs the job again (a new attempt).
    backend.cancel(handle)             stops the job and everything it started; idempotent.
    backend.alive_after_restart(handle) -> bool
                                       asked once for each job that was running when the server
                                       stopped: True when the job still runs and the new server
                                       may go on polling it (a cluster's job); False when it is
                                       gone, or was stopped by this call: it then runs again.

The job's argv is the server's own runner (server/runner.py SPEC.json), which calls the grader
(labs/grader/api.py) and writes WORKDIR/result.json; the backend never reads what a job writes,
and never sees student code as anything but files in WORKDIR. The runner fences the student's
code itself (the grader's fence: its own uid, namespaces, limits), so a backend needs no
isolation of its own beyond a process group it can kill and, for a GPU, which one to use.

A Slurm backend (server/slurm/) plugs in with `serve.py --backend slurm`: serve.py imports
`server.slurm` and calls its `make_backend(options)` (options: the `--slurm-*` words of serve.py,
as a dict); its handle would hold the Slurm job id, poll would read sacct/squeue, and
alive_after_restart would say True while the cluster still has the job.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

NO_GPU = "cannot run here: no GPU"
EXIT_NO_GPU = 77


def visible_gpus():
    """The GPUs a worker may be given: CUDA_VISIBLE_DEVICES when set, else nvidia-smi -L."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g.strip() for g in env.split(",") if g.strip() and g.strip() != "-1"]
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return [str(i) for i, line in enumerate(out.stdout.splitlines()) if line.startswith("GPU ")]


def _start_time(pid):
    """The process's start time in clock ticks (field 22 of /proc/PID/stat), or None: with the
    pid it names one process, not a later one that reused the number."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[19])


class LocalBackend:
    """One worker per visible GPU of this machine; each job a process group of its own, with
    CUDA_VISIBLE_DEVICES set to its worker's GPU. gpus: a list of GPU ids, or None to look.
    cpu_workers: N workers that need no GPU (the tests' fake jobs); never for student code."""
    name = "local"

    def __init__(self, gpus=None, cpu_workers=None):
        self.cpu_workers = cpu_workers
        self.gpus = [] if cpu_workers else (visible_gpus() if gpus is None else list(gpus))
        self.procs = {}  # pid -> Popen, the jobs this process started

    def slots(self):
        if self.cpu_workers:
            return [f"cpu{i}" for i in range(self.cpu_workers)]
        return [f"gpu{g}" for g in self.gpus] or ["nogpu"]

    def cannot_run(self):
        return None if self.cpu_workers or self.gpus else NO_GPU

    def start(self, job_id, argv, workdir, log_path, slot):
        env = dict(os.environ)
        if slot.startswith("gpu"):
            env["CUDA_VISIBLE_DEVICES"] = slot[3:]
        with open(log_path, "ab") as log:
            p = subprocess.Popen([str(w) for w in argv], cwd=workdir, stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True)
        self.procs[p.pid] = p
        return {"pid": p.pid, "start": _start_time(p.pid), "job": job_id, "slot": slot}

    def _same(self, handle):
        return handle.get("start") is not None and _start_time(handle["pid"]) == handle["start"]

    def poll(self, handle):
        p = self.procs.get(handle["pid"])
        if p is None:  # not ours (a server before a restart): lost
            return -1 if not self._same(handle) else None
        code = p.poll()
        if code is not None:
            self.procs.pop(handle["pid"], None)
        return code

    def cancel(self, handle):
        if self._same(handle):
            try:
                os.killpg(handle["pid"], signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        p = self.procs.pop(handle["pid"], None)
        if p is not None:
            p.wait()

    def alive_after_restart(self, handle):
        """A local job whose server died is stopped (its process group killed) and runs again:
        its output went to a log the new server cannot trust to be whole."""
        self.cancel(handle)
        deadline = time.time() + 5
        while self._same(handle) and time.time() < deadline:
            time.sleep(0.02)
        return False


def make_backend(kind, options=None):
    options = options or {}
    if kind == "local":
        return LocalBackend(cpu_workers=options.get("cpu_workers"))
    if kind == "slurm":
        from server import slurm  # server/slurm/ (its own house)
        return slurm.make_backend(options)
    raise ValueError(f"no backend {kind!r}: local or slurm")

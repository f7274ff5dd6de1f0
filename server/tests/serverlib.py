"""What the server's tests share: a real server (serve.py) started on a free loopback port with
a fake job in place of runner.py (a shell that sleeps, writes result.json naming its job, and
appends its job id to a log of runs), students made in its state, and a small HTTP client that
keeps cookies like a browser. The fake job goes through the same queue, workers and backend
as a real one: only the command at its end differs, so no GPU is needed."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
from server.jobqueue import Store  # noqa: E402

# $1: the job's spec.json, $2: the attempt's folder. The output holds markup, to be escaped.
FAKEJOB = f"{sys.executable} {HERE / 'fakejob.py'}"
FAKE = ("/bin/sh -c 'echo $$ > \"$2/pid\"; sleep {sleep}; id=$(basename $(dirname \"$1\")); "
        "echo $id >> {runs}; printf \"{{\\\"exit\\\": 0, \\\"summary\\\": \\\"ran job %s\\\", "
        "\\\"output\\\": \\\"<script>alert(%s)</script>\\\"}}\" $id $id > \"$2/r.tmp\"; "
        "mv \"$2/r.tmp\" \"$2/result.json\"' sh")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, state, sleep=0.01, workers=2, extra=(), fake=True):
        self.state, self.port = Path(state), free_port()
        self.runs = self.state.parent / (self.state.name + "-runs.log")
        self.argv = [sys.executable, str(REPO / "server" / "serve.py"), "--state", str(state),
                     "--port", str(self.port), "--poll-s", "0.01"] + list(extra)
        if fake:  # True: the shell's fake job; a string: that command (fakejob.py's)
            command = fake if isinstance(fake, str) else FAKE.format(sleep=sleep, runs=self.runs)
            self.argv += ["--cpu-workers", str(workers), "--job-command", command]
        self.store = Store(state)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        if "serve.py: http" not in line:
            raise RuntimeError(f"the server did not start: {line}{self.proc.stdout.read()}")
        self.banner = line
        return self

    def log(self):
        """What the server wrote (stdout and stderr): after stop()."""
        return self.output

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc.stdout.close()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.output = self.proc.communicate(timeout=10)[0]
            except subprocess.TimeoutExpired:
                self.kill()
                return
            self.proc.stdout.close()

    def student(self, name):
        return self.store.add_student(name, name.title())

    def wait_done(self, ids, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            q = ",".join("?" * len(ids))
            rows = self.store.q(f"SELECT COUNT(*) AS n FROM jobs WHERE id IN ({q}) AND state IN ('done','failed')", *ids)
            if rows[0]["n"] == len(ids):
                return True
            time.sleep(0.05)
        return False


class Client:
    """One browser (cookies kept) or one command-line client (a bearer token)."""

    def __init__(self, port, token=None):
        self.port, self.token, self.cookies = port, token, {}

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = dict(headers or {})
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read().decode("utf-8", "replace")
        for v in r.headers.get_all("Set-Cookie") or []:
            k, _, rest = v.partition("=")
            val = rest.split(";")[0]
            if "Max-Age=0" in v:
                self.cookies.pop(k, None)
            else:
                self.cookies[k] = val
        c.close()
        return r.status, r.headers, data

    def get(self, path):
        return self.request("GET", path)

    def post(self, path, fields, files=None):
        if files:
            boundary = uuid.uuid4().hex
            parts = []
            for k, v in fields.items():
                parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode())
            for k, (fname, data) in files.items():
                parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"; filename="{fname}"\r\n'
                             f'Content-Type: application/octet-stream\r\n\r\n'.encode() + data + b"\r\n")
            body = b"".join(parts) + f"--{boundary}--\r\n".encode()
            return self.request("POST", path, body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})
        return self.request("POST", path, urllib.parse.urlencode(fields).encode(),
                            {"Content-Type": "application/x-www-form-urlencoded"})

    def api(self, method, path, value=None):
        s, h, d = self.request(method, path, json.dumps(value).encode() if value is not None else None,
                               {"Content-Type": "application/json"})
        return s, json.loads(d) if d.startswith("{") else d

    def login(self, token):
        s, _, page = self.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        s, h, _ = self.post("/login", {"token": token, "csrf": csrf})
        return s

    def csrf(self):
        s, _, page = self.get("/")
        m = re.search(r'name="csrf" value="([^"]+)"', page)
        return m.group(1) if m else None


def alive(pid):
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False

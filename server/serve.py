#!/usr/bin/env python3
"""The course GPU server: one command on the course's GPU machine (docs/server.md).

    python3 server/serve.py --state DIR [--port 8045] [--host 127.0.0.1] [--backend local|slurm]

Pages and a JSON API on one port (loopback unless --host says otherwise), the queue and the
accounts in DIR/server.db (SQLite, WAL), one worker thread per backend slot (local: one per
visible GPU). Every job runs server/runner.py, which calls the grader (labs/grader/api.py);
the grader fences the student's code. Standard library only.
"""
import argparse
import email.parser
import email.policy
import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import sys
import threading
import time
import urllib.parse
from collections import defaultdict, deque
from http import cookies
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "labs"))
from server import backends, uploads, web  # noqa: E402
from server.jobqueue import Store  # noqa: E402

ARG_WORD = re.compile(r"^[A-Za-z0-9^._:,+=-]{1,64}$")
PNG = b"\x89PNG\r\n\x1a\n"
PICTURE_CAP = 8 << 20
HEADER_BYTES = 32 << 10  # all of a request's header lines together
# The routes, as the log may name them: any other path is logged as '(another path)', so that
# nothing a client puts in a URL (a token pasted by mistake) reaches the log.
LOGGED = re.compile(r"^/(|login|logout|jobs|static/app\.js|static/style\.css|api/jobs|api/programs|"
                    r"(api/)?jobs/\d{1,12}(/trace\.png)?)$")


def defaults():
    return {"max_queued": 4, "max_upload": 4 << 20, "max_files": 64, "max_unpacked": 8 << 20,
            "max_edit": 64 << 10, "max_args": 16, "job_timeout": 900, "run_timeout": 60,
            "submits_per_minute": 20, "requests_per_minute": 600, "logins_per_minute": 30,
            "max_connections": 64, "connections_per_address": 32, "request_s": 30.0, "poll_s": 0.05}


# ---- the workers ---------------------------------------------------------------------------

class Worker(threading.Thread):
    """Takes one job at a time from the queue for its slot, runs it on the backend, writes its
    result once (Store.finish); a lost run (killed, negative exit) goes back to the queue."""

    def __init__(self, server, slot, adopt=None):
        super().__init__(daemon=True, name=f"worker-{slot}")
        self.srv, self.slot, self.adopt = server, slot, adopt

    def run(self):
        if self.adopt:
            job, handle = self.adopt
            self.watch(job, handle)
        while not self.srv.stopping.is_set():
            job = self.srv.store.claim(self.slot)
            if job is None:
                self.srv.stopping.wait(self.srv.cfg["poll_s"])
                continue
            try:
                self.execute(job)
            except Exception as err:  # noqa: BLE001  (a job never takes its worker down)
                self.srv.store.finish(job["id"], job["attempt"], 1, f"the server failed: {err}")

    def execute(self, job):
        store, backend = self.srv.store, self.srv.backend
        why = backend.cannot_run()
        if why:
            store.finish(job["id"], job["attempt"], backends.EXIT_NO_GPU, why)
            return
        jobdir = self.srv.jobdir(job["id"])
        adir = jobdir / f"a{job['attempt']}"
        shutil.rmtree(adir, ignore_errors=True)
        adir.mkdir(mode=0o700)
        argv = self.srv.job_argv + [str(jobdir / "spec.json"), str(adir)]
        handle = backend.start(job["id"], argv, str(adir), str(adir / "log"), self.slot)
        store.set_handle(job["id"], job["attempt"], handle)
        self.watch(job, handle)

    def watch(self, job, handle):
        store, backend, cfg = self.srv.store, self.srv.backend, self.srv.cfg
        started, wait = time.time(), 0.01
        while True:
            code = backend.poll(handle)
            if code is not None:
                break
            if time.time() - started > cfg["job_timeout"]:
                backend.cancel(handle)
                store.finish(job["id"], job["attempt"], 1, f"stopped: ran longer than {cfg['job_timeout']} s")
                return
            if self.srv.stopping.wait(wait):
                return  # the server stops: the job stays 'running'; a restart runs it again
            wait = min(wait * 1.5, 0.2)
        if code < 0:
            store.requeue(job["id"], job["attempt"], f"killed by signal {-code}")
            return
        adir = self.srv.jobdir(job["id"]) / f"a{job['attempt']}"
        result = read_json(adir / "result.json")
        log = read_tail(adir / "log")
        if result is None:
            store.finish(job["id"], job["attempt"], code or 1, f"the job's runner failed (exit {code})", log)
            return
        detail = {k: result.get(k) for k in ("results", "claims", "runs", "trace") if result.get(k) is not None}
        if result.get("picture") == "trace.png" and picture(adir / "trace.png") is not None:
            detail["picture"] = True
        store.finish(job["id"], job["attempt"], int(result.get("exit", 1)), str(result.get("summary", ""))[:500],
                     str(result.get("output", ""))[-(64 << 10):], str(result.get("report") or "")[-(64 << 10):],
                     detail or None)


def _open_nofollow(path):
    return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)


def read_json(path, cap=4 << 20):
    try:
        fd = _open_nofollow(path)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read(cap + 1)
    try:
        value = json.loads(data) if len(data) <= cap else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def picture(path):
    """The PNG a job drew (its attempt's trace.png), or None: a regular file, not followed
    through a link, at most PICTURE_CAP bytes, that starts as a PNG does."""
    try:
        fd = _open_nofollow(path)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read(PICTURE_CAP + 1)
    return data if data.startswith(PNG) and len(data) <= PICTURE_CAP else None


def read_tail(path, cap=16 << 10):
    try:
        fd = _open_nofollow(path)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - cap))
        return f.read(cap).decode("utf-8", "replace")


# ---- limits --------------------------------------------------------------------------------

class Rate:
    """At most N events per minute per key (a sliding window)."""

    def __init__(self, per_minute):
        self.n, self.events, self.lock = per_minute, defaultdict(deque), threading.Lock()

    def allow(self, key):
        now = time.monotonic()
        with self.lock:
            q = self.events[key]
            while q and q[0] < now - 60:
                q.popleft()
            if len(q) >= self.n:
                return False
            q.append(now)
            return True


# ---- the server ----------------------------------------------------------------------------

class CourseServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, addr, state, backend, cfg, job_argv, grader_options=(), server_names=()):
        self.store, self.backend, self.cfg = Store(state), backend, cfg
        self.state = Path(state)
        (self.state / "jobs").mkdir(exist_ok=True, mode=0o700)
        self.job_argv, self.grader_options = job_argv, list(grader_options)
        self.stopping = threading.Event()
        self.rates = {k: Rate(cfg[k]) for k in ("submits_per_minute", "requests_per_minute", "logins_per_minute")}
        self.connections = threading.BoundedSemaphore(cfg["max_connections"])
        self.per_address, self.per_address_lock = {}, threading.Lock()
        from grader import api
        self.programs = api.programs()
        self.traced = api.traced_programs()
        self.api = api
        self.exercises = sorted(p.name[:-len(".exercise")] for p in (REPO / "tests" / "exercises").glob("*.exercise"))
        self.lab_chapters = [lab["chapter"] for lab in json.loads((REPO / "labs" / "labs.json").read_text())["labs"]]
        super().__init__(addr, Handler)
        self.hosts = allowed_hosts(addr[0], server_names)

    # A bounded number of connections (slowloris), in all and from one address: one over a
    # bound is answered 503 and closed at once; and each request has request_s seconds, all in,
    # before its connection is cut (Handler.handle_one_request): a slow client holds a bounded
    # number of threads, each for a bounded time.
    def process_request(self, request, client_address):
        with self.per_address_lock:
            mine = self.per_address.get(client_address[0], 0)
            if mine < self.cfg["connections_per_address"] and self.connections.acquire(blocking=False):
                self.per_address[client_address[0]] = mine + 1
                mine = None
        if mine is not None:  # the bound, for this address or for all of them
            try:
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                b"Connection: close\r\nRetry-After: 5\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.release(client_address)
            raise

    def release(self, client_address):
        with self.per_address_lock:
            self.per_address[client_address[0]] -= 1
            if not self.per_address[client_address[0]]:
                del self.per_address[client_address[0]]
        self.connections.release()

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.release(client_address)

    def handle_error(self, request, client_address):
        """A connection that failed outside a route (a client gone mid-answer): one line, the
        error's type only (socketserver's default prints a traceback)."""
        sys.stderr.write(f"{client_address[0]} connection failed: {sys.exc_info()[0].__name__}\n")

    def jobdir(self, job_id):
        return self.state / "jobs" / str(int(job_id))

    def start_workers(self):
        """Jobs left running by a stopped server: adopted where the backend still runs them,
        else queued again (a new attempt). Then one worker per slot."""
        slots = self.backend.slots()
        self.store.recover_new(lambda job_id: self.jobdir(job_id).is_dir())
        adopt = {}
        for job in self.store.running():
            handle = json.loads(job["handle"]) if job["handle"] else None
            if handle and job["slot"] in slots and job["slot"] not in adopt and \
                    self.backend.alive_after_restart(handle):
                adopt[job["slot"]] = (job, handle)
            else:
                self.store.requeue(job["id"], job["attempt"], "the server stopped while it ran")
        self.workers = [Worker(self, s, adopt.get(s)) for s in slots]
        for w in self.workers:
            w.start()


class Handler(BaseHTTPRequestHandler):
    server_version = "course-server"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds a connection may sit idle or send slowly (a slow client holds one thread)

    # -- the log: the method, the route (LOGGED; any other path is not written) and the code;
    # never a query, a header, a body or the request line as sent (a token pasted into any of
    # them stays out of it)
    def logged_path(self):
        path = urllib.parse.urlsplit(getattr(self, "path", "") or "").path
        return path if LOGGED.match(path) else "(another path)"

    def log_line(self, what):
        method = getattr(self, "command", None)
        method = method if method in ("GET", "HEAD", "POST") else "-"
        sys.stderr.write(f"{self.client_address[0]} [{self.log_date_time_string()}] "
                         f"{method} {self.logged_path()} {what}\n")

    def log_request(self, code="-", size="-"):  # one line per request only with SERVER_LOG=1
        if os.environ.get("SERVER_LOG"):
            self.log_line(str(getattr(code, "value", code)))

    def log_error(self, format, *args):  # http.server's own: its message may quote the request
        code = args[0] if args and isinstance(args[0], int) else "-"
        self.log_line(f"refused {code}")

    def handle_one_request(self):
        """One request, cut off (its connection shut) when it takes more than request_s."""
        timer = threading.Timer(self.server.cfg["request_s"], self.cut)
        timer.daemon = True
        timer.start()
        try:
            super().handle_one_request()
        finally:
            timer.cancel()

    def cut(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def parse_request(self):
        """http.server's parsing (request line at most 64 KiB: 414; a header line at most 64 KiB
        and at most 100 of them: 431), then: all the header lines together at most HEADER_BYTES
        (431), and a Host that names this server (400: a page loaded from another name, as DNS
        rebinding does, gets nothing)."""
        if not super().parse_request():
            return False
        if sum(len(k) + len(v) + 4 for k, v in self.headers.items()) > HEADER_BYTES:
            self.send_error(431, "Request header fields too large")
            return False
        if self.headers.get("Transfer-Encoding") is not None or \
                len(self.headers.get_all("Content-Length") or []) > 1:
            # one body length, from one Content-Length: nothing a proxy in front could read
            # otherwise (request smuggling)
            self.close_connection = True
            self.fail(411, "one Content-Length, and no Transfer-Encoding, please")
            return False
        if len(self.headers.get_all("Host") or []) != 1 or \
                host_name(self.headers.get("Host")) not in self.server.hosts:
            self.close_connection = True
            self.fail(400, "this server is not called by that name (the Host header): use its own address")
            return False
        return True

    # -- answers --
    def send(self, code, body, ctype="text/html; charset=utf-8", headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        for k, v in web.HEADERS.items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def json(self, code, value, headers=()):
        self.send(code, json.dumps(value), "application/json", headers)

    def fail(self, code, message):
        if self.path.startswith("/api/"):
            self.json(code, {"error": message})
        else:
            self.send(code, web.error_page(code, message))

    def redirect(self, where, headers=()):
        self.send(303, "", headers=[("Location", where)] + list(headers))

    # -- who asks --
    def cookie(self, name):
        c = cookies.SimpleCookie()
        try:
            c.load(self.headers.get("Cookie", ""))
        except cookies.CookieError:
            return None
        return c[name].value if name in c else None

    def who(self):
        """(student, csrf or None, via): a bearer token (the client; no CSRF: no cookie is
        involved) or the session cookie (a browser; every POST then needs its CSRF token)."""
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            s = self.server.store.student_of_token(auth[7:].strip())
            return (s, None, "token") if s else (None, None, None)
        sess = self.server.store.session(self.cookie("session"))
        return (sess[0], sess[1], "cookie") if sess else (None, None, None)

    def body(self):
        n = self.headers.get("Content-Length")
        if n is None or not n.isdigit():
            raise ValueError(411, "a request body needs a Content-Length")
        n = int(n)
        if n > self.server.cfg["max_upload"] * 4 // 3 + self.server.cfg["max_edit"] * 2 + (64 << 10):
            raise ValueError(413, f"the request is larger than the limit ({self.server.cfg['max_upload']} bytes of upload)")
        return self.rfile.read(n)

    def form(self, data):
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("application/x-www-form-urlencoded"):
            return {k: v[0] for k, v in urllib.parse.parse_qs(data.decode("utf-8", "replace"),
                                                              keep_blank_values=True).items()}, {}
        if ctype.startswith("multipart/form-data"):
            msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + data)
            fields, files = {}, {}
            for part in msg.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if not name:
                    continue
                payload = part.get_payload(decode=True) or b""
                if part.get_filename() is not None:
                    files[name] = payload
                else:
                    fields[name] = payload.decode("utf-8", "replace")
            return fields, files
        if ctype.startswith("application/json"):
            try:
                value = json.loads(data or b"{}")
            except ValueError:
                raise ValueError(400, "the body is not JSON")
            if not isinstance(value, dict):
                raise ValueError(400, "a JSON object, please")
            for k, v in value.items():
                if not (isinstance(v, str) or k == "args" and isinstance(v, list) and
                        all(isinstance(w, str) for w in v)):
                    raise ValueError(400, f"{str(k)[:40]}: a string (args: a list of strings)")
            return value, {}
        raise ValueError(415, "send a form or JSON")

    # -- routes --
    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        try:
            self.route_get()
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass
        except Exception as err:  # noqa: BLE001  (one answer, never a dropped connection)
            self.log_line(f"failed: {type(err).__name__}")  # its type only: its text may quote input
            self.fail(500, "the server failed on this request")

    def do_POST(self):
        try:
            self.route_post()
        except ValueError as err:
            code, msg = err.args if len(err.args) == 2 else (400, str(err))
            self.fail(code, msg)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass
        except Exception as err:  # noqa: BLE001
            self.log_line(f"failed: {type(err).__name__}")
            self.fail(500, "the server failed on this request")

    def limited(self, student):
        if not self.server.rates["requests_per_minute"].allow(student):
            self.fail(429, "too many requests: wait a minute")
            return True
        return False

    def route_get(self):
        path = urllib.parse.urlsplit(self.path).path
        srv = self.server
        if path == "/static/app.js":
            return self.send(200, web.SCRIPT, "text/javascript; charset=utf-8")
        if path == "/static/style.css":
            return self.send(200, web.STYLE, "text/css; charset=utf-8")
        if path == "/favicon.ico":  # asked for by browsers on their own; no login redirect
            return self.send(404, "no icon\n", "text/plain; charset=utf-8")
        if path == "/login":
            # Keep the browser's login token while it is well formed: a second GET of /login
            # (another tab, a reload, a request the browser makes on its own) must not make the
            # form already on screen fail its CSRF check.
            kept = self.cookie("login_csrf") or ""
            csrf = kept if re.fullmatch(r"[0-9a-f]{48}", kept) else os.urandom(24).hex()
            return self.send(200, web.login(csrf), headers=[("Set-Cookie", self.cookie_header("login_csrf", csrf))])
        student, csrf, via = self.who()
        if student is None:
            if path.startswith("/api/"):
                return self.fail(401, "log in: a token (Authorization: Bearer TOKEN)")
            return self.redirect("/login")
        if self.limited(student):
            return
        if path == "/":
            return self.send(200, web.home(student, csrf, sorted(srv.programs), srv.exercises,
                                           srv.store.labs(), srv.store.history(student), srv.traced))
        if path == "/api/programs":
            return self.json(200, {"programs": {k: v[2] for k, v in srv.programs.items()},
                                   "exercises": srv.exercises, "labs": srv.store.labs(), "traced": srv.traced})
        if path == "/api/jobs":
            jobs = srv.store.history(student)
            for j in jobs:
                j["position"] = srv.store.position(j) if j["state"] == "queued" else 0
            return self.json(200, {"student": student, "jobs": jobs})
        m = re.fullmatch(r"/(api/)?jobs/(\d{1,12})(/trace\.png)?", path)
        if m:
            job = srv.store.job(int(m.group(2)), student)
            if job is None:  # another student's job answers as one that does not exist
                return self.fail(404, "no such job")
            if m.group(3):  # the job's picture: the id is digits and the name fixed, so no path climbs
                detail = json.loads(job["detail"]) if job["detail"] else {}
                data = picture(srv.jobdir(job["id"]) / f"a{job['result_attempt']}" / "trace.png") \
                    if detail.get("picture") else None
                if data is None:
                    return self.fail(404, "this job has no picture")
                return self.send(200, data, "image/png")
            if m.group(1):
                return self.json(200, {k: job[k] for k in ("id", "kind", "state", "position", "attempt",
                                                           "exit", "summary", "output", "report")}
                                 | {"progress": web.progress(job),
                                    "detail": json.loads(job["detail"]) if job["detail"] else None})
            return self.send(200, web.job_page(job, student, csrf))
        return self.fail(404, "no such page")

    def cookie_header(self, name, value, max_age=None):
        extra = f"; Max-Age={max_age}" if max_age is not None else ""
        if self.server.cfg.get("secure_cookies"):  # behind a TLS proxy: never sent over plain HTTP
            extra += "; Secure"
        return f"{name}={value}; HttpOnly; SameSite=Strict; Path=/{extra}"

    def route_post(self):
        path = urllib.parse.urlsplit(self.path).path
        srv = self.server
        if path == "/login":
            if not srv.rates["logins_per_minute"].allow(self.client_address[0]):
                return self.fail(429, "too many log-in attempts: wait a minute")
            fields, _ = self.form(self.body())
            want = self.cookie("login_csrf")
            if not want or not _same(fields.get("csrf", ""), want):
                return self.fail(403, "the form is stale or forged (CSRF check): reload the log-in page")
            student = srv.store.student_of_token(fields.get("token", "").strip())
            if student is None:
                csrf = os.urandom(24).hex()
                return self.send(403, web.login(csrf, "unknown or revoked token"),
                                 headers=[("Set-Cookie", self.cookie_header("login_csrf", csrf))])
            sid, _ = srv.store.new_session(student)
            return self.redirect("/", [("Set-Cookie", self.cookie_header("session", sid)),
                                       ("Set-Cookie", self.cookie_header("login_csrf", "", 0))])
        student, csrf, via = self.who()
        if student is None:
            return self.fail(401 if path.startswith("/api/") else 403, "log in first")
        if self.limited(student):
            return
        fields, files = self.form(self.body())
        if via == "cookie":
            if path.startswith("/api/"):
                return self.fail(403, "the API takes a bearer token, not a cookie")
            if not _same(str(fields.get("csrf", "")), csrf):
                return self.fail(403, "the form is stale or forged (CSRF check): reload the page")
        if path == "/logout":
            srv.store.end_session(self.cookie("session"))
            return self.redirect("/login", [("Set-Cookie", self.cookie_header("session", "", 0))])
        if path in ("/jobs", "/api/jobs"):
            if not srv.rates["submits_per_minute"].allow(student):
                return self.fail(429, f"at most {srv.cfg['submits_per_minute']} submissions a minute: wait")
            job_id = self.new_job(student, fields, files)
            if path == "/api/jobs":
                return self.json(201, {"id": job_id, "url": f"/jobs/{job_id}"})
            return self.redirect(f"/jobs/{job_id}")
        return self.fail(404, "no such page")

    def new_job(self, student, fields, files):
        """Checks the request, writes the job's folder, queues it: its id (ValueError: 400)."""
        srv, cfg = self.server, self.server.cfg
        kind = fields.get("kind")
        spec = {"kind": kind, "grader_options": srv.grader_options}
        edit = fields.get("edit") or None
        if isinstance(edit, str) and not edit.strip():
            edit = None
        if edit is not None:
            if not isinstance(edit, str) or len(edit.encode()) > cfg["max_edit"]:
                raise ValueError(413, f"the edit is larger than {cfg['max_edit']} bytes")
            if "\0" in edit:
                raise ValueError(400, "the edit is not text")
            # A browser sends a textarea's lines ending in CR LF (the HTML form rules); the
            # course's files end theirs in LF, and the lint refuses a CR in a region.
            edit = edit.replace("\r\n", "\n")
        upload = None
        if kind == "run":
            program = fields.get("program")
            if program not in srv.programs:
                raise ValueError(400, f"no program {str(program)[:40]!r}")
            args = fields.get("args", "")
            try:
                words = shlex.split(args) if isinstance(args, str) else [str(a) for a in args]
            except ValueError:
                raise ValueError(400, "the arguments do not parse (an unclosed quote?)")
            flags = srv.programs[program][2]
            if len(words) > cfg["max_args"]:
                raise ValueError(400, f"at most {cfg['max_args']} arguments")
            for w in words:
                if not ARG_WORD.match(w):
                    raise ValueError(400, f"argument {w[:40]!r}: letters, digits and ^._:,+=- only, at most 64")
                if w.startswith("--") and w.split("=")[0] not in flags:
                    raise ValueError(400, f"{program} has no flag {w.split('=')[0]} (its flags: {' '.join(flags)})")
            trace = str(fields.get("trace", "")).lower() in ("1", "on", "true", "yes")
            if trace and program not in srv.traced:
                raise ValueError(400, f"{program} has no traced picture (those that have one: {', '.join(srv.traced)})")
            spec.update(program=program, args=words, edit=edit is not None, timeout=cfg["run_timeout"], trace=trace)
        elif kind == "exercise":
            name = fields.get("exercise")
            if name not in srv.exercises:
                raise ValueError(400, f"no exercise {str(name)[:60]!r}")
            spec.update(exercise=name, edit=edit is not None)
        elif kind == "grade":
            lab = fields.get("lab")
            if lab not in srv.lab_chapters:
                raise ValueError(400, f"no lab {str(lab)[:20]!r}")
            ok, why = srv.store.lab_open(lab)
            if not ok:
                raise ValueError(403, why)
            upload = files.get("upload")
            if upload is None and isinstance(fields.get("upload_b64"), str):
                import base64
                upload = base64.b64decode(fields["upload_b64"], validate=False)
            if not upload:
                raise ValueError(400, "no upload: send your lab folder as a .tar.gz or .zip")
            if len(upload) > cfg["max_upload"]:
                raise ValueError(413, f"the upload is larger than {cfg['max_upload']} bytes")
            spec.update(lab=lab)
        else:
            raise ValueError(400, "kind: run, exercise or grade")
        if edit is not None:  # refused now, with the lint's words, rather than after the queue
            why = srv.api.refused_edit(kind, spec.get("program") or spec.get("exercise"), edit, spec.get("trace"))
            if why:
                raise ValueError(400, why)
        staging = srv.state / "jobs" / f"new-{os.urandom(8).hex()}"
        staging.mkdir(mode=0o700)
        try:
            if upload is not None:
                try:
                    folder = uploads.unpack(upload, staging / "sub", cfg["max_files"], cfg["max_unpacked"],
                                            min(cfg["max_unpacked"], 1 << 20))
                except uploads.Refused as err:
                    raise ValueError(400, str(err))
                spec["submission"] = str(folder.relative_to(staging))
            if edit is not None:
                (staging / "edit.cu").write_text(edit)
            # The folder is complete before the job is queued: a worker never sees half of it.
            job_id = srv.store.reserve(student, kind, spec, cfg["max_queued"])
            spec["job"], spec["student"] = job_id, student
            (staging / "spec.json").write_text(json.dumps(spec))
            os.rename(staging, srv.jobdir(job_id))
            srv.store.release(job_id)
            return job_id
        except ValueError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        except Exception:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def host_name(value):
    """The name of a Host header, lower case, without its port ('[::1]:80' -> '::1'), or None."""
    if not value or len(value) > 255:
        return None
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.index("]")] if "]" in value else None
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_hosts(bound, names=()):
    """The names a request may call this server by: the address it listens on, the names given
    (--server-name: the name students use, behind a proxy), and on loopback 'localhost'. A
    server on every address (0.0.0.0) takes only the names given, and this machine's name."""
    hosts = {n.lower() for n in names}
    if bound not in ("0.0.0.0", "::", ""):
        hosts.add(bound.lower())
    else:
        hosts.add(socket.gethostname().lower())
    if bound.startswith("127.") or bound in ("::1", "localhost"):
        hosts |= {"localhost", "127.0.0.1", "::1", bound}
    return hosts


def _same(a, b):
    import hmac
    return isinstance(a, str) and isinstance(b, str) and hmac.compare_digest(a.encode(), b.encode())


def check_uids(backend, accept_same_uid=False):
    """The server must not be the user that student code runs as. Refused: a server whose uid
    is in the range the grader's fence gives student code; and, with local workers that run
    real jobs, a machine where the fence cannot drop to a uid of its own (not root: the
    'namespaces-user' fence runs student code as the server's user, mapped), unless the
    instructor accepts it. Returns the fence's description (None where no fence is probed)."""
    from grader.fence import UID_BASE, Fence
    if UID_BASE <= os.getuid() < UID_BASE + 4096:
        raise SystemExit(f"serve.py: refused: this server runs as uid {os.getuid()}, in the range the "
                         "grader's fence gives student code")
    if not isinstance(backend, backends.LocalBackend) or backend.cpu_workers:
        return None  # a cluster's nodes run the fence (server/slurm/); the tests' fake jobs run none
    fence = Fence()
    if not fence.drops_uid:
        if not accept_same_uid:
            raise SystemExit(f"serve.py: refused: the grader's fence here is '{fence.kind}', which runs "
                             "student code as this server's own user; start the server as root (the "
                             "fence then gives each job a uid of its own), or pass --accept-same-uid")
        return fence.describe() + " (SAME UID as the server: accepted)"
    slot = fence.take_slot()
    try:
        assert fence.uid(slot) != os.getuid(), "the fence's uid is the server's"
    finally:
        fence.give_slot(slot)
    return fence.describe()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--state", required=True, help="the server's folder: server.db and the jobs")
    p.add_argument("--host", default="127.0.0.1", help="default loopback; a course's address to open it")
    p.add_argument("--port", type=int, default=8045)
    p.add_argument("--server-name", action="append", default=[], metavar="NAME",
                   help="a name students reach the server by (the Host of their requests, e.g. the "
                        "proxy's course.example.edu); every other Host is refused")
    p.add_argument("--secure-cookies", action="store_true",
                   help="mark the cookies Secure (behind a TLS proxy: a browser then never sends them "
                        "over plain HTTP)")
    p.add_argument("--backend", choices=("local", "slurm"), default="local")
    for k, what in (("conf", "the cluster's slurm.conf"), ("partition", "the partition"),
                    ("gres", "the GPU gres of a job (default: gpu:1 where the partition has GPUs)"),
                    ("jobs", "jobs handed to the cluster at once (the workers)"),
                    ("time", "a job's time limit in minutes")):
        p.add_argument(f"--slurm-{k}", help=f"--backend slurm: {what} (server/slurm/)")
    p.add_argument("--slurm-option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other word for the Slurm backend")
    p.add_argument("--accept-same-uid", action="store_true",
                   help="run student code as this server's own user where the fence cannot drop to "
                        "another (not root); refused without it")
    p.add_argument("--cpu-workers", type=int, help=argparse.SUPPRESS)  # tests: fake jobs, no GPU
    p.add_argument("--job-command", help=argparse.SUPPRESS)  # tests: a fake job in place of runner.py
    p.add_argument("--grader-option", action="append", default=[],
                   help="passed to lab.py grade (e.g. --arch=sm_90, --timeout=60)")
    for k, v in defaults().items():
        p.add_argument("--" + k.replace("_", "-"), type=type(v), default=v)
    args = p.parse_args(argv)
    cfg = {k: getattr(args, k) for k in defaults()}
    cfg["secure_cookies"] = args.secure_cookies
    options = dict(o.split("=", 1) for o in args.slurm_option)
    options.update({k: getattr(args, f"slurm_{k}") for k in ("conf", "partition", "gres", "jobs", "time")
                    if getattr(args, f"slurm_{k}") is not None})
    options["cpu_workers"] = args.cpu_workers
    backend = backends.make_backend(args.backend, options)
    fence = check_uids(backend, args.accept_same_uid)
    job_argv = shlex.split(args.job_command) if args.job_command else [sys.executable, str(HERE / "runner.py")]
    srv = CourseServer((args.host, args.port), args.state, backend, cfg, job_argv, args.grader_option,
                       args.server_name)
    srv.start_workers()
    why = backend.cannot_run()
    print(f"serve.py: http://{args.host}:{srv.server_address[1]}/ state {args.state}, backend {backend.name}, "
          f"workers {', '.join(backend.slots())}" + (f" ({why}: every job ends with exit 77)" if why else ""),
          flush=True)
    if fence:
        print(f"serve.py: student code runs in the grader's fence: {fence}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.shutdown).start())
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    srv.stopping.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What a job shows, and the server's edge against a hostile client, on a machine without a GPU.

EditTest (no server): an exercise's edit is the lines the exercise changes, linted (each
exercise's own answer taken, cheats refused), its claims held or not with the values measured
(from the committed H200 record), a traced run 77 here. PageTest: the job page and client.py
show the claims, the runs and the traced picture (served as image/png to its owner only), an
edit refused at submission, every route parameter that climbs. EdgeTest: the Host header (DNS
rebinding), oversized request lines, headers and bodies, slowloris (a bounded number of
connections, each request cut after --request-s), and a log that never holds a secret."""
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serverlib import FAKEJOB, REPO, Client, Server  # noqa: E402

sys.path.insert(0, str(REPO / "labs"))
sys.path.insert(0, str(REPO / "tests" / "exercises"))
sys.path.insert(0, str(REPO))
import exercise as ex  # noqa: E402
from grader import api  # noqa: E402
from grader.fence import gpu_probe  # noqa: E402
from server import client  # noqa: E402

NO_GPU = gpu_probe() is not None
RECORD = json.loads((REPO / "docs" / "runs" / "h200" / "side" / "exercises.json").read_text())


def answer(name, old=None, new=None):
    """Exercise NAME, and its own answer (the patched program), with OLD replaced by NEW."""
    e = ex.parse(ex.find(name))
    text = ex.patched(e)
    if old is not None:
        assert old in text, old
        text = text.replace(old, new, 1)
    return e, text


class EditTest(unittest.TestCase):
    def test_each_exercise_takes_its_own_answer_as_an_edit(self):
        taken = 0
        for f in ex.all_files():
            e = ex.parse(f)
            text, why, note = api.exercise_text(e, ex.patched(e))
            if e["patches"]:
                self.assertIsNone(why, e["name"])
                self.assertEqual(text.rstrip("\n"), ex.patched(e).rstrip("\n"))
                self.assertIn("linted: accepted", note)
                taken += 1
            else:  # it runs the program as it is: no edit to take
                self.assertIn("takes no edit", why, e["name"])
        self.assertGreater(taken, 15)

    def test_cheating_exercise_edits_are_refused(self):
        cases = [  # (exercise, the answer's text, the cheat's, what the refusal says)
            ("ch02_vector_add.3", "c[i] = a[i] + b[i];", 'c[i] = a[i] + b[i]; system("id");',
             "region ch02.grid-stride: call not allowed: 'system'"),
            ("ch03_dot_product.2a", "const int THREADS_PER_BLOCK = ", 'const int THREADS_PER_BLOCK = (system("x"), 0) + ',
             "call not allowed: 'system'"),
            ("ch04_matmul.2", "__global__ void matmul_gm_global_sum(",
             '__global__ void f() { asm("trap;"); }\n__global__ void matmul_gm_global_sum(', "forbidden word: 'asm'"),
            ("ch04_matmul.2", "__global__ void matmul_gm_global_sum(",
             "__global__ __launch_bounds__(64) void matmul_gm_global_sum(", "forbidden word: '__launch_bounds__'"),
            ("ch05_raytrace.2", "__global__ void render(", "#include <cstdlib>\n__global__ void render(", "preprocessor"),
            ("ch04_tensor_cores.wgmma-2-stages5", "const int STAGES = 5;", "const int STAGES = clock();",
             "forbidden word: 'clock'"),
            ("ch03_dot_product.3", "#include", "#include <cstdlib>\n#include", "lets you change only lines "),
            ("ch02_vector_add.3", "// LAB ch02.grid-stride {", "// LAB ch02.grid-strider {", "lets you change only"),
            ("ch02_vector_add.3", "    add<<<blocks, threads>>>", "    add<<<1, 1>>>", "lets you change only lines "),
        ]
        for name, old, new, want in cases:
            e, text = answer(name, old, new)
            got, why, _ = api.exercise_text(e, text)
            self.assertTrue(got is None, (name, new))
            self.assertIn(want, why, name)
        e, text = answer("ch04_tensor_cores.wgmma-2-stages5", "const int STAGES = 5;", "const int STAGES = 3;")
        self.assertIsNone(api.exercise_text(e, text)[1])  # another value in the editable line: taken

    def test_run_exercise_refuses_before_any_build_and_says_77_without_a_gpu(self):
        work = Path(tempfile.mkdtemp(prefix="server-jobs-"))
        try:
            _, cheat = answer("ch03_dot_product.2a", "const int THREADS_PER_BLOCK = ", "const int THREADS_PER_BLOCK = clock() + ")
            r = api.run_exercise("ch03_dot_product.2a", str(work), edit=cheat)
            self.assertEqual(r["exit"], 1)
            self.assertIn("the lint refused your edit", r["summary"])
            self.assertIn("'clock'", r["output"])
            if not NO_GPU:
                self.skipTest("a GPU here: the exercise would run (tools/gpu_proof.sh)")
            r = api.run_exercise("ch02_vector_add.3", str(work), edit=answer("ch02_vector_add.3")[1])
            self.assertEqual((r["exit"], r["summary"][:22]), (77, "cannot run here: no GP"))
            self.assertIn("linted: accepted", r["output"])
        finally:
            shutil.rmtree(work)

    def test_claims_held_with_their_measured_values_and_a_doctored_record_fails_one(self):
        e = ex.parse(ex.find("ch02_vector_add.3"))
        rec = RECORD["exercises"]["ch02_vector_add.3"]
        r = api.exercise_result(e, rec)
        self.assertEqual((r["exit"], r["summary"]), (0, "3 of 3 claims held"))
        self.assertTrue(all(c["holds"] for c in r["claims"]))
        self.assertGreater(r["claims"][1]["value"], 3000)  # the impossible bandwidth, GB/s
        self.assertEqual([x["run"] for x in r["runs"]], ["square", "wide"])
        doctored = json.loads(json.dumps(rec))
        doctored["runs"]["wide"]["tries"][0]["exit"] = 0
        doctored["runs"]["wide"]["tries"][0]["lines"] = ["Verdict: PASS (all elements match)"]
        r = api.exercise_result(e, doctored)
        self.assertEqual((r["exit"], r["summary"]), (1, "2 of 3 claims held"))
        self.assertEqual((r["claims"][2]["holds"], r["claims"][2]["value"]), (False, None))

    def test_a_traced_run_checks_its_edit_and_says_77_without_a_gpu(self):
        work = Path(tempfile.mkdtemp(prefix="server-jobs-"))
        try:
            src = (REPO / "ch02_vector_add" / "VA-GPU-NN.cu").read_text()
            r = api.run_program("streams", [], str(work), trace=True)
            self.assertEqual(r["exit"], 2)
            self.assertIn("has no traced picture", r["summary"])
            broken = src.replace("c[i] = a[i] + b[i];", "c[i] = b[i] + a[i];")
            self.assertIn("trace cannot record your edit", api.refused_edit("run", "VA-GPU-NN", broken, True))
            r = api.run_program("VA-GPU-NN", [], str(work), edit=broken, trace=True)
            self.assertEqual(r["exit"], 1)
            self.assertIsNone(api.refused_edit("run", "VA-GPU-NN", broken, False))  # untraced: taken
            if not NO_GPU:
                self.skipTest("a GPU here: the trace would run (tools/gpu_proof.sh)")
            for edit in (None, src):
                r = api.run_program("VA-GPU-NN", [], str(work), edit=edit, trace=True)
                self.assertEqual((r["exit"], r["summary"][:22]), (77, "cannot run here: no GP"))
        finally:
            shutil.rmtree(work)


class PictureTest(unittest.TestCase):
    """The trace a fenced run wrote, read back and drawn (api._picture), on the committed H200
    trace of VA-GPU-NN as the fenced folder's trace.csv; a link or a malformed trace refused."""

    def picture(self, write):
        jail = Path(tempfile.mkdtemp(prefix="server-jobs-"))
        self.addCleanup(shutil.rmtree, jail)
        cwd = jail / "tree" / "ch02_vector_add"
        cwd.mkdir(parents=True)
        write(cwd / "trace.csv")
        (jail / "work").mkdir()
        args = ["--n", "40", "--blocks", "2", "--threads", "8", "--repeats", "1"]
        return api._picture("VA-GPU-NN", args, cwd, jail, jail / "work"), jail / "work" / "trace.png"

    def test_the_trace_is_summed_up_and_drawn_where_matplotlib_is(self):
        import gzip
        data = gzip.decompress((REPO / "docs" / "runs" / "h200" / "traces" / "VA-GPU-NN.csv.gz").read_bytes())
        r, png = self.picture(lambda p: p.write_bytes(data))
        self.assertIn("c: 40 of 40 elements written, 0 more than once, 0 outside", r["trace"])
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.assertIn("recorded, not drawn", r["trace"])
            self.assertNotIn("picture", r)
            return
        self.assertEqual(r["picture"], "trace.png")
        self.assertTrue(png.read_bytes().startswith(b"\x89PNG"))

    def test_a_linked_or_malformed_trace_is_refused(self):
        r, png = self.picture(lambda p: p.symlink_to("/etc/passwd"))
        self.assertEqual(r, {"trace": "no trace was written (not opened (a symbolic link))"})
        r, png = self.picture(lambda p: p.write_text("block_x,zzz\n1,2\n"))
        self.assertIn("the trace could not be read or drawn: KeyError", r["trace"])
        self.assertFalse(png.exists())


def raw(port, data, read=True, timeout=10):
    """Sends DATA on a connection of its own; the answer's status line (b'' when closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        return s.makefile("rb").readline() if read else b""


class PageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="server-jobs-"))
        cls.srv = Server(cls.tmp / "state", fake=FAKEJOB).start()
        cls.alice, cls.bob = cls.srv.student("alice"), cls.srv.student("bob")

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def submit(self, who, body):
        c = Client(self.srv.port, who)
        s, r = c.api("POST", "/api/jobs", body)
        self.assertEqual(s, 201, r)
        self.assertTrue(self.srv.wait_done([r["id"]], 30))
        return r["id"]

    def test_the_exercise_page_and_the_client_show_which_claims_held_with_their_values(self):
        job = self.submit(self.alice, {"kind": "exercise", "exercise": "ch02_vector_add.3",
                                       "edit": answer("ch02_vector_add.3")[1]})
        b = Client(self.srv.port)
        b.login(self.alice)
        s, _, page = b.get(f"/jobs/{job}")
        self.assertEqual(s, 200)
        claims = page.split('<ul id="job-claims">')[1].split("</ul>")[0]
        self.assertEqual(claims.count("<li class=\"held\">held: "), 3)
        self.assertIn('(measured: <span class="value">7411</span>)', claims)
        self.assertIn("198180864", claims)
        self.assertIn("<code>square</code> (patched, --blocks 128 --threads 128): exit 1", page)
        self.assertIn("&lt;b&gt;the log&lt;/b&gt;", page)
        out = io.StringIO()
        with redirect_stdout(out):
            code = client.main(["--server", f"http://127.0.0.1:{self.srv.port}", "--token", self.alice,
                                "status", str(job)])
        self.assertEqual(code, 0)
        args = type("A", (), {"server": f"http://127.0.0.1:{self.srv.port}", "token": self.alice})
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(client.wait(args, job), 0)
        text = out.getvalue()
        self.assertIn("3 of 3 claims held", text)
        self.assertIn("held: because the program also times the kernel", text)
        self.assertIn("(measured: 7411.0; claim: number(square", text)
        self.assertIn("run wide (patched, --blocks 64 --threads 256): exit 1", text)

    def test_an_edit_is_refused_at_submission_with_the_lints_words(self):
        c = Client(self.srv.port, self.bob)
        for body, want in (
                ({"kind": "exercise", "exercise": "ch02_vector_add.3",
                  "edit": answer("ch02_vector_add.3", "c[i] = a[i] + b[i];", 'c[i] = 0; system("id");')[1]},
                 "call not allowed: 'system'"),
                ({"kind": "exercise", "exercise": "ch02_vector_add.1", "edit": "int main() {}"}, "takes no edit"),
                ({"kind": "exercise", "exercise": "ch03_dot_product.3", "edit": "int main() {}"}, "lets you change only"),
                ({"kind": "run", "program": "VA-GPU-NN", "args": [], "edit": (REPO / "ch02_vector_add" / "VA-GPU-NN.cu")
                  .read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + b[i]; asm(\"trap;\");")}, "'asm'"),
                ({"kind": "run", "program": "streams", "args": [], "trace": "1"}, "has no traced picture")):
            s, r = c.api("POST", "/api/jobs", body)
            self.assertEqual(s, 400, body.get("exercise") or body.get("program"))
            self.assertIn(want, r["error"])
        self.assertEqual(c.api("GET", "/api/jobs")[1]["jobs"], [])  # nothing was queued

    def test_the_traced_picture_is_a_png_for_its_owner_only(self):
        job = self.submit(self.alice, {"kind": "run", "program": "VA-GPU-NN", "args": [], "trace": "1"})
        plain = self.submit(self.alice, {"kind": "run", "program": "VA-GPU-NN", "args": []})
        b = Client(self.srv.port)
        b.login(self.alice)
        s, _, page = b.get(f"/jobs/{job}")
        self.assertIn(f'<img id="job-picture" src="/jobs/{job}/trace.png"', page)
        self.assertIn('<pre id="job-trace">  c        global write      40 accesses &lt;b&gt;</pre>', page)
        for who, path in ((b, f"/jobs/{job}/trace.png"), (Client(self.srv.port, self.alice), f"/api/jobs/{job}/trace.png")):
            conn = __import__("http.client").client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
            headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in who.cookies.items())} if who.cookies else \
                {"Authorization": f"Bearer {self.alice}"}
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            data = r.read()
            conn.close()
            self.assertEqual((r.status, r.headers["Content-Type"], r.headers["X-Content-Type-Options"]),
                             (200, "image/png", "nosniff"))
            self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"))
        bob = Client(self.srv.port, self.bob)
        self.assertEqual(bob.api("GET", f"/api/jobs/{job}/trace.png"), bob.api("GET", "/api/jobs/99999/trace.png"))
        self.assertEqual(bob.api("GET", f"/api/jobs/{job}/trace.png")[0], 404)
        self.assertEqual(Client(self.srv.port, self.alice).api("GET", f"/api/jobs/{plain}/trace.png")[0], 404)
        out, png = io.StringIO(), self.tmp / "mine.png"  # the client's own command line
        with redirect_stdout(out):
            code = client.main(["--server", f"http://127.0.0.1:{self.srv.port}", "--token", self.alice, "run",
                                "VA-GPU-NN", "--trace", "--picture", str(png), "--", "--n", "40"])
        self.assertEqual(code, 0, out.getvalue())
        self.assertIn(f"the picture: {png}", out.getvalue())
        self.assertIn("40 accesses <b>", out.getvalue())
        self.assertTrue(png.read_bytes().startswith(b"\x89PNG"))

    def test_no_route_parameter_climbs_out(self):
        job = self.submit(self.alice, {"kind": "run", "program": "VA-GPU-NN", "args": [], "trace": "1"})
        b = Client(self.srv.port)
        b.login(self.alice)
        secret = (self.srv.state / "server.db").read_bytes()[:16]
        for path in (f"/jobs/{job}/../../server.db", f"/jobs/{job}/..%2f..%2fserver.db", "/jobs/%2e%2e/server.db",
                     f"/jobs/{job}/trace.png/..", f"/jobs/{job}/a1/trace.png", "/static/../server.db",
                     "/static/..%2f..%2fserver.db", "//etc/passwd", f"/jobs/{job}%00/trace.png",
                     f"/jobs/-{job}", f"/jobs/{job}.0", "/jobs/" + "9" * 13, f"/api/jobs/{job}/../../../server.db"):
            s, _, page = b.get(path)
            self.assertEqual(s, 404, path)
            self.assertNotIn(secret.decode("latin-1"), page)


# A server with small bounds, so that a test reaches them: 4 connections, 3 from one address, a
# request cut after 1.5 s; and Secure cookies.
EDGE = ["--max-connections", "4", "--connections-per-address", "3", "--request-s", "1.5", "--secure-cookies"]


class EdgeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="server-edge-"))
        os.environ["SERVER_LOG"] = "1"
        try:
            cls.srv = Server(cls.tmp / "state", extra=EDGE).start()
        finally:
            del os.environ["SERVER_LOG"]
        cls.alice = cls.srv.student("alice")

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_host_that_is_not_the_servers_is_refused(self):
        port = self.srv.port
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "[::2]:80", "", "a" * 300):
            line = raw(port, f"GET /login HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            self.assertTrue(line.startswith(b"HTTP/1.1 400"), (host, line))
        self.assertTrue(raw(port, b"GET /login HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 400"))  # no Host at all
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST"):
            self.assertTrue(raw(port, f"GET /login HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()).startswith(b"HTTP/1.1 200"))
        from server import serve
        self.assertIn("course.example.org", serve.allowed_hosts("0.0.0.0", ["Course.Example.org"]))
        self.assertNotIn("localhost", serve.allowed_hosts("0.0.0.0"))

    def test_oversized_request_lines_headers_and_bodies_are_refused(self):
        port, host = self.srv.port, f"Host: 127.0.0.1:{self.srv.port}\r\n".encode()
        cases = [
            (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n" + host + b"\r\n", b"414"),
            (b"GET / HTTP/1.1\r\n" + host + b"X: " + b"a" * 70000 + b"\r\n\r\n", b"431"),
            (b"GET / HTTP/1.1\r\n" + host + b"".join(b"X%d: 1\r\n" % i for i in range(101)) + b"\r\n", b"431"),
            (b"GET / HTTP/1.1\r\n" + host + b"".join(b"X%d: %s\r\n" % (i, b"a" * 4000) for i in range(10)) + b"\r\n", b"431"),
            (b"POST /api/jobs HTTP/1.1\r\n" + host + f"Authorization: Bearer {self.alice}\r\n".encode()
             + b"Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{", b"413"),
            (b"POST /api/jobs HTTP/1.1\r\n" + host + f"Authorization: Bearer {self.alice}\r\n".encode()
             + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", b"411"),
            # a body length two ways, or twice (request smuggling behind a proxy)
            (b"POST /api/jobs HTTP/1.1\r\n" + host + b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", b"411"),
            (b"POST /api/jobs HTTP/1.1\r\n" + host + b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}", b"411"),
            (b"GET /login HTTP/1.1\r\n" + host + host + b"\r\n", b"400"),  # two Hosts
        ]
        for data, code in cases:
            line = raw(port, data)
            self.assertEqual(line.split(b" ")[1:2], [code], data[:60])

    def test_slow_clients_hold_a_bounded_number_of_connections_for_a_bounded_time(self):
        port = self.srv.port
        # 3 from one address (its bound: --connections-per-address 3), then 1 from another (4 in
        # all: --max-connections 4); loopback's other addresses stand for other machines
        slow = []

        def refused(source):
            with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0)) as s:
                s.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                return s.makefile("rb").readline().startswith(b"HTTP/1.1 503")

        def soon_refused(source):
            # The server counts a connection once its thread has taken it in: on a busy machine
            # (CI's 2 cores at 20:40 on 2026-11-28) 0.2 s was not always enough. Asked again for
            # up to a second, well inside the 1.5 s after which the slow ones are cut; a probe
            # let in is served and closed, so it holds no place.
            deadline = time.monotonic() + 1.0
            while not refused(source):
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.05)
            return True
        try:
            started = time.monotonic()
            for source in ("127.0.0.1",) * 3 + (None, "127.0.0.2"):
                if source is None:  # the address's bound, with one connection left in all
                    self.assertTrue(soon_refused("127.0.0.1"))
                    continue
                s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
                slow.append(s)
                s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")  # headers never ended (slowloris)
            self.assertTrue(soon_refused("127.0.0.3"))  # the bound of all
            for s in slow:  # each is cut when its request has taken --request-s (1.5 s)
                try:
                    s.sendall(b"a")
                    got = s.recv(100)
                except (BrokenPipeError, ConnectionResetError):
                    got = b""
                self.assertEqual(got, b"")
            self.assertLess(time.monotonic() - started, 5)
        finally:
            for s in slow:
                s.close()
        time.sleep(0.1)
        self.assertTrue(raw(port, f"GET /login HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                        .startswith(b"HTTP/1.1 200"))

    def test_the_log_never_holds_a_secret(self):
        port, tok = self.srv.port, self.alice
        b = Client(port)
        s, _, page = b.get("/login")
        csrf = __import__("re").search(r'name="csrf" value="([^"]+)"', page).group(1)
        s, h, _ = b.post("/login", {"token": tok, "csrf": csrf})
        self.assertEqual(s, 303)
        cookie = [v for v in h.get_all("Set-Cookie") if v.startswith("session=")][0]
        self.assertIn("; Secure", cookie)  # --secure-cookies: never sent over plain HTTP
        session = b.cookies["session"]
        csrf = b.csrf()
        for path in (f"/?token={tok}", f"/{tok}", f"/jobs/1?t={tok}", f"/login?{tok}"):
            b.get(path)
        Client(port, tok).api("GET", f"/api/jobs?token={tok}")
        Client(port, tok).api("POST", "/api/jobs", {"kind": "run", "program": tok, "args": []})
        raw(port, f"GET /?{tok} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        raw(port, f"GET / {tok}\r\nHost: 127.0.0.1\r\n\r\n".encode())  # a bad request line
        raw(port, f"GET /{tok} HTTP/1.1\r\nHost: {tok}\r\n\r\n".encode())  # a bad Host
        raw(port, f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: {'a' * 70000}{tok}\r\n\r\n".encode())
        raw(port, f"{tok} / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())  # an unknown method
        b.post("/login", {"token": tok + "x", "csrf": csrf})
        self.srv.stop()
        log = self.srv.log()
        type(self).srv = Server(self.tmp / "state", extra=EDGE).start()
        for secret in (tok, session, csrf, tok[:16]):
            self.assertNotIn(secret, log)
        self.assertIn("GET /login 200", log)  # the access log was on (SERVER_LOG=1)
        self.assertIn("(another path)", log)
        self.assertGreater(len(log.splitlines()), 12)


if __name__ == "__main__":
    unittest.main(verbosity=2)

#!/usr/bin/env python3
"""The server's API and pages, and each security case tried and refused, against a real server
on loopback (serverlib.Server). Standard library unittest (pytest collects it too)."""
import hashlib
import io
import json
import os
import re
import shutil
import sqlite3
import struct
import sys
import tarfile
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serverlib import REPO, Client, Server  # noqa: E402

sys.path.insert(0, str(REPO))
from server import serve, uploads  # noqa: E402


def tar_of(entries, mode="w:gz"):
    """entries: (name, bytes) for a file, (name, TarInfo-type, linkname) otherwise."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for e in entries:
            info = tarfile.TarInfo(e[0])
            if len(e) == 2:
                info.size = len(e[1])
                t.addfile(info, io.BytesIO(e[1]))
            else:
                info.type, info.linkname = e[1], e[2]
                t.addfile(info)
    return buf.getvalue()


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="server-test-"))
        cls.srv = Server(cls.tmp / "state", extra=["--submits-per-minute", "6", "--max-queued", "3"]).start()
        cls.alice, cls.bob = cls.srv.student("alice"), cls.srv.student("bob")
        cls.srv.store.set_lab("ch02", True)
        cls.srv.store.set_lab("ch03", False)

    @classmethod
    def tearDownClass(cls):
        cls.srv.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def browser(self, token):
        b = Client(self.srv.port)
        self.assertEqual(b.login(token), 303)
        return b

    def wait(self, client, job_id):
        for _ in range(400):
            s, j = client.api("GET", f"/api/jobs/{job_id}") if client.token else \
                (lambda r: (r[0], json.loads(r[2])))(client.get(f"/api/jobs/{job_id}"))
            if j["state"] in ("done", "failed"):
                return j
            time.sleep(0.02)
        self.fail(f"job {job_id} did not finish")

    # ---- the API and the pages -----------------------------------------------------------
    def test_browser_runs_a_program_and_reads_the_escaped_output(self):
        b = self.browser(self.alice)
        s, h, _ = b.get("/")
        self.assertEqual(s, 200)
        self.assertIn("default-src 'self'", h["Content-Security-Policy"])
        self.assertEqual(h["X-Content-Type-Options"], "nosniff")
        s, h, page = b.post("/jobs", {"kind": "run", "program": "VA-GPU-NN", "args": "--n 2^10 --blocks 3",
                                      "csrf": b.csrf()})
        self.assertEqual(s, 303, page)
        job_id = int(h["Location"].rsplit("/", 1)[1])
        self.assertEqual(self.wait(b, job_id)["exit"], 0)
        s, _, page = b.get(f"/jobs/{job_id}")
        self.assertIn('id="job-status"', page)
        self.assertIn(f"ran job {job_id}", page)
        out = re.search(r'<pre id="job-output">(.*?)</pre>', page, re.S).group(1)
        self.assertEqual(out, f"&lt;script&gt;alert({job_id})&lt;/script&gt;")  # escaped, never markup
        self.assertNotIn("<script>alert", page)
        s, _, page = b.get("/")
        self.assertIn(f'href="/jobs/{job_id}"', page)
        for form in ('id="run-form"', 'id="exercise-form"', 'id="grade-form"', 'id="history"'):
            self.assertIn(form, page)

    def test_client_api_submits_a_lab_and_sees_its_history(self):
        c = Client(self.srv.port, self.bob)
        s, r = c.api("POST", "/api/jobs", {"kind": "grade", "lab": "ch02", "upload_b64":
                                           __import__("base64").b64encode(tar_of([("lab/VA-GPU-NN.cu", b"x")])).decode()})
        self.assertEqual(s, 201, r)
        j = self.wait(c, r["id"])
        self.assertEqual(j["summary"], f"ran job {r['id']}")
        spec = json.loads((self.srv.state / "jobs" / str(r["id"]) / "spec.json").read_text())
        self.assertEqual(spec["submission"], "sub/lab")  # the one top folder of the archive
        s, h = c.api("GET", "/api/jobs")
        self.assertIn(r["id"], [x["id"] for x in h["jobs"]])
        self.assertTrue(all(x["id"] != 1 or x["kind"] for x in h["jobs"]))
        s, p = c.api("GET", "/api/programs")
        self.assertIn("--blocks", p["programs"]["VA-GPU-NN"])

    def test_queue_position_is_shown_while_held(self):
        self.srv.store.set_setting("hold", "1")
        try:
            c = Client(self.srv.port, self.srv.student("carol"))
            ids = [c.api("POST", "/api/jobs", {"kind": "run", "program": "Dot-SM", "args": []})[1]["id"] for _ in range(2)]
            self.assertEqual([c.api("GET", f"/api/jobs/{i}")[1]["position"] for i in ids][1] >= 2, True)
            self.assertEqual(c.api("GET", f"/api/jobs/{ids[0]}")[1]["state"], "queued")
            s, r = c.api("POST", "/api/jobs", {"kind": "run", "program": "Dot-SM", "args": []})
            s2, r2 = c.api("POST", "/api/jobs", {"kind": "run", "program": "Dot-SM", "args": []})
            self.assertEqual(s2, 429, r2)  # at most 3 queued (--max-queued 3)
            self.assertIn("at most 3", r2["error"])
        finally:
            self.srv.store.set_setting("hold", "0")

    # ---- security: each case tried and refused ---------------------------------------------
    def test_session_cookie_is_httponly_samesite_and_tokens_are_kept_hashed(self):
        b = Client(self.srv.port)
        s, _, page = b.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        s, h, _ = b.post("/login", {"token": self.alice, "csrf": csrf})
        cookie = [v for v in h.get_all("Set-Cookie") if v.startswith("session=")][0]
        self.assertIn("HttpOnly", cookie)
        self.assertIn("SameSite=Strict", cookie)
        db = sqlite3.connect(self.srv.state / "server.db")
        dump = "\n".join(db.iterdump())
        self.assertNotIn(self.alice, dump)
        self.assertIn(hashlib.sha256(self.alice.encode()).hexdigest(), dump)
        self.assertNotIn(b.cookies["session"], dump)  # sessions too: hashed
        s, _, page = Client(self.srv.port).post("/login", {"token": "wrong", "csrf": csrf})
        self.assertEqual(s, 403)  # no login_csrf cookie: refused before the token is looked at

    def test_a_wrong_token_is_refused(self):
        b = Client(self.srv.port)
        s, _, page = b.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        s, _, page = b.post("/login", {"token": self.alice[:-1] + "x", "csrf": csrf})
        self.assertEqual(s, 403)
        self.assertIn("unknown or revoked token", page)
        self.assertEqual(Client(self.srv.port, "not-a-token").api("GET", "/api/jobs")[0], 401)

    def test_every_form_needs_its_csrf_token(self):
        b = self.browser(self.alice)
        for fields in ({"kind": "run", "program": "VA-GPU-NN", "args": ""},
                       {"kind": "run", "program": "VA-GPU-NN", "args": "", "csrf": "forged"},
                       {"kind": "run", "program": "VA-GPU-NN", "args": "", "csrf": ""}):
            s, _, page = b.post("/jobs", fields)
            self.assertEqual(s, 403, fields)
            self.assertIn("CSRF", page)
        s, _, _ = b.post("/logout", {})
        self.assertEqual(s, 403)
        other = self.browser(self.bob)  # one student's token is not another's
        s, _, _ = b.post("/jobs", {"kind": "run", "program": "VA-GPU-NN", "args": "", "csrf": other.csrf()})
        self.assertEqual(s, 403)
        s, _, _ = b.request("POST", "/api/jobs", b'{"kind": "run"}', {"Content-Type": "application/json"})
        self.assertEqual(s, 403)  # the API never takes a cookie: a forged cross-site JSON post gets nothing

    def test_another_students_job_is_404_as_one_that_does_not_exist(self):
        a = Client(self.srv.port, self.alice)
        s, r = a.api("POST", "/api/jobs", {"kind": "run", "program": "VA-GPU-NN", "args": ["--n", "7"]})
        self.assertEqual(s, 201)
        b = Client(self.srv.port, self.bob)
        s1, r1 = b.api("GET", f"/api/jobs/{r['id']}")
        s2, r2 = b.api("GET", "/api/jobs/999999")
        self.assertEqual((s1, r1), (404, r2))
        page_b = self.browser(self.bob)
        s1, _, p1 = page_b.get(f"/jobs/{r['id']}")
        s2, _, p2 = page_b.get("/jobs/999999")
        self.assertEqual((s1, p1), (404, p2))
        self.assertNotIn(r["id"], [j["id"] for j in b.api("GET", "/api/jobs")[1]["jobs"]])

    def test_a_revoked_token_and_its_sessions_stop(self):
        token = self.srv.student("dave")
        b = self.browser(token)
        self.assertEqual(b.get("/")[0], 200)
        self.srv.store.revoke("dave")
        self.assertEqual(b.get("/")[0], 303)  # back to the log-in page
        self.assertEqual(Client(self.srv.port, token).api("GET", "/api/jobs")[0], 401)

    def test_arguments_are_the_programs_documented_flags_and_bounded(self):
        c = Client(self.srv.port, self.srv.student("erin"))
        for body, want in (({"program": "VA-GPU-NN", "args": ["--output", "/etc/passwd"]}, "no flag --output"),
                           ({"program": "VA-GPU-NN", "args": ["--n", "1;rm -rf /"]}, "letters, digits"),
                           ({"program": "VA-GPU-NN", "args": ["--n", "1"] * 9}, "at most 16"),
                           ({"program": "../../bin/sh", "args": []}, "no program"),
                           ({"program": "VA-GPU-NN", "args": [], "edit": "x" * (65 << 10)}, "larger than"),
                           ({"exercise": "../../etc/passwd"}, "no exercise"),
                           ({"program": ["VA-GPU-NN"], "args": []}, "a string"),
                           ({"program": "VA-GPU-NN", "args": [["--n"]]}, "a list of strings")):
            body["kind"] = "exercise" if "exercise" in body else "run"
            s, r = c.api("POST", "/api/jobs", body)
            self.assertIn(s, (400, 413), body)
            self.assertIn(want, r["error"])
        s, _, page = c.request("POST", "/api/jobs", b"{not json", {"Content-Type": "application/json"})
        self.assertEqual(s, 400)
        s, _, page = c.request("POST", "/api/jobs", b"x", {"Content-Type": "text/plain"})
        self.assertEqual(s, 415)

    def test_closed_or_unknown_labs_take_no_submission(self):
        c = Client(self.srv.port, self.srv.student("fay"))
        up = __import__("base64").b64encode(tar_of([("VA-GPU-NN.cu", b"x")])).decode()
        s, r = c.api("POST", "/api/jobs", {"kind": "grade", "lab": "ch03", "upload_b64": up})
        self.assertEqual(s, 403)
        self.assertIn("not open", r["error"])
        self.srv.store.set_lab("ch04", True, time.time() - 60)
        s, r = c.api("POST", "/api/jobs", {"kind": "grade", "lab": "ch04", "upload_b64": up})
        self.assertEqual((s, "deadline" in r["error"]), (403, True))
        s, r = c.api("POST", "/api/jobs", {"kind": "grade", "lab": "ch99", "upload_b64": up})
        self.assertEqual(s, 400)

    def test_uploads_refused_with_a_clear_message(self):
        b = self.browser(self.srv.student("gus"))
        big = tar_of([("big.cu", b"\0" * (2 << 20))])  # 2 MiB of zeros: 2 KiB packed
        zbuf = io.BytesIO()
        with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("VA-GPU-NN.cu", b"\0" * (3 << 20))
        bomb = bytearray(zbuf.getvalue())  # a zip that declares 1000 bytes and holds 3 MiB
        for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
            i = bomb.index(sig)
            bomb[i + off:i + off + 4] = struct.pack("<I", 1000)
        zlink = io.BytesIO()
        with zipfile.ZipFile(zlink, "w") as z:
            info = zipfile.ZipInfo("VA-GPU-NN.cu")
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
        cases = {
            "symbolic link": (tar_of([("VA-GPU-NN.cu", tarfile.SYMTYPE, "/etc/passwd")]), "is a link"),
            "hard link": (tar_of([("VA-GPU-NN.cu", tarfile.LNKTYPE, "/etc/passwd")]), "is a link"),
            "zip symlink": (zlink.getvalue(), "symbolic link"),
            "absolute": (tar_of([("/etc/cron.d/x", b"x")]), "absolute path"),
            "climbing": (tar_of([("lab/../../x.cu", b"x")]), "climbs out"),
            "fifo": (tar_of([("VA-GPU-NN.cu", tarfile.FIFOTYPE, "")]), "not a regular file"),
            "too many files": (tar_of([(f"f{i}.cu", b"x") for i in range(65)]), "more than 64 files"),
            "too large a file": (big, "bytes (at most"),
            "zip bomb": (bytes(bomb), "upload refused"),
            "not an archive": (b"hello" * 100, "not a tar or zip"),
        }
        for i, (name, (data, want)) in enumerate(cases.items()):
            if i % 5 == 4:  # a refused upload counts in the student's rate too (6 a minute here)
                b = self.browser(self.srv.student(f"gus{i}"))
            s, _, page = b.post("/jobs", {"kind": "grade", "lab": "ch02", "csrf": b.csrf()},
                                {"upload": ("lab.tar.gz", data)})
            self.assertEqual(s, 400, name)
            self.assertIn(want, page.replace("&#x27;", "'"), name)
        self.assertEqual([p.name for p in (self.srv.state / "jobs").iterdir() if p.name.startswith("new-")], [])
        s, _, page = b.post("/jobs", {"kind": "grade", "lab": "ch02", "csrf": b.csrf()},
                            {"upload": ("lab.tar", os.urandom(5 << 20))})
        self.assertEqual(s, 413)

    def test_uploads_unpack_with_the_byte_count_not_the_declared_size(self):
        d = Path(tempfile.mkdtemp())
        try:
            data = tar_of([("a.cu", b"y" * 5000)])
            with self.assertRaises(uploads.Refused):
                uploads.unpack(data, d / "x", max_bytes=4000, max_file=1 << 20)
            self.assertEqual(uploads.unpack(data, d / "y").name, "y")
            self.assertEqual((d / "y" / "a.cu").read_bytes(), b"y" * 5000)
        finally:
            shutil.rmtree(d)

    def test_submissions_are_rate_limited_per_student(self):
        c = Client(self.srv.port, self.srv.student("hal"))
        codes = []
        for _ in range(8):
            s, r = c.api("POST", "/api/jobs", {"kind": "run", "program": "VA-GPU-NN", "args": ["--n", "5"]})
            codes.append(s)
            if s == 201:
                self.wait(c, r["id"])
        self.assertEqual(codes[:6], [201] * 6)
        self.assertEqual(codes[6:], [429, 429])  # --submits-per-minute 6
        self.assertEqual(Client(self.srv.port, self.bob).api("GET", "/api/jobs")[0], 200)  # others go on

    def test_the_server_is_not_the_user_student_code_runs_as(self):
        sys.path.insert(0, str(REPO / "labs"))
        from grader import fence
        from server import backends
        real = os.getuid
        try:
            os.getuid = lambda: fence.UID_BASE + 3
            with self.assertRaises(SystemExit):
                serve.check_uids(None)
        finally:
            os.getuid = real
        local = backends.LocalBackend(gpus=[])
        if os.geteuid() != 0:
            self.skipTest("not root: the fence cannot drop to a uid of its own here")
        self.assertIn("its own uid", serve.check_uids(local))
        real = fence.os.geteuid
        try:  # the same machine as a user that is not root: its fence keeps the server's uid
            fence.os.geteuid = lambda: 1000
            with self.assertRaises(SystemExit) as refused:
                serve.check_uids(local)
            self.assertIn("runs student code as this server's own user", str(refused.exception))
            self.assertIn("SAME UID", serve.check_uids(local, accept_same_uid=True))
        finally:
            fence.os.geteuid = real


class StoreTest(unittest.TestCase):
    """The queue's writes, without a server: a result once per job, for its running attempt only."""

    def test_a_result_is_written_once_and_only_by_the_running_attempt(self):
        tmp = Path(tempfile.mkdtemp(prefix="server-store-"))
        try:
            from server.jobqueue import MAX_ATTEMPTS, Store
            st = Store(tmp / "state")
            a = st.reserve("ann", "run", {}, 5)
            st.release(a)
            job = st.claim("gpu0")
            self.assertEqual((job["id"], job["attempt"]), (a, 1))
            self.assertIsNone(st.claim("gpu1"))  # one running job per student
            self.assertTrue(st.requeue(a, 1, "lost"))
            job = st.claim("gpu1")
            self.assertEqual(job["attempt"], 2)
            self.assertFalse(st.finish(a, 1, 0, "the stale attempt's result"))  # not its running attempt
            self.assertTrue(st.finish(a, 2, 0, "attempt 2"))
            self.assertFalse(st.finish(a, 2, 0, "written twice"))
            self.assertEqual([tuple(r) for r in st.q("SELECT job_id, attempt, summary FROM results")],
                             [(a, 2, "attempt 2")])
            b = st.reserve("ann", "run", {}, 5)
            st.release(b)
            for n in range(1, MAX_ATTEMPTS + 1):
                self.assertEqual(st.claim("gpu0")["attempt"], n)
                st.requeue(b, n, "killed")
            self.assertEqual(st.job(b)["state"], "failed")  # lost MAX_ATTEMPTS times: not run forever
            self.assertIn("lost 3 times", st.job(b)["summary"])
            with self.assertRaises(ValueError):
                for _ in range(6):
                    st.release(st.reserve("bo", "run", {}, 5))
        finally:
            shutil.rmtree(tmp)

    def test_no_token_reads_as_an_option_on_a_command_line(self):
        """A token is typed after --token: one that starts with '-' is read as an option (CI's
        browser test failed on one: "argument --token: expected one argument"). One in 64
        random tokens would; 400 tokens all pass only where none does (old code: 0.2%)."""
        tmp = Path(tempfile.mkdtemp(prefix="server-store-"))
        try:
            from server.jobqueue import Store
            st = Store(tmp / "state")
            tokens = [st.add_student(f"s{i}", "S") for i in range(400)]
            self.assertEqual([t for t in tokens if t.startswith("-")], [])
            self.assertEqual(len(set(tokens)), 400)
        finally:
            shutil.rmtree(tmp)


class NoGpuTest(unittest.TestCase):
    def test_without_a_gpu_every_job_ends_77_cannot_run_here(self):
        tmp = Path(tempfile.mkdtemp(prefix="server-test-"))
        srv = Server(tmp / "state", fake=False)
        srv.argv += ["--job-command", "/bin/false"]  # never started: the backend says why first
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        try:
            srv.start()
            self.assertIn("every job ends with exit 77", srv.banner)
            b = Client(srv.port)
            b.login(srv.student("ida"))
            s, h, _ = b.post("/jobs", {"kind": "exercise", "exercise": "ch02_vector_add.2", "csrf": b.csrf()})
            job_id = int(h["Location"].rsplit("/", 1)[1])
            self.assertTrue(srv.wait_done([job_id], 20))
            s, _, page = b.get(f"/jobs/{job_id}")
            self.assertIn("cannot run here: no GPU", page)
            self.assertIn('<span id="job-exit">exit 77', page)
            # a run that asks for the traced picture, with an edit: the same answer, no picture
            s, h, page = b.post("/jobs", {"kind": "run", "program": "VA-GPU-NN", "args": "", "trace": "1", "csrf": b.csrf(),
                                          "edit": (REPO / "ch02_vector_add" / "VA-GPU-NN.cu").read_text()})
            self.assertEqual(s, 303, page)
            job_id = int(h["Location"].rsplit("/", 1)[1])
            self.assertTrue(srv.wait_done([job_id], 20))
            s, _, page = b.get(f"/jobs/{job_id}")
            self.assertIn("VA-GPU-NN (edited) (traced)", page)
            self.assertIn('<span id="job-exit">exit 77 (cannot run here', page)
            self.assertNotIn('id="job-picture"', page)
        finally:
            del os.environ["CUDA_VISIBLE_DEVICES"]
            srv.stop()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)

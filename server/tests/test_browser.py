#!/usr/bin/env python3
"""A real browser on the server's pages: Debian's headless Chromium, driven through the Chrome
DevTools Protocol by server/tools/screenshot.py's Browser (standard library, over a pipe).

A real server (serve.py, its real runner and backend, not the fake job of serverlib) on a free
loopback port with a fresh state and one student; the browser
  - opens /login, types the student's token into the form and clicks its button;
  - on the student's page, picks VA-GPU-NN, types its arguments and an edit of its LAB region
    (the whole file, as a student pastes it) and clicks Run;
  - waits on the job page (the page's own progress script reloads it when the job ends) and
    reads the status, the exit and the summary: without a GPU, "cannot run here: no GPU",
    exit 77, shown as such; with one, the job done, exit 0;
  - takes a screenshot into the test's temporary folder, and checks it is a real PNG of the
    window's size whose pixels are not all one colour;
  - and server/tools/screenshot.py, the command, logs in with --token and screenshots the job
    page again. A wrong token is refused: the browser stays on /login.

Run: python3 server/tests/test_browser.py (ctest -L server). Without Chromium it skips (exit 77)
and says how to install it: apt-get install --no-install-recommends chromium (scripts/setup.sh
test does it; under CI=true it is required).
"""
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "server" / "tools"))
from screenshot import Browser, BrowserError, find_browser  # noqa: E402

PROGRAM = "VA-GPU-NN"
SOURCE = REPO / "ch02_vector_add" / "VA-GPU-NN.cu"
WIDTH, HEIGHT = 1100, 800


def png_facts(path):
    """(width, height, distinct pixel bytes) of a PNG, checking its signature, chunk CRCs and
    that its image data inflates: a file that is not a whole PNG raises AssertionError."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc, = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind!r}"
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
        if kind == b"IEND":
            break
    assert width is not None and kind == b"IEND", "no IHDR or no IEND"
    pixels = zlib.decompress(idat)
    channels = {2: 3, 6: 4, 0: 1, 4: 2}[colour]
    row = width * channels * depth // 8 + 1
    assert len(pixels) == row * height, "the image data does not fill the image"
    distinct = set()
    for y in range(0, height, 7):  # a sample of rows, filter byte left out
        distinct.update(pixels[y * row + 1:(y + 1) * row])
    return width, height, len(distinct)


class BrowserOnTheServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if find_browser() is None:
            raise unittest.SkipTest("Chromium is not installed: "
                                    "apt-get install --no-install-recommends chromium")
        from serverlib import Server
        from server.backends import visible_gpus
        cls.has_gpu = bool(visible_gpus())
        cls.tmp = Path(tempfile.mkdtemp(prefix="test_browser."))
        cls.server = Server(cls.tmp / "state", fake=False).start()  # the real runner
        cls.base = f"http://127.0.0.1:{cls.server.port}"
        cls.token = cls.server.student("ada")
        cls.browser = Browser(WIDTH, HEIGHT)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        left = cls.browser.processes()
        cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if left:
            raise AssertionError(f"Chromium's processes {left} outlived Browser.close()")

    def state_of(self, b):
        """The job page's status, read again until the page answers (it reloads itself)."""
        try:
            return b.js("(() => { const s = document.getElementById('job-status');"
                        " return s ? s.getAttribute('data-state') : null; })()")
        except BrowserError:
            return None  # between two pages

    def test_0_login_form_stays_valid(self):
        # A browser fetches more than the page: /favicon.ico among others. Whatever it fetches,
        # the log-in form's CSRF field must still match its cookie when the student submits it.
        b = self.browser
        b.open(f"{self.base}/login")
        time.sleep(1.0)  # what the page and the browser fetch after its load event
        form = b.js("document.querySelector('#login [name=csrf]').value")
        jar = {c["name"]: c["value"] for c in
               b.call("Network.getCookies", urls=[self.base + "/"])["cookies"]}
        self.assertEqual(jar.get("login_csrf"), form,
                         "the log-in form's csrf no longer matches its cookie a second after the page "
                         "loaded: a request the browser makes by itself (GET /favicon.ico, answered "
                         "with a redirect to /login) set a new login_csrf, so no student can log in")

    def test_1_wrong_token_is_refused(self):
        with self.assertRaisesRegex(BrowserError, "did not accept the token"):
            self.browser.login(self.base, "not-" + self.token)

    def test_2_login_submit_wait_read(self):
        b = self.browser
        b.login(self.base, self.token)
        self.assertEqual(b.js("location.pathname"), "/")
        self.assertTrue(b.js("!!document.getElementById('run-form')"))
        # The student's choices, made as a student makes them: the list, the keyboard, the button.
        self.assertTrue(b.js(f"(() => {{ const s = document.querySelector('#run-form [name=program]');"
                             f" s.value = {json.dumps(PROGRAM)}; return s.value === {json.dumps(PROGRAM)}; }})()"),
                        f"{PROGRAM} is not in the form's list of programs")
        b.type_into('#run-form [name="args"]', "--n 1000")
        edit = SOURCE.read_text().replace("i += stride;", "i += stride;  // my edit: one grid per pass", 1)
        self.assertNotEqual(edit, SOURCE.read_text())
        b.type_into('#run-form [name="edit"]', edit)
        self.assertEqual(b.js("document.querySelector('#run-form [name=edit]').value"), edit)
        b.click('#run-form [type="submit"]')
        path = b.js("location.pathname")
        self.assertRegex(path, r"^/jobs/\d+$", "Run did not lead to the job's page: "
                         + str(b.js("document.body.innerText"))[:600])
        job_id = int(path.rsplit("/", 1)[1])

        deadline, state = time.monotonic() + 60, None
        while time.monotonic() < deadline:
            state = self.state_of(b)
            if state in ("done", "failed"):
                break
            time.sleep(0.2)
        self.assertIn(state, ("done", "failed"), "the job page never showed the end of the job")
        exit_text = b.js("document.getElementById('job-exit').textContent")
        summary = b.js("document.getElementById('job-summary').textContent")
        if self.has_gpu:
            self.assertEqual(exit_text, "exit 0", summary)
        else:
            self.assertEqual(state, "done")
            self.assertEqual(exit_text, "exit 77 (cannot run here: not a failure of your code)")
            self.assertIn("cannot run here: no GPU", summary)
        # What the page shows is what the server stored for this student's job, and it was her edit.
        row = self.server.store.q("SELECT student, exit, spec FROM jobs WHERE id = ?", job_id)[0]
        self.assertEqual(row["student"], "ada")
        self.assertEqual(f"exit {row['exit']}", exit_text.split(" (")[0])
        self.assertTrue(json.loads(row["spec"]).get("edit"), "the job was sent without the edit")

        shot = self.tmp / "job.png"
        size = b.screenshot(shot)
        width, height, distinct = png_facts(shot)
        print(f"test_browser: job {job_id}: {state}, {exit_text!r}, {summary!r}; "
              f"screenshot {width}x{height}, {size} bytes, {distinct} distinct byte values",
              file=sys.stderr)
        self.assertEqual((width, height), (WIDTH, HEIGHT))
        self.assertTrue(10_000 < size < 5_000_000, f"{size} bytes")
        self.assertGreater(distinct, 20, "a blank page (one colour)")

        # The command the instructor uses for the results page, with the student's token.
        out = self.tmp / "tool.png"
        tool = subprocess.run([sys.executable, str(REPO / "server" / "tools" / "screenshot.py"),
                               f"{self.base}/jobs/{job_id}", str(out), "--token", self.token,
                               "--full-page"], capture_output=True, text=True, timeout=90)
        self.assertEqual(tool.returncode, 0, tool.stdout + tool.stderr)
        width, _, distinct = png_facts(out)
        self.assertEqual(width, 1280)
        self.assertGreater(distinct, 20)



if __name__ == "__main__":
    if find_browser() is None:
        print("test_browser: skipped: Chromium is not installed; install with: "
              "apt-get install --no-install-recommends chromium (or scripts/setup.sh test as root)")
        sys.exit(77)
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)

#!/usr/bin/env python3
"""A screenshot of one of the course server's pages, taken by Debian's headless Chromium.

    python3 server/tools/screenshot.py URL OUT.png [--token TOKEN] [--width 1280] [--height 900]
                                                   [--full-page]

URL is a page of a server on this machine (http://127.0.0.1:PORT/jobs/7). With --token the
browser first logs in through the server's own form (/login, field "token"), as a student does,
then opens URL; without it, a page that needs a session shows the login page instead (exit 1).
--full-page takes the whole page, not only the window.

A results page from a state folder made on another machine (a GPU machine's proof run): serve a
copy of it here and give its student a new token, which only the copy learns (tokens are kept
hashed, so the old one cannot be shown again):
    cp -r OUT/state /tmp/shot-state
    T=$(python3 server/admin.py --state /tmp/shot-state student add solution | cut -d, -f3)
    python3 server/serve.py --state /tmp/shot-state --port 8046 &
    python3 server/tools/screenshot.py http://127.0.0.1:8046/jobs/1 results.png --token "$T" --full-page

Browser is also the small Chrome DevTools Protocol client that server/tests/test_browser.py
drives the pages with: Chromium started with --remote-debugging-pipe (JSON messages ending in a
NUL byte on its fds 3 and 4), so the standard library is enough and no port is opened. It goes
nowhere but loopback: every host name but localhost resolves to nothing, and its background
traffic (updates, sync, metrics) is off. As root (CI), Chromium's own sandbox cannot run and is
turned off; it only ever opens this server's pages.

Install: apt-get install --no-install-recommends chromium (scripts/setup.sh test does it).
Exit status: 0 written, 1 the page or the browser failed (said why), 2 bad usage.
"""
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

BROWSERS = ("chromium", "chromium-browser", "chromium-headless-shell")


class BrowserError(RuntimeError):
    pass


def find_browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium and one page (tab) in it. Methods wait for what they start."""

    def __init__(self, width=1280, height=900, timeout=30):
        path = find_browser()
        if path is None:
            raise BrowserError("no chromium on PATH: apt-get install --no-install-recommends chromium")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="chromium-profile.")
        # Two pipes: Chromium reads our commands on its fd 3 and writes its answers on its fd 4.
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        args = [path, "--headless", "--remote-debugging-pipe", "--no-first-run",
                "--no-default-browser-check", f"--user-data-dir={self.profile}",
                "--disable-gpu", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                "--disable-domain-reliability", "--no-pings", "--metrics-recording-only",
                "--disable-features=MediaRouter,OptimizationHints,Translate",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
                f"--window-size={width},{height}", "--hide-scrollbars", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox

        def fds():  # in the child, before exec: the pipes at 3 and 4, and no other fd
            r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4 first
            w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)
            os.closerange(5, 1 << 16)

        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        # Chromium also writes under $HOME (~/.config/chromium/Crash Reports, ~/.cache/dconf):
        # give it the profile folder as its home, so nothing is left outside it.
        home = dict(os.environ, HOME=self.profile, XDG_CONFIG_HOME=os.path.join(self.profile, "config"),
                    XDG_CACHE_HOME=os.path.join(self.profile, "cache"))
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, env=home,
                                     stderr=subprocess.STDOUT, preexec_fn=fds, close_fds=False, start_new_session=True)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target,
                                     flatten=True)["sessionId"]
            self.call("Page.enable")
            self.call("Runtime.enable")
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                      deviceScaleFactor=1, mobile=False)
        except Exception:
            self.close()
            raise

    # ---- the protocol -----------------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer within {self.timeout} s")
            ready, _, _ = select.select([self.from_chrome], [], [], left)
            if ready:
                chunk = os.read(self.from_chrome, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium exited (code {self.proc.poll()}): "
                                       f"{self.log_tail()}")
                self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method, **params):
        """Send one command (to the page when attached) and return its result."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_chrome, data):]
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message')}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def wait_event(self, method, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, ev in enumerate(self.events):
                if ev["method"] == method:
                    return self.events.pop(i)
            answer = self._read_message(deadline)
            if "method" in answer:
                self.events.append(answer)

    # ---- what a user does ---------------------------------------------------------------------
    def js(self, expression):
        """The value of a JavaScript expression in the page (JSON values only)."""
        out = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                        awaitPromise=True)
        if "exceptionDetails" in out:
            raise BrowserError(f"{expression!r}: {out['exceptionDetails'].get('text')} "
                               f"{out['exceptionDetails'].get('exception', {}).get('description', '')}")
        return out["result"].get("value")

    def open(self, url):
        """Open URL and wait until the page has loaded."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        nav = self.call("Page.navigate", url=url)
        if nav.get("errorText"):
            raise BrowserError(f"{url}: {nav['errorText']}")
        self.wait_event("Page.loadEventFired")

    def type_into(self, selector, text):
        """Focus the field and type TEXT into it, as the keyboard would."""
        if not self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                       " if (!e) return false; e.focus(); return true; })()"):
            raise BrowserError(f"no field {selector} on {self.js('location.href')}")
        self.call("Input.insertText", text=text)

    def click(self, selector):
        """A mouse click in the middle of the element, and wait for the page it loads."""
        box = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                      " if (!e) return null; e.scrollIntoView({block: 'center'});"
                      " const r = e.getBoundingClientRect();"
                      " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if box is None:
            raise BrowserError(f"nothing to click at {selector} on {self.js('location.href')}")
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left",
                      clickCount=1)
        self.wait_event("Page.loadEventFired")

    def login(self, base, token):
        """Log in through the server's form: /login, field "token", the form's own button."""
        self.open(urllib.parse.urljoin(base, "/login"))
        self.type_into('#login [name="token"]', token)
        self.click('#login [type="submit"]')
        if urllib.parse.urlparse(self.js("location.href")).path == "/login":
            said = self.js("(document.querySelector('.error') || {}).textContent || ''")
            raise BrowserError(f"the server did not accept the token (still on /login: {said!r})")

    def screenshot(self, out_path, full_page=False):
        params = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                                "scale": 1})
        data = base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])
        with open(out_path, "wb") as f:
            f.write(data)
        return len(data)

    def log_tail(self):
        try:
            self.log.flush()
            with open(self.log.name, "rb") as f:
                return f.read()[-800:].decode(errors="replace")
        except OSError:
            return ""

    def processes(self):
        """The pids of Chromium's processes: its session, which start_new_session gave it."""
        pids = []
        for stat in os.listdir("/proc"):
            if stat.isdigit():
                try:
                    with open(f"/proc/{stat}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[3]) == self.proc.pid:  # the session id
                    pids.append(int(stat))
        return pids

    def close(self):
        """Stop Chromium and wait until every process of it has gone (its renderers, its zygote)."""
        if self.proc.poll() is None:
            try:
                self.call("Browser.close")
            except (BrowserError, OSError):
                pass
        deadline = time.monotonic() + 10
        signal = 15
        while True:
            self.proc.poll()
            left = self.processes()
            if not left and self.proc.returncode is not None:
                break
            if time.monotonic() > deadline - 5:
                for pid in left:
                    try:
                        os.kill(pid, signal)
                    except ProcessLookupError:
                        pass
                if time.monotonic() > deadline:
                    signal = 9
            time.sleep(0.05)
            if time.monotonic() > deadline + 5:
                break
        for fd in (self.to_chrome, self.from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 usage="screenshot.py URL OUT.png [--token T] [--width W] "
                                       "[--height H] [--full-page]")
    ap.add_argument("url")
    ap.add_argument("out")
    ap.add_argument("--token", help="log in with this student token first (the /login form)")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--full-page", action="store_true")
    a = ap.parse_args()
    url = urllib.parse.urlparse(a.url)
    if url.scheme not in ("http", "https") or not url.hostname:
        ap.error(f"{a.url}: not an http(s) URL")
    if url.hostname not in ("127.0.0.1", "localhost", "::1"):
        ap.error(f"{a.url}: only a server on this machine (127.0.0.1, localhost)")
    try:
        with Browser(a.width, a.height) as b:
            if a.token:
                b.login(a.url, a.token)
            b.open(a.url)
            status = b.js("performance.getEntriesByType('navigation')[0].responseStatus")
            if status and status >= 400:
                raise BrowserError(f"{a.url} answered HTTP {status}")
            here = urllib.parse.urlparse(b.js("location.href")).path
            if here == "/login" and url.path != "/login":
                raise BrowserError(f"{a.url} needs a session: pass --token")
            size = b.screenshot(a.out, a.full_page)
    except (BrowserError, OSError) as e:
        print(f"screenshot.py: {e}", file=sys.stderr)
        return 1
    print(f"screenshot.py: {a.url} -> {a.out} ({size} bytes, PNG)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

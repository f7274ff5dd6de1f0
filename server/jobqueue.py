"""The server's state in one SQLite file (WAL): students, sessions, labs, the queue, the results.

The queue is fair by construction: a worker takes the queued job of the student served least
recently (round robin; a student never served goes first), never a second job of a student who
has one running, and every take is one IMMEDIATE transaction, so two workers never take the
same job. A job's life: queued -> running (attempt n) -> done, or back to queued when its run
was lost (killed, or the server stopped), at most MAX_ATTEMPTS times. Its result is written in
the same transaction that moves it from running to done, and only if it is still running with
that attempt: a result is written once, for one job and one attempt, never twice or mixed.
"""
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS students(id TEXT PRIMARY KEY, name TEXT, token_hash TEXT UNIQUE,
                                    revoked INTEGER NOT NULL DEFAULT 0, created REAL);
CREATE TABLE IF NOT EXISTS sessions(id_hash TEXT PRIMARY KEY, student TEXT, csrf TEXT, expires REAL);
CREATE TABLE IF NOT EXISTS labs(chapter TEXT PRIMARY KEY, open INTEGER NOT NULL, deadline REAL);
CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS jobs(id INTEGER PRIMARY KEY AUTOINCREMENT, student TEXT NOT NULL,
    kind TEXT NOT NULL, spec TEXT NOT NULL, state TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0,
    slot TEXT, handle TEXT, submitted REAL, started REAL, finished REAL,
    served INTEGER NOT NULL DEFAULT 0, exit INTEGER, summary TEXT);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, student);
CREATE INDEX IF NOT EXISTS jobs_student ON jobs(student, served);
CREATE TABLE IF NOT EXISTS results(job_id INTEGER PRIMARY KEY, attempt INTEGER NOT NULL,
    exit INTEGER, summary TEXT, output TEXT, report TEXT, detail TEXT, written REAL);
"""
MAX_ATTEMPTS = 3
SESSION_S = 12 * 3600


def token_hash(token):
    """sha256 of the token: what the database keeps (the token is 32 random bytes, so no salt
    or slow hash is needed: nothing shorter than the secret itself is guessable)."""
    return hashlib.sha256(token.encode()).hexdigest()


class Store:
    def __init__(self, state):
        self.state = Path(state)
        self.state.mkdir(parents=True, exist_ok=True)
        os.chmod(self.state, 0o700)  # no fenced uid reads the state
        self.path = self.state / "server.db"
        self.local = threading.local()
        self.db().executescript(SCHEMA)

    def db(self):
        db = getattr(self.local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=30000")
            self.local.db = db
        return db

    @contextmanager
    def tx(self):
        db = self.db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def q(self, sql, *args):
        return self.db().execute(sql, args).fetchall()

    # ---- accounts ------------------------------------------------------------------------
    def add_student(self, sid, name):
        """A new token for SID (replacing any old one): returned once, kept only hashed."""
        token = "-"
        while token.startswith("-"):  # one in 64 would: a command line reads it as an option
            token = secrets.token_urlsafe(32)
        with self.tx() as db:
            db.execute("INSERT INTO students(id, name, token_hash, revoked, created) VALUES(?,?,?,0,?) "
                       "ON CONFLICT(id) DO UPDATE SET name=excluded.name, token_hash=excluded.token_hash, "
                       "revoked=0", (sid, name, token_hash(token), time.time()))
        return token

    def revoke(self, sid):
        with self.tx() as db:
            n = db.execute("UPDATE students SET revoked=1 WHERE id=?", (sid,)).rowcount
            db.execute("DELETE FROM sessions WHERE student=?", (sid,))
        return n

    def student_of_token(self, token):
        if not token or len(token) > 200:
            return None
        h = token_hash(token)
        rows = self.q("SELECT id, token_hash FROM students WHERE token_hash=? AND revoked=0", h)
        # The lookup is by the hash (an index); the compare is constant-time all the same.
        return rows[0]["id"] if rows and hmac.compare_digest(rows[0]["token_hash"], h) else None

    def new_session(self, student):
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        with self.tx() as db:
            db.execute("DELETE FROM sessions WHERE expires < ?", (time.time(),))
            db.execute("INSERT INTO sessions VALUES(?,?,?,?)", (token_hash(sid), student, csrf,
                                                                time.time() + SESSION_S))
        return sid, csrf

    def session(self, sid):
        """(student, csrf) of a live session whose student is not revoked, or None."""
        if not sid or len(sid) > 200:
            return None
        rows = self.q("SELECT s.student, s.csrf FROM sessions s JOIN students t ON t.id=s.student "
                      "WHERE s.id_hash=? AND s.expires>? AND t.revoked=0", token_hash(sid), time.time())
        return (rows[0]["student"], rows[0]["csrf"]) if rows else None

    def end_session(self, sid):
        with self.tx() as db:
            db.execute("DELETE FROM sessions WHERE id_hash=?", (token_hash(sid or ""),))

    # ---- labs ----------------------------------------------------------------------------
    def set_lab(self, chapter, is_open, deadline=None):
        with self.tx() as db:
            db.execute("INSERT INTO labs VALUES(?,?,?) ON CONFLICT(chapter) DO UPDATE SET "
                       "open=excluded.open, deadline=excluded.deadline", (chapter, int(is_open), deadline))

    def lab_open(self, chapter, now=None):
        rows = self.q("SELECT open, deadline FROM labs WHERE chapter=?", chapter)
        if not rows or not rows[0]["open"]:
            return False, f"lab {chapter} is not open for submissions"
        if rows[0]["deadline"] is not None and (now or time.time()) > rows[0]["deadline"]:
            return False, f"lab {chapter} closed at its deadline"
        return True, None

    def labs(self):
        return [dict(r) for r in self.q("SELECT * FROM labs ORDER BY chapter")]

    def setting(self, key, default=None):
        rows = self.q("SELECT value FROM settings WHERE key=?", key)
        return rows[0]["value"] if rows else default

    def set_setting(self, key, value):
        with self.tx() as db:
            db.execute("INSERT INTO settings VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                       (key, value))

    # ---- the queue -----------------------------------------------------------------------
    def reserve(self, student, kind, spec, max_queued):
        """A new job's id, in state 'new' (counted in the student's limit, taken by no worker
        until release), or raises ValueError: the student's queue is full."""
        with self.tx() as db:
            n = db.execute("SELECT COUNT(*) FROM jobs WHERE student=? AND state IN ('new','queued','running')",
                           (student,)).fetchone()[0]
            if n >= max_queued:
                raise ValueError(429, f"you have {n} jobs waiting or running (at most {max_queued}): "
                                 "wait for one to finish")
            cur = db.execute("INSERT INTO jobs(student, kind, spec, state, submitted) VALUES(?,?,?,?,?)",
                             (student, kind, json.dumps(spec), "new", time.time()))
            return cur.lastrowid

    def release(self, job_id):
        with self.tx() as db:
            db.execute("UPDATE jobs SET state='queued' WHERE id=? AND state='new'", (job_id,))

    def recover_new(self, complete):
        """Jobs the server stopped between reserve and release: queued if their folder is
        complete (it is renamed into place whole), else forgotten (the student saw no id)."""
        for r in self.q("SELECT id FROM jobs WHERE state='new'"):
            with self.tx() as db:
                if complete(r["id"]):
                    db.execute("UPDATE jobs SET state='queued' WHERE id=?", (r["id"],))
                else:
                    db.execute("DELETE FROM jobs WHERE id=?", (r["id"],))

    def claim(self, slot):
        """The next job for worker SLOT, now running (its attempt counted), or None."""
        if self.setting("hold") == "1":
            return None
        with self.tx() as db:
            row = db.execute(
                "SELECT j.id FROM jobs j WHERE j.state='queued' AND NOT EXISTS "
                "(SELECT 1 FROM jobs r WHERE r.student=j.student AND r.state='running') "
                "ORDER BY (SELECT MAX(s.served) FROM jobs s WHERE s.student=j.student), j.id "
                "LIMIT 1").fetchone()
            if row is None:
                return None
            served = db.execute("SELECT COALESCE(MAX(served), 0) + 1 FROM jobs").fetchone()[0]
            db.execute("UPDATE jobs SET state='running', attempt=attempt+1, slot=?, started=?, "
                       "served=?, handle=NULL WHERE id=? AND state='queued'",
                       (slot, time.time(), served, row["id"]))
            return dict(db.execute("SELECT * FROM jobs WHERE id=?", (row["id"],)).fetchone())

    def set_handle(self, job_id, attempt, handle):
        with self.tx() as db:
            db.execute("UPDATE jobs SET handle=? WHERE id=? AND attempt=? AND state='running'",
                       (json.dumps(handle), job_id, attempt))

    def finish(self, job_id, attempt, exit_code, summary, output="", report="", detail=None,
               state="done"):
        """Writes the result of (job, attempt) once: True if written, False if that attempt is
        no longer the job's running one (a result already written, or the job run again)."""
        with self.tx() as db:
            n = db.execute("UPDATE jobs SET state=?, finished=?, exit=?, summary=? "
                           "WHERE id=? AND attempt=? AND state='running'",
                           (state, time.time(), exit_code, summary, job_id, attempt)).rowcount
            if n != 1:
                return False
            db.execute("INSERT INTO results VALUES(?,?,?,?,?,?,?,?)",
                       (job_id, attempt, exit_code, summary, output, report,
                        json.dumps(detail) if detail is not None else None, time.time()))
            return True

    def requeue(self, job_id, attempt, why):
        """A lost run: the job waits again, or fails after MAX_ATTEMPTS lost runs."""
        if attempt >= MAX_ATTEMPTS:
            return self.finish(job_id, attempt, 1, f"not run: its run was lost {attempt} times ({why})",
                               state="failed")
        with self.tx() as db:
            return db.execute("UPDATE jobs SET state='queued', slot=NULL, handle=NULL WHERE id=? "
                              "AND attempt=? AND state='running'", (job_id, attempt)).rowcount == 1

    def running(self):
        return [dict(r) for r in self.q("SELECT * FROM jobs WHERE state='running'")]

    def job(self, job_id, student=None):
        """The job (a dict with its result), or None; with STUDENT, only that student's."""
        rows = self.q("SELECT j.*, r.output, r.report, r.detail, r.attempt AS result_attempt "
                      "FROM jobs j LEFT JOIN results r ON r.job_id=j.id WHERE j.id=?", job_id)
        if not rows or (student is not None and rows[0]["student"] != student):
            return None
        job = dict(rows[0])
        job["position"] = self.position(job) if job["state"] == "queued" else 0
        return job

    def position(self, job):
        """1 + the queued jobs the round robin serves before this one: a student's k-th queued
        job goes in round k, after the k-th jobs of the students served less recently."""
        rows = self.q("SELECT j.id, j.student, (SELECT MAX(s.served) FROM jobs s WHERE s.student=j.student) "
                      "AS last FROM jobs j WHERE j.state='queued' ORDER BY j.id")
        seen, keys = {}, {}
        for r in rows:
            seen[r["student"]] = seen.get(r["student"], 0) + 1
            keys[r["id"]] = (seen[r["student"]], r["last"] or 0, r["id"])
        mine = keys.get(job["id"])
        return 1 + sum(1 for k in keys.values() if k < mine) if mine else 0

    def history(self, student, limit=50):
        return [dict(r) for r in self.q("SELECT id, kind, spec, state, exit, summary, submitted, finished "
                                        "FROM jobs WHERE student=? ORDER BY id DESC LIMIT ?", student, limit)]

"""Builds of the grading driver (labs/drivers): one program per task, with the reference's
regions (built by the grader, cached by content, checked by hash before every use) or with the
student's (built inside the fence, with a time limit, never cached across runs).

A driver of its own: where a task's driver declares what it calls of the program instead of
including it (builds_alone), the grader compiles the driver once (-c, cached and hash-checked
like a reference: Builder.driver_unit) and each build of the task, the reference's and every
student's, compiles only the program and links the two. Both are compiled with
lab_program_memory.h included first, so that the headers they share read the same in both."""
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .fence import safe_read
from .labs import REPO, LabError, kit_info

sys.path.insert(0, str(REPO / "tests" / "mutants"))
import mutant  # noqa: E402  (standalone_line, arch_flags)

BUILD_LIMITS = {"nproc": 256, "fsize": 512 << 20, "nofile": 1024}
MAX_PROGRAM = 256 << 20  # bytes of a built driver


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def driver_source(task):
    path = REPO / "labs" / "drivers" / f"{Path(task['file']).stem}.cu"
    if not path.exists():
        raise LabError(f"no grading driver {path.relative_to(REPO)} for {task['file']}")
    return path


def builds_alone(task):
    """Whether the task's program is compiled on its own and linked with its driver's object
    (the driver declares what it calls), rather than #included by the driver (ch06's, whose
    driver reads the program's own types and globals)."""
    include = re.compile(r'^\s*#\s*include\s*"' + re.escape(task["file"]) + '"', re.M)
    return not include.search(driver_source(task).read_text())


UNIT = "lab_driver_unit.o"  # the driver's object, as a build of the program finds it


def tree_digest(lab):
    """One hash of everything a driver build reads besides the spliced program."""
    h = hashlib.sha256()
    for root in (REPO / "common", REPO / lab["folder"], REPO / "labs" / "drivers"):
        for p in sorted(root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(REPO)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def included_programs(folder, name):
    """The .cu files of folder that name #includes, itself and transitively."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen or not (Path(folder) / n).is_file():
            continue
        seen.add(n)
        todo += re.findall(r'^\s*#\s*include\s*"([^"/]+\.cu)"', (Path(folder) / n).read_text(), re.M)
    return seen


class Builder:
    def __init__(self, work, arch, nvcc, fence, shared_cache):
        self.work, self.arch, self.nvcc, self.fence = Path(work), arch, nvcc, fence
        # The reference cache is shared between runs only where no fenced process can reach it:
        # a fence with namespaces never shows it, and one that drops the uid cannot write it.
        # Otherwise (a weak fence, the grader's own uid) each run builds its own, in a fresh
        # folder that no later grade uses (a poisoned reference dies with its run).
        self.private = not shared_cache
        self.cache = (self.work / "cache") if shared_cache else Path(
            tempfile.mkdtemp(dir=self.work, prefix="private-cache-"))
        self.cache.mkdir(parents=True, exist_ok=True)
        self.cache.chmod(0o755)
        self.hashes = {}  # key -> sha256 of the binary, as built in this run
        self.lock = threading.Lock()
        self.digests = {}

    def close(self):
        if self.private:
            shutil.rmtree(self.cache, ignore_errors=True)

    def arch_flags(self):
        if re.match(r"^\d", self.arch or ""):
            return mutant.arch_flags(self.arch)
        return [f"-arch={self.arch}"] if self.arch else []

    def words(self, lab, task, out):
        """nvcc's line for one build of the task, from the program's own standalone line: the
        driver with the program included (grade_driver.cu), or, where the task builds alone,
        the driver's object and then the program. The object comes first: where both define
        the same inline function (a header's), the linker keeps the first copy it reads."""
        folder = REPO / lab["folder"]
        line = mutant.standalone_line(folder / task["file"])
        words = [self.nvcc] + line[1:]
        words[words.index("-o") + 1] = str(out)
        extra = []
        if builds_alone(task):
            at = words.index(task["file"])
            words[at:at + 1] = [UNIT, task["file"]]
            extra = ["-include", "lab_program_memory.h"]
        else:
            words = ["grade_driver.cu" if w == task["file"] else w for w in words]
        return words[:1] + ["-lineinfo", "-DCUDA_EXAMPLES_NO_MAIN"] + self.arch_flags() + extra + words[1:]

    def unit_words(self, lab, task, out):
        """nvcc's line for the driver alone (-c): the program's flags, without the program."""
        line = mutant.standalone_line(REPO / lab["folder"] / task["file"])
        flags = line[1:line.index("-o")]
        return ([self.nvcc, "-lineinfo", "-DCUDA_EXAMPLES_NO_MAIN"] + self.arch_flags() +
                ["-include", "lab_program_memory.h"] + flags + ["-c", "-o", str(out), "grade_driver.cu"])

    def tree(self, lab, task, text, where, unit=None):
        """The build's own copy of what it reads: common/, the lab folder's headers and data, the
        task's file (text), and only those other programs of the folder that it #includes (the
        other tasks' solutions are not there to be read). text None: no program at all (the
        driver's own build, which must not need one). unit: the driver's object (driver_unit),
        copied in as UNIT once its bytes are checked against the hash it was built with."""
        tree = Path(where)
        shutil.copytree(REPO / "common", tree / "common", ignore=shutil.ignore_patterns("*.md"))
        needed = included_programs(REPO / lab["folder"], task["file"]) if text is not None else set()
        shutil.copytree(REPO / lab["folder"], tree / lab["folder"],
                        ignore=lambda d, names: [n for n in names if n in ("__pycache__",) or
                                                 n.endswith((".md", ".txt", ".py")) or
                                                 (n.endswith(".cu") and n not in needed)])
        if text is not None:
            (tree / lab["folder"] / task["file"]).write_text(text)
        for name in ("driver.h", "program_memory.h"):
            shutil.copy2(REPO / "labs" / "drivers" / name, tree / lab["folder"] / f"lab_{name}")
        shutil.copy2(driver_source(task), tree / lab["folder"] / "grade_driver.cu")
        if unit is not None:  # the bytes checked are the bytes copied
            data = Path(unit).read_bytes()
            self.verified(unit, data)
            (tree / lab["folder"] / UNIT).write_bytes(data)
        for p in [tree] + list(tree.rglob("*")):
            p.chmod(0o755 if p.is_dir() else 0o644)
        return tree / lab["folder"]

    def digest(self, lab):
        """tree_digest(lab), computed once a run."""
        with self.lock:
            if lab["chapter"] not in self.digests:
                self.digests[lab["chapter"]] = tree_digest(lab)
            return self.digests[lab["chapter"]]

    def key(self, lab, task, text):
        return hashlib.sha256("\0".join([self.digest(lab), task["id"], task["file"], text, self.arch,
                                         self.nvcc]).encode()).hexdigest()[:24]

    def compile(self, words, cwd, timeout, what):
        """nvcc's log of a build the grader runs itself (a reference, a driver, the launcher);
        LabError, with the log's end, where it fails."""
        r = subprocess.run(words, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
        if r.returncode != 0:
            raise LabError(f"{what} does not build:\n{r.stdout[-2000:]}")
        return r.stdout

    def reference(self, lab, task, text, timeout=600):
        """(binary path, log): the driver with the reference's regions, cached and hash-checked.
        In a grading kit (lab.py kit): the kit's prebuilt reference, checked against kit.json."""
        kit = kit_info()
        if kit is not None:
            binary = REPO / "reference" / task["id"] / "driver"
            want = kit["references"].get(task["id"])
            st = os.lstat(binary)
            if not stat.S_ISREG(st.st_mode) or sha256_file(binary) != want:
                raise LabError(f"the kit's reference for {task['id']} is not the one it was made with")
            with self.lock:
                self.hashes[binary.parent.name] = want
            return binary, ""
        unit = self.driver_unit(lab, task, timeout) if builds_alone(task) else None

        def build(tmp):
            cwd = self.tree(lab, task, text, tmp / "tree", unit)
            return tmp / "driver", self.compile(self.words(lab, task, tmp / "driver"), cwd, timeout,
                                                f"the reference driver of {task['id']}")
        return self._cached(self.key(lab, task, text), "driver", task["id"], build)

    def _cached(self, key, name, label, build):
        """(binary, log): a program the grader builds once and keeps in its cache under KEY (a
        hash of all it is made from). Reused only while it is a regular file of the grader's,
        writable by no one else, with the hash its manifest gave it; else BUILD(tmp) makes it
        again (it returns the built file and its log). Graders that share the cache (the five
        lab self-tests, or an instructor's two classes) build one at a time, under KEY's lock:
        built twice in two temporary trees, the two binaries differ (-lineinfo keeps the paths),
        and the first grader's hash no longer matches."""
        with open(self.cache / f"{key}.lock", "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            return self._cached_locked(key, name, label, build)

    def _cached_locked(self, key, name, label, build):
        root = self.cache / key
        binary, manifest = root / name, root / "manifest.json"
        with self.lock:
            known = self.hashes.get(key)
        if manifest.exists() and binary.exists():
            want = known or json.loads(manifest.read_text()).get("sha256")
            st = os.lstat(binary)
            if (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and
                    not st.st_mode & 0o022 and sha256_file(binary) == want):
                with self.lock:
                    self.hashes[key] = want
                return binary, ""
            shutil.rmtree(root, ignore_errors=True)  # changed or foreign: never used, rebuilt
        tmp = Path(tempfile.mkdtemp(dir=self.cache, prefix="build-"))
        try:
            built, log = build(tmp)
            root.mkdir(exist_ok=True)
            shutil.move(str(built), binary)
            binary.chmod(0o755)
            digest = sha256_file(binary)
            manifest.write_text(json.dumps({"sha256": digest, "task": label}) + "\n")
            root.chmod(0o755)
            with self.lock:
                self.hashes[key] = digest
            return binary, log
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def driver_unit(self, lab, task, timeout=600):
        """The task's driver compiled alone (unit_words), once: cached like a reference (by
        everything it is made from, hash-checked before every use), built in a tree that holds
        no program, so that it cannot read one."""
        key = "unit-" + hashlib.sha256("\0".join([self.digest(lab), task["file"], self.arch,
                                                  self.nvcc]).encode()).hexdigest()[:24]

        def build(tmp):
            cwd = self.tree(lab, task, None, tmp / "tree")
            return tmp / "unit.o", self.compile(self.unit_words(lab, task, tmp / "unit.o"), cwd, timeout,
                                                f"the grading driver of {task['id']}, alone,")
        return self._cached(key, UNIT, f"{task['file']} driver", build)[0]

    def launcher(self, timeout=600):
        """The grader's launcher (labs/drivers/launcher.cu), built once and cached like a
        reference (by content, hash-checked before every use)."""
        source = REPO / "labs" / "drivers"
        key = "launcher-" + hashlib.sha256(b"\0".join(
            [(source / n).read_bytes() for n in ("launcher.cu", "driver.h")] +
            [p.read_bytes() for p in sorted((REPO / "common").glob("*.h"))] +
            [self.arch.encode(), self.nvcc.encode()])).hexdigest()[:24]

        def build(tmp):
            tree = tmp / "tree"
            shutil.copytree(REPO / "common", tree / "common", ignore=shutil.ignore_patterns("*.md"))
            (tree / "labs" / "drivers").mkdir(parents=True)
            for n in ("launcher.cu", "driver.h"):
                shutil.copy2(source / n, tree / "labs" / "drivers" / n)
            words = [self.nvcc, "-std=c++17", "-O2"] + self.arch_flags() + [
                "-o", str(tmp / "launcher"), "launcher.cu"]
            return tmp / "launcher", self.compile(words, tree / "labs" / "drivers", timeout, "the launcher")
        return self._cached(key, "launcher", "launcher", build)[0]

    def verified(self, binary, data=None):
        """Raises unless the binary (or data, its bytes as read) still has the hash it was built
        (or checked) with."""
        with self.lock:
            want = self.hashes.get(Path(binary).parent.name)
        got = sha256_file(binary) if data is None else hashlib.sha256(data).hexdigest()
        if want is None or got != want:
            raise LabError(f"{binary} changed after it was built: not used")
        return binary

    def student(self, lab, task, text, scratch, slot, timeout):
        """(binary or None, log, leftovers): the driver with the student's regions, built in
        the fence (its own uid, no network, time limit); the binary is copied out to a folder
        only the grader writes."""
        unit = self.driver_unit(lab, task) if builds_alone(task) else None
        jail = self.fence.jail(scratch, slot, f"build-{task['id']}-{os.urandom(4).hex()}")
        tree = jail / "tree"
        cwd = self.tree(lab, task, text, tree, unit)
        if self.fence.drops_uid:  # the fenced compiler writes only its output and temporaries
            uid = self.fence.uid(slot)
            os.chown(cwd, uid, uid)
        out = cwd / "driver"
        rc, log, left = self.fence.run(self.words(lab, task, out), cwd, slot, timeout, BUILD_LIMITS,
                                       home=jail)
        log = log.replace(self.fence.inside(tree, jail) + "/", "").replace(str(tree) + "/", "")
        if rc == "timeout":
            return None, f"the build did not finish within {timeout} s and was stopped", left
        if rc != 0:
            return None, log, left
        # Every fenced process is gone; still, the file is read as one that fenced code made:
        # no symbolic link followed, no FIFO waited on, at most MAX_PROGRAM bytes.
        data, why = safe_read(out, MAX_PROGRAM, under=jail)
        if data is None or len(data) >= MAX_PROGRAM:
            return None, f"the build made no program ({why or 'too large'})", left
        keep = Path(scratch) / "bin" / f"{task['id']}-{os.urandom(4).hex()}"
        keep.parent.mkdir(exist_ok=True)
        keep.parent.chmod(0o711)
        fd = os.open(keep, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o555)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return keep, log, left


def device_code(binary, kernel):
    """The device code of a built driver, as a module the launcher loads (a fat binary): the
    driver's .nv_fatbin section holds one fat binary per compiled unit; the one that defines
    `kernel` (by name), else the largest. Read from the hash-checked binary, so the module is
    the code that was built, and none of its host code."""
    data = Path(binary).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise LabError(f"{binary} is not a 64-bit ELF program")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    entsize, count, names = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    strings = sections[names][4]

    def name(at):
        return data[strings + at:data.index(b"\0", strings + at)].decode(errors="replace")
    found = [data[s[4]:s[4] + s[5]] for s in sections if name(s[0]) == ".nv_fatbin"]
    if not found:
        raise LabError(f"{binary} holds no device code (.nv_fatbin)")
    section, fatbins, at = found[0], [], 0
    while at + 16 <= len(section):  # fatBinaryHeader: magic, version, header size, fat size
        magic, _, head, size = struct.unpack_from("<IHHQ", section, at)
        if magic != 0xBA55ED50:
            at += 8
            continue
        fatbins.append(section[at:at + head + size])
        at += head + size
    named = [f for f in fatbins if kernel.encode() in f]
    return max(named or fatbins, key=len)

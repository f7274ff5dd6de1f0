"""Intake: the lab's listed files, copied out of a submission into a folder the grader owns.

Only the files that labs/labs.json lists for the lab are read, each from <folder>/<lab folder>/
NAME or <folder>/NAME; anything else in the submission (a report, a cache, a .lab.json, a
build folder) is never looked at. A file is taken only if it is a regular file (lstat: no
symlink, FIFO, device or directory, and no symlink on the way to it), at most MAX_BYTES, and
text (UTF-8, no NUL). It is read through a descriptor opened with O_NOFOLLOW | O_NONBLOCK and
checked again with fstat, so that it cannot be swapped between the check and the read.
"""
import os
import stat
from pathlib import Path

MAX_BYTES = 64 * 1024


def read_one(path):
    """(text, None) or (None, why)."""
    path = Path(path)
    # No component between the submission and the file may be a symlink either.
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, "missing"
    except OSError as e:
        return None, f"cannot be read ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return None, "is a symbolic link: submit the file itself"
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(
            st.st_mode) else "not a regular file"
        return None, f"is {what}: submit a regular file"
    if st.st_size > MAX_BYTES:
        return None, f"is {st.st_size} bytes: at most {MAX_BYTES} are taken"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        return None, f"cannot be opened ({e.strerror})"
    try:
        st2 = os.fstat(fd)
        if not stat.S_ISREG(st2.st_mode) or (st2.st_ino, st2.st_dev) != (st.st_ino, st.st_dev):
            return None, "changed while it was read"
        data = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        return None, f"is more than {MAX_BYTES} bytes"
    if b"\0" in data:
        return None, "is not text (it holds NUL bytes)"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "is not text (not UTF-8)"


def no_symlink_on_the_way(root, path):
    p = Path(root)
    for part in Path(path).relative_to(root).parts[:-1]:
        p = p / part
        try:
            if stat.S_ISLNK(os.lstat(p).st_mode):
                return f"{p.relative_to(root)} is a symbolic link"
        except FileNotFoundError:
            return None
    return None


def take(folder, lab, dest=None):
    """{file name: (text or None, why or None, shown path)} for every file of the lab; with dest,
    the accepted files are also written there (0644, a folder the grader owns)."""
    folder = Path(folder)
    taken = {}
    try:
        if stat.S_ISLNK(os.lstat(folder).st_mode):
            return {name: (None, "the submission folder is a symbolic link", name)
                    for name in lab["files"]}
    except OSError:
        return {name: (None, "the submission folder does not exist", name) for name in lab["files"]}
    for name in lab["files"]:
        shown = f"{lab['folder']}/{name}"
        text, why = None, f"{shown} is missing from the submission"
        for path in (folder / lab["folder"] / name, folder / name):
            on_the_way = no_symlink_on_the_way(folder, path)
            if on_the_way:
                text, why = None, on_the_way
                break
            t, w = read_one(path)
            if w == "missing":
                continue
            text, why, shown = t, (f"{path.relative_to(folder)} {w}" if w else None), str(
                path.relative_to(folder))
            break
        taken[name] = (text, why, shown)
        if dest is not None and text is not None:
            out = Path(dest) / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
            out.chmod(0o644)
    return taken

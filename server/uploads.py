"""A lab submission uploaded as a tar (plain, gz, bz2, xz) or zip, unpacked with every refusal
said in one sentence: links (symbolic or hard), devices and FIFOs, absolute or climbing paths,
more files or bytes than the limits, and zip or gzip bombs: the bytes are counted as they come
out of the decompressor, and a member that gives more than it declared, or more than the
limits, stops the unpacking. Nothing is written outside DEST, and nothing through a link.
The grader's intake then takes only the lab's files from it, as from any folder."""
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

CHUNK = 64 << 10


class Refused(Exception):
    pass


def _name(raw):
    if "\0" in raw or "\\" in raw:
        raise Refused(f"upload refused: the name {raw!r} holds a NUL or a backslash")
    p = PurePosixPath(raw)
    if p.is_absolute():
        raise Refused(f"upload refused: {raw!r} is an absolute path")
    if ".." in p.parts:
        raise Refused(f"upload refused: {raw!r} climbs out of the folder ('..')")
    parts = [x for x in p.parts if x not in (".", "")]
    if not parts:
        raise Refused(f"upload refused: an empty name {raw!r}")
    return parts


class _Writer:
    def __init__(self, dest, max_files, max_bytes, max_file):
        self.dest, self.files, self.bytes = Path(dest), 0, 0
        self.max_files, self.max_bytes, self.max_file = max_files, max_bytes, max_file
        self.dest.mkdir(mode=0o700)

    def folder(self, parts):
        d = self.dest
        for part in parts:
            d = d / part
            if d.is_symlink() or (d.exists() and not d.is_dir()):
                raise Refused(f"upload refused: {'/'.join(parts)} is not a folder")
            d.mkdir(mode=0o700, exist_ok=True)
        return d

    def file(self, raw, declared, stream):
        parts = _name(raw)
        self.files += 1
        if self.files > self.max_files:
            raise Refused(f"upload refused: more than {self.max_files} files")
        if declared > self.max_file:
            raise Refused(f"upload refused: {raw} is {declared} bytes (at most {self.max_file} a file)")
        if self.bytes + declared > self.max_bytes:
            raise Refused(f"upload refused: more than {self.max_bytes} bytes unpacked")
        d = self.folder(parts[:-1])
        fd = os.open(d / parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        got = 0
        with os.fdopen(fd, "wb") as f:
            while True:
                chunk = stream.read(CHUNK)
                if not chunk:
                    break
                got += len(chunk)
                # The declared size is the archive's word; the bytes counted are the truth.
                if got > declared or got > self.max_file or self.bytes + got > self.max_bytes:
                    raise Refused(f"upload refused: {raw} unpacks to more than it declares or "
                                  f"than the limits (a zip bomb?)")
                f.write(chunk)
        self.bytes += got


def unpack(data, dest, max_files=64, max_bytes=8 << 20, max_file=1 << 20):
    """Unpacks the archive DATA (bytes) into the new folder DEST; returns the submission's
    folder (DEST, or its one top folder). Raises Refused with the reason."""
    w = _Writer(dest, max_files, max_bytes, max_file)
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = z.infolist()
            if len(infos) > max_files * 2:
                raise Refused(f"upload refused: more than {max_files} files")
            for info in infos:
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise Refused(f"upload refused: {info.filename} is a symbolic link")
                if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise Refused(f"upload refused: {info.filename} is not a regular file")
                if info.is_dir():
                    w.folder(_name(info.filename))
                    continue
                with z.open(info) as stream:
                    w.file(info.filename, info.file_size, stream)
    else:
        try:
            tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        except (tarfile.TarError, EOFError, OSError):
            raise Refused("upload refused: not a tar or zip archive")
        try:
            count = 0
            for m in tar:
                count += 1
                if count > max_files * 2:
                    raise Refused(f"upload refused: more than {max_files} files")
                if m.issym() or m.islnk():
                    raise Refused(f"upload refused: {m.name} is a link")
                if m.isdir():
                    w.folder(_name(m.name))
                    continue
                if not m.isreg():
                    raise Refused(f"upload refused: {m.name} is not a regular file")
                w.file(m.name, m.size, tar.extractfile(m))
        except (tarfile.TarError, EOFError, OSError, zipfile.BadZipFile) as e:
            if isinstance(e, FileExistsError):
                raise Refused("upload refused: a name appears twice")
            raise Refused(f"upload refused: a damaged archive ({type(e).__name__})")
        finally:
            tar.close()
    if w.files == 0:
        raise Refused("upload refused: the archive holds no file")
    inside = list(Path(dest).iterdir())
    if len(inside) == 1 and inside[0].is_dir() and not inside[0].is_symlink():
        return inside[0]
    return Path(dest)

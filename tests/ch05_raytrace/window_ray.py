#!/usr/bin/env python3
"""The chapter-5 window with a GPU image, tested for real (ctest: ch05.ray.window).

    window_ray.py PROGRAM OUTDIR [--screenshot FILE.png]

Starts a private Xvfb server, runs `PROGRAM --window --output OUTDIR/image.ppm` on it (ray or
ray_noconst: the GPU renders, the same run writes the image file and then shows it in its
freeglut window), takes screenshots of the screen with xwd while the window is open, and
compares the window's rectangle with the image file, pixel by pixel, until they match or the
window closes (CUDA_EXAMPLES_WINDOW_SECONDS closes it). The program's own verdict (exit 0) is
required too. A mismatch is described: the image upside down, a colour channel lost, or the
first differing pixel.

Colours: the file is RGB, 8 bits a channel, top row first. xwd writes each screen pixel as a
32-bit value whose byte order (least significant byte first on x86) and red/green/blue masks
its header gives (Xvfb's 24-bit screen: 0x00RRGGBB, i.e. the bytes B, G, R, unused): each
channel is taken out through its mask, so neither byte order matters. The screen has no alpha:
glDrawPixels drew the bitmap's RGBA with alpha ignored, and the file holds no alpha either, so
alpha is compared by neither (the GPU tests check it: ray.alpha_unwritten).

Where the tools come from: the folder tools/x11-bundle.sh makes (build/x11-bundle, or
$CUDA_EXAMPLES_X11_BUNDLE), else the system's packages (xvfb, x11-apps). Without them the test
is skipped (exit 77) with the reason, or fails where CUDA_EXAMPLES_REQUIRE_WINDOW or
CUDA_EXAMPLES_REQUIRE_GPU is set (a GPU CI runner). Exit 0 the window shows the image file
exactly, 1 it does not (or the program failed), 77 skipped.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WINDOW_SECONDS = 8
DIM = 320


def skip(why):
    required = [v for v in ("CUDA_EXAMPLES_REQUIRE_WINDOW", "CUDA_EXAMPLES_REQUIRE_GPU")
                if os.environ.get(v, "0") not in ("", "0")]
    if required:
        print(f"window test: FAIL: {why}, and {required[0]} is set")
        sys.exit(1)
    print(f"window test: SKIPPED: {why}")
    sys.exit(77)


def bundle_environment():
    """The environment with the x11 bundle's tools, when there is one; else os.environ."""
    env = dict(os.environ)
    folder = os.environ.get("CUDA_EXAMPLES_X11_BUNDLE") or str(REPO / "build" / "x11-bundle")
    script = Path(folder) / "env.sh"
    if not script.is_file():
        return env, None
    out = subprocess.run(["bash", "-c", f'. "{script}" >/dev/null 2>&1; env -0'],
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    env = dict(item.split("=", 1) for item in out.split("\0") if "=" in item)
    return env, folder


def read_ppm(path):
    data = Path(path).read_bytes()
    fields, pos = [], 0
    while len(fields) < 4:  # P6 width height maxval, separated by whitespace (no comments here)
        while data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError(f"{path}: not a binary 8-bit PPM")
    width, height = int(fields[1]), int(fields[2])
    pixels = data[pos + 1:pos + 1 + width * height * 3]
    if len(pixels) != width * height * 3:
        raise ValueError(f"{path}: truncated")
    return width, height, pixels


def read_xwd(path, crop=None):
    """(the captured window's place and size, width, height, RGB bytes top row first) of an xwd
    screenshot (ZPixmap, 24 or 32 bits a pixel); crop=(x, y, w, h) reads that rectangle only."""
    data = Path(path).read_bytes()
    h = struct.unpack(">25I", data[:100])  # XWDFileHeader: 25 big-endian 32-bit fields
    header_size, fmt, width, height = h[0], h[2], h[4], h[5]
    byte_order, bpp, bytes_per_line = h[7], h[11], h[12]
    masks, ncolors = h[14:17], h[19]
    window = {"width": h[20], "height": h[21],
              "x": struct.unpack(">i", data[88:92])[0], "y": struct.unpack(">i", data[92:96])[0]}
    if fmt != 2 or bpp not in (24, 32):
        raise ValueError(f"unexpected xwd format {fmt}, {bpp} bits per pixel")
    offset = header_size + ncolors * 12
    step = bpp // 8
    order = "little" if byte_order == 0 else "big"
    shifts = [(m & -m).bit_length() - 1 for m in masks]
    full = (width, height)
    x0, y0 = 0, 0
    if crop:
        x0, y0, width, height = crop
    rgb = bytearray(width * height * 3)
    for row in range(height):
        start = offset + (y0 + row) * bytes_per_line + x0 * step
        line = data[start:start + width * step]
        for col in range(width):
            v = int.from_bytes(line[col * step:(col + 1) * step], order)
            o = (row * width + col) * 3
            for c in range(3):
                rgb[o + c] = (v & masks[c]) >> shifts[c]
    return window, full[0], full[1], bytes(rgb)


def write_png(path, width, height, rgb):
    """An RGB PNG, top row first, with the standard library alone."""
    raw = b"".join(b"\0" + rgb[r * width * 3:(r + 1) * width * 3] for r in range(height))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" +
                           chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
                           chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def compare(image, shot, width, height):
    """None when equal; else what is wrong, in words."""
    if image == shot:
        return None
    row = width * 3
    flipped = b"".join(image[(height - 1 - r) * row:(height - r) * row] for r in range(height))
    if flipped == shot:
        return "the window shows the image upside down"
    lost = [name for c, name in enumerate("red green blue".split())
            if any(image[i] != shot[i] for i in range(c, len(image), 3))]
    differ = sum(1 for i in range(0, len(image), 3) if image[i:i + 3] != shot[i:i + 3])
    first = next(i for i in range(0, len(image), 3) if image[i:i + 3] != shot[i:i + 3]) // 3
    x, y = first % width, first // width
    detail = (f"{differ} of {width * height} pixels differ (in channel{'s' if len(lost) > 1 else ''} "
              f"{', '.join(lost)}); first at ({x}, {y}) from the top: file "
              f"{tuple(image[3 * first:3 * first + 3])}, screen {tuple(shot[3 * first:3 * first + 3])}")
    if len(lost) == 1 and all(shot[i] == 0 for i in range("rgb".index(lost[0][0]), len(shot), 3)):
        detail = f"the window lost the {lost[0]} channel (it is 0 everywhere); " + detail
    return detail


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("program")
    parser.add_argument("outdir")
    parser.add_argument("--screenshot", help="also save the window's screenshot as this PNG")
    parser.add_argument("--no-glut", action="store_true", help="the build has no freeglut: skip")
    opts = parser.parse_args()
    if opts.no_glut:
        skip("built without freeglut (freeglut3-dev, or the folder of tools/x11-bundle.sh)")
    env, bundle = bundle_environment()
    where = f"the bundle {bundle}" if bundle else "this machine"
    for tool, package in (("Xvfb", "xvfb"), ("xwd", "x11-apps")):
        if not shutil.which(tool, path=env.get("PATH")):
            skip(f"{tool} not found on {where} (package {package}, or tools/x11-bundle.sh)")
    if not os.path.exists("/usr/bin/xkbcomp"):
        skip("Xvfb needs /usr/bin/xkbcomp (its path is compiled in; package x11-xkb-utils, or as "
             "root: bash build/x11-bundle/env.sh --link-xkbcomp)")
    help_text = subprocess.run([opts.program, "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True).stdout
    if "--window" not in help_text:
        skip(f"{opts.program} has no --window option")
    out = Path(opts.outdir)
    out.mkdir(parents=True, exist_ok=True)
    image_path, shot_path, window_path = out / "image.ppm", out / "screen.xwd", out / "window.xwd"
    for f in (image_path, shot_path, window_path):
        f.unlink(missing_ok=True)

    # A private X server on a free display (-displayfd), never reset (see window_test.sh).
    read_fd, write_fd = os.pipe()
    # Xvfb reads its keymaps from a folder compiled into it (/usr/share/X11/xkb): the bundle's.
    xkb = ["-xkbdir", f"{bundle}/root/usr/share/X11/xkb"] if bundle else []
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "640x480x24",
                             "-nolisten", "tcp", "-noreset"] + xkb, env=env, pass_fds=(write_fd,),
                            stdout=subprocess.DEVNULL, stderr=open(out / "xvfb.log", "w"))
    os.close(write_fd)
    try:
        display = os.read(read_fd, 64).decode().strip()
        if not display:
            print("window test: FAIL: Xvfb did not start:\n" + (out / "xvfb.log").read_text())
            return 1
        env["DISPLAY"] = f":{display}"
        env["CUDA_EXAMPLES_WINDOW_SECONDS"] = str(WINDOW_SECONDS)
        print(f"window test: Xvfb on :{display} ({where})")

        def watch(env):
            """Runs the program with its window; screenshots until it matches the file."""
            for f in (image_path, shot_path, window_path):
                f.unlink(missing_ok=True)
            log = open(out / "program.log", "w")
            words = [opts.program, "--window", "--output", str(image_path), "--dim", str(DIM),
                     "--spheres", "40", "--seed", "7", "--repeats", "2"]
            print("window test: " + " ".join(words))
            program = subprocess.Popen(words, env=env, stdout=log, stderr=subprocess.STDOUT)
            problem, attempts, matched = "the window never appeared", 0, None
            width = height = DIM
            while program.poll() is None and matched is None:
                time.sleep(0.3)
                if not image_path.exists():
                    continue
                # Where is the window? Then the whole screen, cut to that rectangle: what a user sees.
                if subprocess.run(["xwd", "-silent", "-name", "bitmap", "-out", str(window_path)],
                                  env=env, stderr=subprocess.DEVNULL).returncode != 0:
                    continue
                if subprocess.run(["xwd", "-silent", "-root", "-out", str(shot_path)],
                                  env=env).returncode != 0:
                    continue
                attempts += 1
                window, _, _, _ = read_xwd(window_path, crop=(0, 0, 1, 1))
                _, sw, sh, _ = read_xwd(shot_path, crop=(0, 0, 1, 1))
                width, height, image = read_ppm(image_path)
                if (window["width"], window["height"]) != (width, height):
                    problem = f"the window is {window['width']} x {window['height']}, the image {width} x {height}"
                    continue
                x0, y0 = window["x"], window["y"]
                if x0 < 0 or y0 < 0 or x0 + width > sw or y0 + height > sh:
                    problem = f"the window at ({x0}, {y0}) is not wholly on the {sw} x {sh} screen"
                    continue
                cut = read_xwd(shot_path, crop=(x0, y0, width, height))[3]
                problem = compare(image, cut, width, height)
                if problem is None or attempts >= 10:
                    matched = cut
            try:
                rc = program.wait(timeout=WINDOW_SECONDS + 120)
            except subprocess.TimeoutExpired:
                program.kill()
                rc = "timeout"
            log.close()
            said = (out / "program.log").read_text()
            return problem, attempts, matched, rc, said, width, height

        width = height = DIM
        problem, attempts, matched, rc, said, width, height = watch(env)
        if rc == 77:  # the program's own skip: no GPU (its reason, as it said it)
            lines = [line for line in said.strip().split("\n") if line.strip()]
            skip(lines[-1] if lines else "the program exited 77")
        if attempts == 0 and "GLX" in said and env.get("__GLX_VENDOR_LIBRARY_NAME") != "nvidia":
            # The device notes of some GPU machines: GLX windows on Xvfb ran with NVIDIA's GLX
            # library. Mesa's is tried first (it renders on the CPU, anywhere), then that one.
            print("window test: no window with Mesa's GLX; trying NVIDIA's (__GLX_VENDOR_LIBRARY_NAME=nvidia)")
            problem, attempts, matched, rc, said, width, height = watch(
                dict(env, __GLX_VENDOR_LIBRARY_NAME="nvidia"))
        print("\n".join("  | " + line for line in said.strip().split("\n")[-8:]))
        if matched is not None and opts.screenshot:
            write_png(opts.screenshot, width, height, matched)
            print(f"window test: the window's screenshot: {opts.screenshot}")
        if problem is not None:
            print(f"window test: FAIL after {attempts} screenshots: {problem}")
            return 1
        if rc != 0:
            print(f"window test: FAIL: the program exited {rc} (its verdict above)")
            return 1
        print(f"window test: PASS: the {width} x {height} window shows the image file "
              f"{image_path.name} exactly (screenshot {attempts}), and the program's verdict is PASS")
        return 0
    finally:
        xvfb.terminate()
        try:
            xvfb.wait(timeout=10)
        except subprocess.TimeoutExpired:
            xvfb.kill()


if __name__ == "__main__":
    sys.exit(main())

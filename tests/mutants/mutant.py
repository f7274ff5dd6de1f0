#!/usr/bin/env python3
"""Planted bugs: apply one to a copy of a program, build it, and show that a check catches it.

    mutant.py apply   MUTANT... [--build DIR]         each patch applies (a quick check, no compiling)
    mutant.py compile MUTANT --build DIR [options]   the patch applies and the program compiles
    mutant.py caught  MUTANT --build DIR [options]   every check named in `expect:` catches it
    mutant.py table   DIR                            planted bug x who caught it, from the last run

The file format and what "caught" means are in tests/mutants/README.md. Exit codes follow
the suite's: 0 done (compiled / caught), 1 the patch failed, the build failed or the bug
survived, 2 a malformed mutant file, 77 no GPU to run it on (ctest: skipped).
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKS = ("verdict", "lesson", "gtest", "racecheck", "synccheck", "memcheck")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_DEVICE = 0, 1, 2, 77


class MutantError(Exception):
    """A mutant file that cannot be read, or a patch that no longer applies."""


def parse(path):
    """Reads a .mutant file into a dict; raises MutantError with the line at fault."""
    m = {"path": Path(path), "runs": [], "patches": [], "no_default_run": False}
    m["chapter"] = Path(path).parent.name
    m["name"] = Path(path).name[: -len(".mutant")]
    lines = Path(path).read_text().split("\n")
    i = 0
    while i < len(lines) and not lines[i].startswith("@@"):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        if line == "no-default-run":
            m["no_default_run"] = True
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise MutantError(f"{path}:{i}: expected 'key: value', got {line!r}")
        key, value = key.strip(), value.strip()
        if key == "run":
            m["runs"].append(value)
        elif key in ("program", "source", "bug", "expect", "gtest", "gtest-filter", "sanitize"):
            m[key] = value
        else:
            raise MutantError(f"{path}:{i}: unknown key {key!r}")
    for key in ("program", "bug", "expect"):
        if key not in m:
            raise MutantError(f"{path}: missing '{key}:'")
    m["expect"] = m["expect"].split()
    for check in m["expect"]:
        if check not in CHECKS:
            raise MutantError(f"{path}: unknown check {check!r} (known: {', '.join(CHECKS)})")
    m.setdefault("source", f"{m['chapter']}/{m['program']}.cu")
    m.setdefault("gtest", f"test_{m['program']}")
    if m["source"].startswith("tests/"):
        raise MutantError(f"{path}: a planted bug goes into a program, never into tests/")
    # The patch: @@ find / @@ replace pairs, closed by @@ end.
    block, find, text = None, None, []
    for n, line in enumerate(lines[i:], start=i + 1):
        if line.startswith("@@"):
            marker = line[2:].strip()
            if block == "find":
                find = "\n".join(text)
            elif block == "replace":
                m["patches"].append((find, "\n".join(text)))
            if marker not in ("find", "replace", "end"):
                raise MutantError(f"{path}:{n}: unknown marker {line!r}")
            if marker == "replace" and block != "find":
                raise MutantError(f"{path}:{n}: '@@ replace' must follow '@@ find'")
            if marker == "end":
                break
            block, text = marker, []
        else:
            text.append(line)
    else:
        raise MutantError(f"{path}: no '@@ end'")
    if not m["patches"]:
        raise MutantError(f"{path}: no '@@ find' / '@@ replace' pair")
    return m


def work_dir(build, m):
    return Path(build).resolve() / "mutants" / m["chapter"] / m["name"]


def make_tree(build, m):
    """Copies common/, the chapter and its tests (and the patched file, when it lies elsewhere)
    into the mutant's folder, then plants the bug."""
    root = work_dir(build, m)
    tree = root / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    for part in ("common", m["chapter"], f"tests/{m['chapter']}"):
        shutil.copytree(REPO / part, tree / part)
    if not (tree / m["source"]).exists() and (REPO / m["source"]).is_file():
        # A program outside the chapters (scripts/mma_peak.cu): its file alone.
        (tree / m["source"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / m["source"], tree / m["source"])
    shutil.copy2(REPO / "tests" / "gpu_test.h", tree / "tests" / "gpu_test.h")
    target = tree / m["source"]
    if not target.exists():
        raise MutantError(f"{m['path']}: source {m['source']} does not exist")
    text = target.read_text()
    for find, replace in m["patches"]:
        count = text.count(find)
        if count != 1:
            where = "is not in" if count == 0 else f"occurs {count} times in"
            raise MutantError(f"{m['path']}: the find block {where} {m['source']} "
                              f"(the program changed: update the mutant):\n{find}")
        text = text.replace(find, replace)
    target.write_text(text)
    return root, tree


def standalone_line(source):
    """The '//   nvcc ...' line in the first 40 lines of a program, as a list of words."""
    with open(source) as f:
        for _, line in zip(range(40), f):
            hit = re.match(r"^//\s+(nvcc .*)$", line.rstrip("\n"))
            if hit:
                return shlex.split(hit.group(1))
    raise MutantError(f"{source}: no '//   nvcc ...' line in its header comment")


def arch_flags(arch):
    """'90-real' or '90' -> -arch=sm_90; anything else (native, all, empty): nvcc's default."""
    first = re.split(r"[;,]", arch or "")[0]
    number = re.match(r"^(\d+)", first)
    return [f"-arch=sm_{number.group(1)}"] if number else []


def own_target(words):
    """The arch-specific target a standalone line names (-gencode=...sm_90a: wgmma), if any.
    Such a program is built for that target alone: the chapter's architecture would add a
    plain sm_90 build of kernels that are empty without the target's instructions."""
    return [w for w in words if re.search(r"(sm|compute)_\d+a\b", w)]


def compile_program(args, m, tree, root):
    """Builds the patched program with its own standalone nvcc line, for one architecture."""
    program_source = tree / m["chapter"] / f"{m['program']}.cu"
    if not program_source.exists():
        program_source = program_source.with_suffix(".cpp")
    if not program_source.exists():  # a program outside the chapters (scripts/mma_peak.cu)
        program_source = tree / m["source"]
    words = standalone_line(program_source)
    out = root / m["program"]
    architecture = [] if own_target(words) else arch_flags(args.arch)
    words = [args.nvcc] + [w for w in words[1:]] + architecture
    words[words.index("-o") + 1] = str(out)
    return run_build(words, program_source.parent, root / "compile.log"), out


def compile_gtest(args, m, tree, root):
    source = tree / "tests" / m["chapter"] / f"{m['gtest']}.cu"
    if not source.exists():
        source = source.with_suffix(".cpp")
    out = root / m["gtest"]
    program_source = tree / m["chapter"] / f"{m['program']}.cu"
    if not program_source.exists():
        program_source = program_source.with_suffix(".cpp")
    target = own_target(standalone_line(program_source)) if program_source.exists() else []
    words = [args.nvcc, "-std=c++17", "-O2", "-DCUDA_EXAMPLES_NO_MAIN", f"-I{tree}",
             f"-I{tree / 'tests'}"] + (target or arch_flags(args.arch))
    words += [f"-I{d}" for arg in args.gtest_include for d in arg.split(":") if d]
    if source.suffix == ".cpp":
        # Compiled as CUDA through a .cu copy ("-x cu" would apply to the libraries after it too).
        cu = source.with_suffix(".cu")
        shutil.copyfile(source, cu)
        source = cu
    # The libraries the program itself links (its standalone line's -l words: -lcublas,
    # -lnccl, ...), which the test that includes it needs too.
    libs = [w for w in standalone_line(program_source) if w.startswith("-l")]
    words += [str(source), "-o", str(out)] + args.gtest_lib + libs + ["-lcublas", "-lpthread"]
    return run_build(words, tree, root / "compile-gtest.log"), out


def run_build(words, cwd, log):
    started = time.time()
    r = subprocess.run(words, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace")
    log.write_text(" ".join(shlex.quote(w) for w in words) + "\n" + r.stdout)
    if r.returncode != 0:
        print(f"build failed ({time.time() - started:.0f} s): {' '.join(words)}\n{r.stdout}")
        return False
    print(f"built in {time.time() - started:.0f} s ({log.name})")
    return True


def run(words, timeout):
    """Runs a command; returns (exit code or 'timeout', output)."""
    try:
        r = subprocess.run(words, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out


def last_lines(text, n=6):
    return "\n".join("    " + line for line in text.strip().split("\n")[-n:])


def check_verdict(args, m, program, lesson=False):
    """verdict: every run exits 1 (or hangs). lesson: every run exits 1 and prints a line
    starting 'Lesson: MISSED' (the answer may be right; the effect the program teaches is not)."""
    runs = ([] if m["no_default_run"] else [""]) + m["runs"]
    how = []
    for line in runs:
        words = [str(program)] + shlex.split(line)
        rc, out = run(words, args.timeout)
        label = line or "(default size)"
        if rc == EXIT_NO_DEVICE:
            return None, f"no GPU: {label} exited 77"
        caught = rc == EXIT_FAILED or rc == "timeout"
        verdict = re.findall(r"^Verdict: .*$", out, re.M)
        if lesson:
            verdict = re.findall(r"^Lesson: .*$", out, re.M)
            caught = rc == EXIT_FAILED and bool(verdict) and verdict[-1].startswith("Lesson: MISSED")
        said = "hang, stopped after %d s" % args.timeout if rc == "timeout" else (
            verdict[-1] if verdict else f"exit {rc}, no verdict line")
        print(f"  {'lesson ' if lesson else 'verdict'} {'CAUGHT  ' if caught else 'SURVIVED'} {label}: {said}")
        if not caught:
            print(last_lines(out))
        how.append({"args": label, "exit": rc, "caught": caught, "said": said[:200]})
    return all(h["caught"] for h in how), how


def check_gtest(args, m, binary):
    words = [str(binary)] + ([f"--gtest_filter={m['gtest-filter']}"] if "gtest-filter" in m else [])
    rc, out = run(words, args.timeout)
    failed = sorted(set(re.findall(r"^\[  FAILED  \] (\S+)", out, re.M)))
    ran = re.search(r"\[==========\] (\d+) tests? from .* ran", out)
    skipped = re.search(r"\[  SKIPPED \] (\d+) test", out)
    if rc == 0 and ran and skipped and skipped.group(1) == ran.group(1):
        return None, "no GPU: every test skipped"
    caught = rc == "timeout" or rc != 0
    said = "hang" if rc == "timeout" else (
        f"{len(failed)} failed: {', '.join(failed[:4])}" if failed else f"exit {rc}")
    print(f"  gtest   {'CAUGHT  ' if caught else 'SURVIVED'} {m['gtest']}: {said}")
    if not caught:
        print(last_lines(out))
    return caught, {"binary": m["gtest"], "exit": rc, "caught": caught, "said": said[:300]}


def check_sanitizer(args, m, program, tool):
    if not args.sanitizer:
        print(f"  {tool}: compute-sanitizer was not found, so this planted bug cannot be shown caught")
        return False, {"tool": tool, "caught": False, "said": "compute-sanitizer not found"}
    words = [args.sanitizer, "--tool", tool, str(program)] + shlex.split(m.get("sanitize", ""))
    rc, out = run(words, max(args.timeout, 900))
    if rc == EXIT_NO_DEVICE:
        return None, "no GPU"
    counts = [int(n) for n in re.findall(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)", out)]
    caught = any(n > 0 for n in counts)
    summary = re.findall(r"^=+ (?:ERROR|RACECHECK) SUMMARY: .*$", out, re.M)
    said = summary[-1].lstrip("= ") if summary else f"exit {rc}, no summary"
    print(f"  {tool:9} {'CAUGHT  ' if caught else 'SURVIVED'}: {said}")
    if not caught:
        print(last_lines(out))
    return caught, {"tool": tool, "exit": rc, "caught": caught, "said": said[:200]}


def cmd_compile(args, m):
    root, tree = make_tree(args.build, m)
    ok, _ = compile_program(args, m, tree, root)
    print(f"{m['chapter']}/{m['name']}: the patch applies and the program "
          f"{'compiles' if ok else 'does NOT compile'}")
    return EXIT_OK if ok else EXIT_FAILED


def gpu_visible():
    """True when nvidia-smi lists a GPU; the reason otherwise."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "nvidia-smi not found: is there an NVIDIA GPU and driver on this machine?"
    rc, out = run([smi, "-L"], 60)
    if rc != 0 or "GPU " not in out:
        return False, f"nvidia-smi lists no GPU ({out.strip()[:120]})"
    return True, ""


def cmd_caught(args, m):
    ok, why = gpu_visible()
    if not ok:
        required = os.environ.get("CUDA_EXAMPLES_REQUIRE_GPU", "0") not in ("", "0")
        print(f"{'FAILED' if required else 'skipped'}: no GPU to run the planted bug on: {why}")
        return EXIT_FAILED if required else EXIT_NO_DEVICE
    root, tree = make_tree(args.build, m)
    print(f"{m['chapter']}/{m['name']}: {m['bug']}")
    ok, program = compile_program(args, m, tree, root)
    if not ok:
        return EXIT_FAILED
    result = {"chapter": m["chapter"], "program": m["program"], "mutant": m["name"], "bug": m["bug"],
              "expect": m["expect"], "checks": {}}
    for check in m["expect"]:
        if check in ("verdict", "lesson"):
            caught, how = check_verdict(args, m, program, lesson=check == "lesson")
        elif check == "gtest":
            built, binary = compile_gtest(args, m, tree, root)
            if not built:
                return EXIT_FAILED
            caught, how = check_gtest(args, m, binary)
        else:
            caught, how = check_sanitizer(args, m, program, check)
        if caught is None:
            print(f"skipped: {how}")
            return EXIT_NO_DEVICE
        result["checks"][check] = {"caught": caught, "detail": how}
    result["caught"] = all(c["caught"] for c in result["checks"].values())
    (root / "result.json").write_text(json.dumps(result, indent=1))
    print(f"{m['chapter']}/{m['name']}: {'CAUGHT by ' + ', '.join(m['expect']) if result['caught'] else 'SURVIVED'}")
    return EXIT_OK if result["caught"] else EXIT_FAILED


def cmd_table(build):
    rows = []
    for path in sorted((Path(build) / "mutants").glob("*/*/result.json")):
        r = json.loads(path.read_text())
        cells = []
        for check in CHECKS:
            c = r["checks"].get(check)
            cells.append("—" if c is None else ("caught" if c["caught"] else "**SURVIVED**"))
        rows.append(f"| {r['program']} | {r['mutant'].split('.', 1)[-1]} | {r['bug']} | " + " | ".join(cells) + " |")
    print("| program | planted bug | what is wrong | " + " | ".join(CHECKS) + " |")
    print("|---|---|---|" + "---|" * len(CHECKS))
    print("\n".join(rows))
    print(f"\n{len(rows)} planted bugs with results under {build}/mutants")
    return EXIT_OK


def cmd_apply(args, paths):
    failed = 0
    for path in paths:
        try:
            make_tree(args.build, parse(path))
        except MutantError as e:
            print(f"mutant.py: {e}")
            failed += 1
    print(f"mutant.py apply: {len(paths) - failed} of {len(paths)} patches apply")
    return EXIT_FAILED if failed else EXIT_OK


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("apply", "compile", "caught", "table"))
    p.add_argument("target", nargs="+",
                   help="a .mutant file (apply: one or more), or for 'table' the build directory")
    p.add_argument("--build", default="build", help="build directory (mutants are built under DIR/mutants)")
    p.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    p.add_argument("--arch", default="", help="CMAKE_CUDA_ARCHITECTURES; the first entry is built")
    p.add_argument("--gtest-include", action="append", default=[])
    p.add_argument("--gtest-lib", action="append", default=[],
                   help="GoogleTest libraries to link (default: -lgtest -lgtest_main)")
    p.add_argument("--sanitizer", default=shutil.which("compute-sanitizer"))
    p.add_argument("--timeout", type=int, default=300, help="seconds before a run counts as a hang")
    args = p.parse_args()
    if args.command == "apply":
        return cmd_apply(args, args.target)
    if len(args.target) != 1:
        p.error(f"{args.command} takes one target")
    args.target = args.target[0]
    if args.command == "table":
        return cmd_table(args.target)
    if not args.gtest_lib:
        args.gtest_lib = ["-lgtest", "-lgtest_main"]
    try:
        m = parse(args.target)
        return cmd_compile(args, m) if args.command == "compile" else cmd_caught(args, m)
    except MutantError as e:
        print(f"mutant.py: {e}")
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())

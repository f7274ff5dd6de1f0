#!/usr/bin/env python3
"""The end of a test run in a few lines: how many tests passed, failed and were
skipped, the skipped ones grouped by their reason with a count, and what would
run them. ctest itself prints only "(Skipped)"; the reasons are in the tests'
output, which ctest keeps in its JUnit file.

    python3 scripts/test_summary.py --preset default   the JUnit file of a test preset
    python3 scripts/test_summary.py build/junit.xml    any file from ctest --output-junit
    python3 scripts/test_summary.py --preset gpu --where   only say where that file is
    python3 scripts/test_summary.py --preset gpu --second-pass-regex   the names of the tests
        that need the GPU to themselves (label lesson), as one ctest regex for -E:
        scripts/test.sh's first pass leaves them out by name, since ctest ignores -LE where the
        test preset has an exclude label of its own (ours: "sanitize")

scripts/test.sh and scripts/sanitize.sh call it after ctest, with --times (how long each step
took, and each label's summed test time from ctest's log: written as JSON for the record that
README's times come from) and the gate below.

No silent skips on a GPU runner: where CUDA_EXAMPLES_REQUIRE_GPU is set (in the environment, or
by the test preset, as the gpu presets do), the only skips allowed are tests that need more GPUs
than the machine has ("needs N GPUs, K visible"); they are listed by name, and any other skip
fails the run (exit 1), named.

Exit status: 0, 1 a skip the gate does not allow, 2 no JUnit file to read.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = 3  # test names shown per reason

NO_GPU_HINT = ("a machine with an NVIDIA GPU and its driver\n"
               "(on a GPU CI runner, ctest --preset gpu makes a missing GPU a failure instead)")


MULTI_GPU = re.compile(r"needs (at least )?\d+ GPUs")


def load_presets():
    with open(os.path.join(ROOT, "CMakePresets.json")) as f:
        return json.load(f)


def preset_environment(name):
    """The environment a test preset sets (following "inherits"; the child's value wins)."""
    presets = {p["name"]: p for p in load_presets().get("testPresets", [])}
    env, todo = {}, [name]
    while todo:
        preset = presets.get(todo.pop(0))
        if preset is None:
            continue
        for k, v in (preset.get("environment") or {}).items():
            env.setdefault(k, v)
        parents = preset.get("inherits", [])
        todo += [parents] if isinstance(parents, str) else parents
    return env


def preset_junit(name):
    """The JUnit file of a test preset of CMakePresets.json: <binaryDir>/<vendor.cuda-examples.junit>."""
    presets = load_presets()

    def lookup(kind, preset_name, get):
        """A field of a preset, following "inherits" as CMake does (first parent wins)."""
        preset = next((p for p in presets.get(kind, []) if p["name"] == preset_name), None)
        if preset is None:
            sys.exit(f"test_summary: no {kind[:-7]} preset '{preset_name}' in CMakePresets.json")
        value = get(preset)
        if value is not None:
            return value
        parents = preset.get("inherits", [])
        for parent in [parents] if isinstance(parents, str) else parents:
            value = lookup(kind, parent, get)
            if value is not None:
                return value
        return None

    configure = lookup("testPresets", name, lambda p: p.get("configurePreset"))
    # Not output.outputJUnitFile: ctest writes that file on every run of the preset, `ctest -N`
    # (listing only) too, which left an empty report where the last run's was. scripts/test.sh
    # and scripts/sanitize.sh pass --output-junit with this path.
    junit = lookup("testPresets", name,
                   lambda p: ((p.get("vendor") or {}).get("cuda-examples") or {}).get("junit"))
    binary_dir = lookup("configurePresets", configure, lambda p: p.get("binaryDir"))
    if not junit or not binary_dir:
        sys.exit(f"test_summary: test preset '{name}' names no JUnit file "
                 "(vendor.cuda-examples.junit)")
    binary_dir = binary_dir.replace("${sourceDir}", ROOT)
    return os.path.join(binary_dir, junit)


def skip_reason(case):
    """Why ctest skipped this test: the line the test itself printed, else ctest's message."""
    skipped = case.find("skipped")
    message = skipped.get("message", "") if skipped is not None else ""
    output = (case.findtext("system-out") or "").strip()
    if message == "Disabled":
        return "disabled (the DISABLED test property)"
    gpus = [line for line in output.splitlines() if MULTI_GPU.search(line)]
    if gpus:  # "needs 2 GPUs, 1 visible", wherever the program printed it
        return gpus[-1].strip()
    gtest = re.search(r": Skipped\n(.+)", output)           # GTEST_SKIP() << why
    if gtest:
        return gtest.group(1).strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else message or "no reason given"


def group(reason):
    """(the group's title, a detail line, what would run them) for one reason."""
    if re.search(r"no (usable )?CUDA device|no GPU", reason):
        error = re.search(r"(cudaError\w+)(?:: ([^(]*?))?(?: --|\)|$)", reason)
        detail = ""
        if error:
            detail = error.group(1) + (f": {error.group(2).strip()}" if error.group(2) else "")
        elif "reports 0 CUDA devices" in reason:
            detail = "the driver reports 0 CUDA devices"
        return "no usable CUDA device", detail, NO_GPU_HINT
    if MULTI_GPU.search(reason):
        hit = re.search(r"needs (at least )?(\d+) GPUs(, \d+ visible)?", reason)
        return (hit.group(0), "",
                "a machine with that many GPUs (docs/ch07_multi_gpu.md: the runs on two and four H200s)")
    if "host memory" in reason or "of RAM" in reason:
        return (reason, "", "a machine with less RAM than the matrices need (the test shows the "
                "refusal only where it would happen)")
    # "program: SKIPPED: why (what installs it)" -> "why (what installs it)"
    reason = re.sub(r"^[\w .+-]{1,40}: ((SKIPPED|skipped|FAILED): )?", "", reason)
    if reason.startswith("cannot run here: "):
        return ("lab self-tests (scripts/lab.py selftest): " + reason[len("cannot run here: "):], "",
                "a machine with an NVIDIA GPU and nvcc (they grade the reference solutions "
                "and every planted bug of each lab)")
    return reason, "", ""


def kinds(names):
    """"42 program runs, 150 GoogleTest tests, ..." from the test names (<ch>.<program>.<what>)."""
    counts = {}
    for name in names:
        if ".sanitize." in name:
            kind = "sanitizer runs"
        elif ".mutant." in name:
            kind = "planted bugs"
        elif ".usage." in name:
            kind = "usage tests"
        elif re.search(r"\.run(_\w+)?$", name):
            kind = "program runs"
        elif re.search(r"\.(\w+/)?[A-Z]\w*\.\w+(/[^/]+)?(\s+# .*)?$", name):  # Suite.Test, P/Suite.Test/(1, 5)
            kind = "GoogleTest tests"
        else:
            kind = "other tests"
        counts[kind] = counts.get(kind, 0) + 1
    singular = {"sanitizer runs": "sanitizer run", "planted bugs": "planted bug",
                "program runs": "program run", "GoogleTest tests": "GoogleTest test",
                "usage tests": "usage test",
                "other tests": "other test"}
    return ", ".join(f"{n} {kind if n > 1 else singular[kind]}"
                     for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def label_times(log):
    """{label: summed seconds of its tests} from ctest's "Label Time Summary", added up over
    every ctest run in the log (scripts/test.sh prints one a pass: each counts only its own)."""
    out = {}
    for label, seconds in re.findall(r"^\s*([\w.-]+)\s+=\s+([\d.]+) sec\*proc", log, re.M):
        out[label] = round(out.get(label, 0.0) + float(seconds), 2)
    return out


def write_times(path, phases, log, counts, gated, ok, preset):
    """The steps' wall times and each label's summed test time, as JSON (tools/ci_record.py)."""
    data = {"preset": preset, "phases_s": phases, "label_test_seconds": label_times(log),
            "counts": counts, "require_gpu": gated, "no_silent_skips": ok, "cores": os.cpu_count()}
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    shown = ", ".join(f"{k} {v:.0f} s" for k, v in phases.items())
    labels = ", ".join(f"{k} {v:.0f}" for k, v in sorted(data["label_test_seconds"].items()))
    print(f"Times: {shown}" + (f"; summed test seconds by label: {labels}" if labels else "") +
          f" ({os.path.relpath(path)})")


# A GoogleTest binary run whole: one ctest test, <ch>.<program>.gtest (.gtest.<binary> for a
# program's second binary), whose cases are in the report it wrote (cmake/CudaExamples.cmake).
GTEST_BINARY = re.compile(r"\.gtest(\.[\w+-]+)?$")


def whole_binary(name):
    """Whether a ctest test is a GoogleTest binary run whole (not a sanitizer's run of one)."""
    return bool(GTEST_BINARY.search(name)) and ".sanitize." not in name


def _case(name, status, failure=None, skipped=None, output="", time="0"):
    case = ET.Element("testcase", name=name, status=status, time=time or "0")
    if failure is not None:
        ET.SubElement(case, "failure", message=failure)
    if skipped is not None:
        ET.SubElement(case, "skipped", message=skipped)
    ET.SubElement(case, "system-out").text = output
    return case


def gtest_cases(case, folder):
    """The cases of a GoogleTest binary's test, each as a ctest testcase named
    <ch>.<program>.<Suite>.<Test>, from FOLDER/gtest/<test>.xml (GoogleTest's XML report).
    tests/gtest_main.cpp removes the report before the first case runs, so a binary that exited
    0 or 77 wrote the one read here. One that failed may have died before writing it (an older
    report may be there): it counts as failed whatever the report says, and without a failed
    case in the report it is listed itself."""
    name = case.get("name", "?")
    prefix = name[:GTEST_BINARY.search(name).start()]
    skip = case.find("skipped")
    if skip is not None and skip.get("message", "") == "Unable to find executable":
        return [case]
    failed = (case.find("failure") is not None or case.find("error") is not None
              or case.get("status") == "fail")
    report = os.path.join(folder, "gtest", name + ".xml")
    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError) as e:
        if skip is not None:
            return [case]
        why = "no readable report" if not failed else "it failed, and left no readable report"
        return [_case(f"{name} ({why}: {e})", "fail", failure=why,
                      output=(case.findtext("system-out") or ""))]
    out = []
    for suite in root.iter("testsuite"):
        for test in suite.iter("testcase"):
            full = f"{prefix}.{suite.get('name')}.{test.get('name')}"
            failure = test.find("failure")
            skipped = test.find("skipped")
            took = test.get("time", "0")
            if failure is not None:
                out.append(_case(full, "fail", failure=failure.get("message", "")[:500],
                                 output=failure.text or "", time=took))
            elif skipped is not None or test.get("result") == "skipped":
                # "tests/gpu_test.h:22\nno CUDA device: ..." -> "no CUDA device: ..."
                lines = (skipped.get("message", "") if skipped is not None else "").splitlines()
                if lines and re.match(r"^\S+:\d+$", lines[0]):
                    lines = lines[1:]
                reason = " ".join(line.strip() for line in lines if line.strip()) or "skipped"
                out.append(_case(full, "notrun", skipped=reason, output=reason, time=took))
            elif test.get("status", "run") == "run" and test.get("result", "completed") == "completed":
                out.append(_case(full, "run", time=took))
    if failed and not any(c.get("status") == "fail" for c in out):
        out.append(_case(f"{name} (failed: no failed case in its report)", "fail",
                         failure="exit status", output=(case.findtext("system-out") or "")))
    if not out and not failed:
        out.append(_case(f"{name} (its report lists no case)", "fail", failure="no case"))
    return out


def expand_junit(path):
    """Rewrites a JUnit file of ctest's with each GoogleTest binary's test replaced by its cases
    (gtest_cases), so that a CI's JUnit reporter names a failed case, not its binary; the
    suite's counts follow. Returns whether it changed anything."""
    tree = ET.parse(path)
    suite = tree.getroot()
    folder, changed = os.path.dirname(os.path.abspath(path)), False
    for case in list(suite.findall("testcase")):
        name = case.get("name", "?")
        if not whole_binary(name):
            continue
        cases = gtest_cases(case, folder)
        if cases == [case]:
            continue
        at = list(suite).index(case)
        suite.remove(case)
        for i, c in enumerate(cases):
            c.set("classname", c.get("name"))
            suite.insert(at + i, c)
        changed = True
    if changed:
        every = suite.findall("testcase")
        suite.set("tests", str(len(every)))
        suite.set("failures", str(sum(c.get("status") == "fail" for c in every)))
        suite.set("skipped", str(sum(c.find("skipped") is not None for c in every)))
        tree.write(path, encoding="UTF-8", xml_declaration=True)
    return changed


def summarise(path, gated=False, also=()):
    # A test in several files (a fixture both passes ran) counts once, as it ran last.
    cases = {}
    for one in [path, *also]:
        folder = os.path.dirname(os.path.abspath(one))
        for case in ET.parse(one).getroot().iter("testcase"):
            name = case.get("name", "?")
            each = [case]
            if whole_binary(name):
                each = gtest_cases(case, folder)
            for c in each:
                cases.pop(c.get("name", "?"), None)
                cases[c.get("name", "?")] = c
    cases = cases.values()
    passed, failed, skipped = [], [], {}
    details, titles = {}, {}
    for case in cases:
        name = case.get("name", "?")
        status = case.get("status", "")
        skip = case.find("skipped")
        message = skip.get("message", "") if skip is not None else ""
        if message == "Unable to find executable" or message.startswith("Fixture"):
            failed.append(f"{name} (not run: {message.lower()})")  # ctest counts these as failed
        elif skip is not None:
            title, detail, hint = group(skip_reason(case))
            # Reasons that differ only in their numbers are one group, shown by its first.
            key = (re.sub(r"\d+", "N", title), hint)
            titles.setdefault(key, title)
            skipped.setdefault(key, []).append(name)
            if detail:
                details.setdefault(key, set()).add(detail)
        elif case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed.append(name)
        else:
            passed.append(name)
    shown = os.path.relpath(path)
    shown = path if shown.startswith("..") else shown
    total = len(passed) + len(failed) + sum(len(v) for v in skipped.values())
    print(f"\nSummary: {total} tests, {len(passed)} passed, {len(failed)} failed, "
          f"{total - len(passed) - len(failed)} skipped ({shown})")
    if skipped:
        print("Skipped, by reason:")
        width = len(str(max(len(v) for v in skipped.values())))
        for (key, hint), names in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
            title = titles[(key, hint)]
            print(f"  {len(names):>{width}}  {title} ({kinds(names)})")
            pad = " " * (width + 4)
            for detail in sorted(details.get((key, hint), ())):
                print(textwrap.fill(f"{pad}the driver says: {detail}", 100,
                                    subsequent_indent=pad + " " * 17, break_long_words=False))
            shown = names[:1]  # as many names as fit in 100 columns, at most EXAMPLES
            for name in names[1:EXAMPLES]:
                if len(pad) + len(", ".join(shown + [name])) + 20 > 100:
                    break
                shown.append(name)
            more = f", and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
            print(f"{pad}e.g. {', '.join(shown)}{more}")
            if hint:
                print(f"{pad}to run them: " + hint.replace("\n", "\n" + pad + " " * 13))
    if failed:
        more = f", and {len(failed) - 10} more" if len(failed) > 10 else ""
        print(f"FAILED: {', '.join(failed[:10])}{more}")
    if not gated and any(titles[k] == "no usable CUDA device" for k in skipped):
        # Where a reader without a GPU stops: what to do instead (the tour ends the same way).
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from tour import no_gpu_advice
        print(no_gpu_advice())
    counts = {"tests": total, "passed": len(passed), "failed": len(failed),
              "skipped": total - len(passed) - len(failed)}
    if not gated:
        return counts, True
    allowed = sorted(n for k, names in skipped.items() if MULTI_GPU.search(titles[k]) for n in names)
    refused = sorted(n for k, names in skipped.items() if not MULTI_GPU.search(titles[k]) for n in names)
    if allowed:
        print(f"Skipped because they need more GPUs than this machine has ({len(allowed)}, allowed "
              f"on a GPU runner):\n  " + "\n  ".join(allowed))
    if refused:
        print(f"FAILED: CUDA_EXAMPLES_REQUIRE_GPU is set, and {len(refused)} tests were skipped for "
              f"another reason (only tests needing more GPUs may skip on a GPU runner):\n  " +
              "\n  ".join(refused))
        return counts, False
    print("No silent skips: every skip needs more GPUs than this machine has.")
    return counts, True


# The tests scripts/test.sh keeps out of its side-by-side pass: each reads a timing, which means
# something only when the GPU is not shared with a dozen other tests. lesson: the lesson runs, and
# the planted bugs that break a lesson or print an impossible rate, one at a time. (The lab
# self-tests time submissions too, but their speed gates are built for a shared GPU: they run in
# the side-by-side pass.)
SECOND_PASS_LABELS = "^lesson$"


def second_pass_regex(where):
    """"^(a|b|...)$" matching exactly the tests labelled lesson (where: ctest's --preset P
    or --test-dir D arguments); "" when there are none. Each name is escaped for ctest's regex."""
    listed = subprocess.run(["ctest", *where, "-N", "-L", SECOND_PASS_LABELS, "--show-only=json-v1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True,
                            cwd=ROOT).stdout
    names = [t["name"] for t in json.loads(listed).get("tests", [])]
    escape = lambda n: "".join("\\" + c if c in ".^$*+?()[]{}|\\" else c for c in n)  # noqa: E731
    return f"^({'|'.join(escape(n) for n in names)})$" if names else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("junit", nargs="?", help="a JUnit file written by ctest --output-junit")
    parser.add_argument("--preset", help="read the JUnit file this test preset writes")
    parser.add_argument("--where", action="store_true", help="only print the JUnit file's path")
    parser.add_argument("--second-pass-regex", action="store_true",
                        help="only print a regex of the names of the tests labelled lesson "
                             "(for ctest -E)")
    parser.add_argument("--test-dir", help="(--second-pass-regex) a build folder instead of --preset")
    parser.add_argument("--also", action="append", default=[], metavar="JUNIT",
                        help="another JUnit file of the same run (a second ctest pass), if it exists")
    parser.add_argument("--expand", action="store_true",
                        help="first rewrite the JUnit files with each GoogleTest binary's test "
                             "replaced by its cases (a CI's JUnit reporter then names them)")
    parser.add_argument("--ctest-log", help="ctest's output (for its Label Time Summary)")
    parser.add_argument("--times", help="write the steps' times and the counts to this JSON file")
    parser.add_argument("--phase", action="append", default=[], metavar="NAME=START:END",
                        help="a step's wall-clock start and end (seconds since the epoch); "
                             "a name given twice adds up")
    opts = parser.parse_args()
    if opts.second_pass_regex:
        print(second_pass_regex(["--test-dir", opts.test_dir] if opts.test_dir else ["--preset", opts.preset]))
        return 0
    if bool(opts.junit) == bool(opts.preset):
        parser.error("give a JUnit file or --preset NAME (one of them)")
    path = opts.junit or preset_junit(opts.preset)
    if opts.where:
        print(path)
        return 0
    if not os.path.exists(path):
        print(f"test_summary: {path} does not exist (did ctest run to the end?)", file=sys.stderr)
        return 2
    env = preset_environment(opts.preset) if opts.preset else {}
    gated = any(v.get("CUDA_EXAMPLES_REQUIRE_GPU", "0") not in ("", "0")
                for v in (os.environ, env))
    try:
        also = [p for p in opts.also if os.path.exists(p)]
        if opts.expand:
            for one in [path, *also]:
                expand_junit(one)
        counts, ok = summarise(path, gated, also)
    except ET.ParseError as e:
        print(f"test_summary: {path} is not a readable JUnit file: {e}", file=sys.stderr)
        return 2
    if opts.times:
        phases = {}
        for item in opts.phase:
            name, _, span = item.partition("=")
            start, _, end = span.partition(":")
            # A phase named twice (scripts/test.sh --pass lesson: both commands') is their sum.
            phases[name] = round(phases.get(name, 0) + float(end) - float(start), 1)
        log = open(opts.ctest_log, errors="replace").read() if opts.ctest_log else ""
        write_times(opts.times, phases, log, counts, gated, ok, opts.preset)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
